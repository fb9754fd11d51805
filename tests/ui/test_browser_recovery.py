"""Recovery without a click, in Chromium: the dashboard that was generating a debate is killed with SIGKILL part-way,
another dashboard process is started, and the debate finishes there with nobody pressing anything; only the
interrupted step is generated again (the requests the model server saw, per agent, say so). The model is
bench/latency_server.py on 127.0.0.1 (OpenAI-compatible wire, a fixed pace), the store a SQLite file both
dashboards share (tests/test_runtime_workers.py covers PostgreSQL and workers). And a dashboard whose store cannot be
opened says so, naming the fix."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time

import browser_kit
import pytest
import sqlalchemy as sa

from bench.latency_server import MODEL, start
from clearside import runtime
from clearside.live.exchange import load_live
from clearside.quality.references import flagship
from clearside.store import open_store

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser():
    yield from browser_kit.chromium(playwright)


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting until {what}")
        time.sleep(0.1)


def heartbeats(store_url: str) -> list[int]:
    """The process ids of the runtime hosts whose heartbeat rows the store's system database holds."""
    engine = sa.create_engine(runtime.system_url(store_url))
    try:
        with engine.connect() as conn:
            return [row.pid for row in conn.execute(sa.text("SELECT pid FROM clearside_executors"))]
    finally:
        engine.dispose()


def enqueue_flagship(env: dict[str, str]) -> str:
    """Queue the flagship debate on the model server from the command line (``--enqueue``); its id."""
    queued = subprocess.run([sys.executable, "-m", "clearside", "debate", flagship().proposition, "--provider",
                             f"openai:{MODEL}", "--enqueue"], cwd=browser_kit.ROOT, env={**os.environ, **env},
                            capture_output=True, text=True, timeout=120)
    assert queued.returncode == 0, queued.stderr
    return queued.stdout.strip()


def test_a_debate_whose_dashboard_is_killed_finishes_on_the_next_dashboard_unasked(browser, tmp_path):
    url = f"sqlite:///{tmp_path / 'team.db'}"
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(start(0, ttft=0.3, tps=25))  # an advocate streams for several seconds
        env = {"DATABASE_URL": url, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x",
               "CLEARSIDE_HEARTBEAT_SECONDS": "1", "CLEARSIDE_DEAD_AFTER_SECONDS": "4"}
        first, first_proc = browser_kit.start_streamlit(env)
        stack.callback(lambda: first_proc.poll() is None and first_proc.kill())
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        stack.callback(page.close)
        page.goto(first)  # the first page view makes this dashboard a runtime host
        page.get_by_text("Think both sides.").wait_for(timeout=60_000)

        debate_id = enqueue_flagship(env)
        page.goto(f"{first}/?debate={debate_id}")
        wait_until(lambda: server.stats()["agents"].get("pro", 0) >= 1, 90, "the first dashboard asks the pro side")
        time.sleep(1.0)  # the advocates are streaming
        assert open_store(url).sections(debate_id).get("proposition"), "the orchestrator's section is saved"
        assert "moderator" not in server.stats()["agents"]
        first_proc.send_signal(signal.SIGKILL)
        first_proc.wait(10)
        before = dict(server.stats()["agents"])

        second, second_proc = browser_kit.start_streamlit(env)
        stack.callback(browser_kit.stop_streamlit, second_proc)
        page.goto(f"{second}/?debate={debate_id}")  # a link opened on the new dashboard: nothing pressed
        page.get_by_text("MODERATOR SYNTHESIS").wait_for(timeout=150_000)
        assert open_store(url).get(debate_id).status == "done"
        agents = server.stats()["agents"]
        assert agents["orchestrator"] == 1, "the finished orchestrator step is not generated again"
        assert agents["moderator"] == 1
        assert all(agents[side] - before.get(side, 0) <= 1 for side in ("pro", "con")), agents
        assert agents["pro"] + agents["con"] >= 3, "the interrupted advocates step ran again on the second dashboard"


def test_a_dashboard_stopped_while_its_debate_streams_exits_at_once(browser, tmp_path):
    """SIGTERM (a service manager's stop, Ctrl+C's cousin) while the dashboard's runtime streams a debate: the
    process exits with status 0 and does not wait for the debate's threads (the debate would take minutes at
    this pace; the next host takes it over, as the test above shows for SIGKILL)."""
    url = f"sqlite:///{tmp_path / 'team.db'}"
    with start(0, ttft=0.3, tps=4) as server:  # an advocate at this pace streams for a minute
        env = {"DATABASE_URL": url, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        address, proc = browser_kit.start_streamlit(env)
        page = browser.new_page()
        try:
            page.goto(address)  # the first page view makes this dashboard a runtime host
            page.get_by_text("Think both sides.").wait_for(timeout=60_000)
            debate_id = enqueue_flagship(env)
            wait_until(lambda: server.stats()["agents"].get("pro", 0) >= 1, 90, "the dashboard asks the pro side")
            assert proc.pid in heartbeats(url), "the dashboard beats as a runtime host"
            proc.terminate()
            try:
                status = proc.wait(25)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
                pytest.fail("the dashboard waited for its running debate after SIGTERM:\n" + browser_kit.log_tail(proc))
            assert status == 0, browser_kit.log_tail(proc)
            assert "moderator" not in server.stats()["agents"], "the debate was not run to its end first"
            assert open_store(url).get(debate_id).status != "done"
            assert proc.pid not in heartbeats(url), "its heartbeat went with it: the next host takes over at once"
        finally:
            page.close()
            if proc.poll() is None:
                proc.kill()


def test_a_dashboard_stopped_with_a_live_debate_paused_and_a_comparison_cancelled_exits_at_once(browser, tmp_path):
    """SIGTERM while this dashboard hosts a paused live debate (its workflow waits for a message) and a comparison
    cancelled part-way (its debates stopped at a token, their workflows cancelled): the process exits within
    seconds, with status 0, its heartbeat gone, and the paused debate left on the runtime for the next host."""
    expect = playwright.expect
    url = f"sqlite:///{tmp_path / 'team.db'}"
    with start(0, ttft=0.3, tps=4) as server, contextlib.ExitStack() as stack:
        env = {"DATABASE_URL": url, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        address, proc = browser_kit.start_streamlit(env)
        stack.callback(lambda: proc.poll() is None and proc.kill())
        live, comparison = browser.new_page(), browser.new_page()
        stack.callback(live.close)
        stack.callback(comparison.close)
        live.goto(f"{address}/live")
        expect(live.get_by_text("Six phases, 21 timed turns", exact=False)).to_be_visible(timeout=30_000)
        provider = live.get_by_test_id("stSidebar").get_by_role("combobox", name="Provider")
        browser_kit.choose(live, provider, "OpenAI-compatible")
        expect(live.get_by_test_id("stSidebar").get_by_role("combobox", name="Model")).to_be_visible(timeout=30_000)
        live.get_by_role("textbox", name="Question or claim").fill(flagship().proposition)
        live.get_by_role("button", name="Start live debate").click()
        expect(live).to_have_url(re.compile(r"[?&]live=[0-9a-f]{32}"), timeout=30_000)
        wait_until(lambda: server.stats()["agents"], 30, "the live debate asks the model")
        live.get_by_role("button", name="Pause", exact=True).click()
        expect(live.get_by_role("button", name="Resume")).to_be_visible(timeout=30_000)
        debate_id = re.search(r"[?&]live=([0-9a-f]{32})", live.url).group(1)

        comparison.goto(f"{address}/compare")
        question = comparison.get_by_role("textbox", name="Question or claim")
        question.fill(flagship().proposition)
        question.press("Control+Enter")
        for n, temperature in ((1, "0.40"), (2, "0.80")):  # one model at two temperatures
            for field, value in ((f"Model {n}", f"openai:{MODEL}"), (f"Temperature {n}", temperature)):
                box = comparison.get_by_role("spinbutton" if "Temp" in field else "textbox", name=field)
                box.fill(value)
                box.press("Enter")
                expect(box).to_have_value(value)
        asked = sum(server.stats()["agents"].values())
        comparison.get_by_role("button", name="Compare", exact=True).click()
        wait_until(lambda: sum(server.stats()["agents"].values()) >= asked + 2, 30, "both compared debates stream")
        comparison.get_by_role("button", name="Cancel").click()
        expect(comparison.get_by_text("Cancelled", exact=False).first).to_be_visible(timeout=30_000)

        assert proc.pid in heartbeats(url), "the dashboard beats as a runtime host"
        began = time.monotonic()
        proc.terminate()
        try:
            status = proc.wait(10)
        except subprocess.TimeoutExpired:
            pytest.fail("the dashboard was still running 10 s after SIGTERM:\n" + browser_kit.log_tail(proc))
        print(f"exited {time.monotonic() - began:.2f} s after SIGTERM")
        assert status == 0, browser_kit.log_tail(proc)
        assert proc.pid not in heartbeats(url), "its heartbeat went with it: the next host takes over at once"
        store = open_store(url)
        saved = load_live(store, debate_id)
        assert saved.state in ("running", "paused"), "the live debate is saved unfinished and unfailed: resumable"
        assert runtime.state(store.get(debate_id).data["job"], url).status in runtime.UNDER_WAY, (
            "the paused debate's workflow is left on the runtime for the next host")


def test_a_dashboard_whose_store_cannot_be_opened_says_why_and_how_to_fix_it(browser):
    """DATABASE_URL names a PostgreSQL server that is not running: every page says that the store cannot be opened,
    which URL and what to check, instead of Streamlit's generic error (and never a traceback)."""
    from helpers import free_port

    closed = f"postgresql+psycopg://clearside@127.0.0.1:{free_port()}/clearside"
    url, proc = browser_kit.start_streamlit({"DATABASE_URL": closed})
    page = browser.new_page()
    try:
        for path in ("/", "/library"):
            page.goto(url + path)
            alert = page.get_by_role("alert").filter(has_text="Cannot open the debate store")
            alert.wait_for(timeout=60_000)
            shown = alert.inner_text()
            assert "127.0.0.1" in shown and "Check DATABASE_URL" in shown, shown
            body = page.inner_text("body")
            assert "Traceback" not in body and "reload the page" in body, body[:2000]
    finally:
        page.close()
        browser_kit.stop_streamlit(proc)
