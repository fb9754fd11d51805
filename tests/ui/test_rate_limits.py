"""Rate limits and exposure (docs/design/requirements.md#nfr-400): the per-session limiter (clearside/rate.py) on an
injected clock; challenges past the limit on the Debate page (AppTest, the scripted provider); comparisons started past
the limit in Chromium on scripted models; and the dashboard's safe defaults as ``python -m clearside ui`` starts it:
bound to 127.0.0.1 unless told otherwise, TLS from Streamlit's own settings with a throwaway certificate, and a page
error shown without its details.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import browser_kit
import pytest
from helpers import challenge_reply, free_port, moderator_reply, orchestrator_reply, script_file, side_reply

from clearside.errors import ConfigError
from clearside_ui import rate
from clearside_ui.rate import RateLimited, SessionLimits, SlidingWindow

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "microservices.json"
QUESTION = "Should we adopt microservices?"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# -- the limiter -----------------------------------------------------------------------------------------------------


def test_a_window_allows_its_limit_then_says_when_the_oldest_leaves_it():
    clock = Clock()
    window = SlidingWindow("Debate starts", 3, clock=clock)
    for step in (0.0, 10.0, 20.0):
        clock.now += step
        window.take()
    clock.now += 17.8  # 47.8 s after the first start
    with pytest.raises(RateLimited) as refused:
        window.take()
    assert refused.value.retry_after == pytest.approx(12.2)
    assert str(refused.value) == ("Debate starts are limited to 3 a minute in each dashboard session. "
                                  "Try again in 13 s; what you typed is kept.")
    assert window.wait() == pytest.approx(12.2)
    clock.now += 12.2  # the first start leaves the window: one more is allowed, and only one
    assert window.wait() == 0
    window.take()
    with pytest.raises(RateLimited, match="Try again in 10 s"):
        window.take()  # the second start (at +10 s) is the oldest now


def test_a_refusal_counts_nothing_and_a_wait_under_a_second_still_says_1_s():
    clock = Clock()
    window = SlidingWindow("Challenges", 1, clock=clock)
    window.take()
    clock.now += 59.6
    for _ in range(5):  # hammering does not push the time back
        with pytest.raises(RateLimited, match="Try again in 1 s"):
            window.take()
    clock.now += 0.4
    window.take()


def test_a_start_that_fails_gives_its_place_back_and_one_that_runs_keeps_it():
    clock = Clock()
    window = SlidingWindow("Debate starts", 2, clock=clock)
    with pytest.raises(ConfigError), window.slot():
        raise ConfigError("the model cannot be reached")
    with window.slot():
        pass
    clock.now += 1
    with window.slot():
        pass
    with pytest.raises(RateLimited), window.slot():
        pytest.fail("the body of a refused slot never runs")


def test_a_limit_of_0_is_no_limit():
    window = SlidingWindow("Debate starts", 0, clock=Clock())
    for _ in range(1000):
        window.take()
    assert window.wait() == 0


def test_the_limits_come_from_the_environment_with_defaults_and_a_clear_message_when_malformed():
    limits = SessionLimits.from_env({})
    assert (limits.starts.limit, limits.challenges.limit) == (rate.DEFAULT_STARTS, rate.DEFAULT_CHALLENGES) == (10, 30)
    limits = SessionLimits.from_env({rate.STARTS_ENV: " 3 ", rate.CHALLENGES_ENV: "0"})
    assert (limits.starts.limit, limits.challenges.limit) == (3, 0)
    for bad in ("-1", "ten", "2.5"):
        with pytest.raises(ConfigError, match=rf"CLEARSIDE_DEBATE_STARTS_PER_MINUTE must be a whole number of 0 or "
                                              rf"more .* not '{bad}': set for example "
                                              r"CLEARSIDE_DEBATE_STARTS_PER_MINUTE=10"):
            SessionLimits.from_env({rate.STARTS_ENV: bad})


def test_each_session_keeps_its_own_limits(monkeypatch):
    monkeypatch.setenv(rate.STARTS_ENV, "1")
    one, other = {}, {}
    with rate.debate_start(one):
        pass
    with pytest.raises(RateLimited):
        rate.debate_start(one).__enter__()
    with rate.debate_start(other):  # another tab, another browser: a session of its own
        pass
    assert rate.session_limits(one) is rate.session_limits(one) is not rate.session_limits(other)
    with rate.challenge(one):  # challenges are counted apart from starts
        pass


# -- challenges past the limit on the Debate page (AppTest) ----------------------------------------------------------


def test_a_challenge_past_the_limit_is_refused_with_when_to_try_again_and_the_choice_stays(monkeypatch):
    from streamlit.testing.v1 import AppTest

    from clearside.modes import import_data
    from clearside.providers.scripted import ScriptedProvider
    from clearside.store import open_store

    monkeypatch.setenv(rate.CHALLENGES_ENV, "1")
    document = json.loads(FIXTURE.read_text(encoding="utf-8"))
    debate_id = import_data(open_store(), document).id
    target = document["pro"]["assumptions"][0]
    provider = ScriptedProvider()
    provider.enqueue(challenge_reply("uncertain"), challenge_reply("uncertain"), agent="challenge")
    at = AppTest.from_file(str(browser_kit.ROOT / "app.py"), default_timeout=30)
    at.session_state["provider_override"] = provider
    at.session_state["app_owned"] = {debate_id}  # this session made it: the challenge panel is shown
    at.query_params["debate"] = debate_id
    at.run()
    at.selectbox(key="challenge_choice").set_value(target).run()
    first = time.monotonic()
    at.button(key="challenge_question_assumption").click().run()
    deadline = time.monotonic() + 30
    while not any(e.label.startswith("Challenge ·") for e in at.expander):
        assert time.monotonic() < deadline, [e.value for e in at.error]
        time.sleep(0.1)
        at.run()
    at.button(key="challenge_evidence_that_changes_outcome").click().run()
    [refusal] = [e.value.replace("\\", "") for e in at.error if "Challenges are limited" in e.value]
    assert "Challenges are limited to 1 a minute in each dashboard session. Try again in " in refusal
    seconds = int(refusal.split("Try again in ")[1].split(" s")[0])
    assert 60 - (time.monotonic() - first) <= seconds <= 60, "the first challenge leaves the minute then"
    assert len(provider.requests_for("challenge")) == 1, "the refused challenge never reached the model"
    assert at.selectbox(key="challenge_choice").value == target, "the chosen element stays chosen"


# -- in Chromium: comparisons on scripted models, past a low limit ---------------------------------------------------


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    """The dashboard's URL and its data folder: at most 2 debate starts a minute per session."""
    data = tmp_path_factory.mktemp("rate-limited")
    for url in browser_kit.streamlit_server({rate.STARTS_ENV: "2", "CLEARSIDE_SEMANTIC_CHECKS": "0",
                                             "CLEARSIDE_DATA": str(data)}):
        yield url, data


@pytest.fixture(scope="module")
def browser():
    yield from browser_kit.chromium(pytest.importorskip("playwright.sync_api"))


def scripted_model(tmp_path: Path, name: str) -> str:
    """A ``scripted:FILE`` spec that answers one debate."""
    return script_file(tmp_path, f"{name}.json", orchestrator=[orchestrator_reply()], pro=[side_reply("pro")],
                       con=[side_reply("con")], moderator=[moderator_reply()])


def settled(page) -> None:
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=30_000)


@pytest.mark.browser
def test_a_third_comparison_in_a_minute_is_refused_with_the_seconds_and_the_question_stays(dashboard, browser,
                                                                                           tmp_path):
    from playwright.sync_api import expect

    from clearside.quality import compare
    from clearside.quality.batch import batches
    from clearside.store import Store

    dashboard, data = dashboard
    models = [scripted_model(tmp_path, "first"), scripted_model(tmp_path, "second")]
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{dashboard}/compare")
    question = page.get_by_role("textbox", name="Question or claim")
    expect(question).to_be_visible(timeout=30_000)
    question.fill(QUESTION)
    question.press("Control+Enter")
    for number, spec in enumerate(models, 1):
        field = page.get_by_role("textbox", name=f"Model {number}")
        field.fill(spec)
        field.press("Enter")
        settled(page)
    start = page.get_by_role("button", name="Compare", exact=True)
    new = page.get_by_role("button", name="New comparison")
    first = time.monotonic()
    for _ in range(2):
        start.click()
        expect(page).to_have_url(re.compile("compare="), timeout=30_000)
        new.click()
        expect(page).not_to_have_url(re.compile("compare="), timeout=30_000)
    start.click()
    refusal = page.get_by_text("Debate starts are limited to 2 a minute in each dashboard session", exact=False)
    expect(refusal).to_be_visible(timeout=30_000)
    seconds = int(refusal.inner_text().split("Try again in ")[1].split(" s")[0])
    assert 60 - (time.monotonic() - first) <= seconds <= 60, "the first comparison leaves the minute then"
    assert "compare=" not in page.url, "the third comparison did not start"
    expect(question).to_have_value(QUESTION)
    expect(page.get_by_role("textbox", name="Model 2")).to_have_value(models[1])
    browser_kit.ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(browser_kit.ARTIFACTS / "rate-limited-1440.png"))
    page.close()
    store = Store(f"sqlite:///{data / 'clearside.db'}")
    try:  # the two allowed comparisons run to the end on their scripted models; there is no third
        deadline = time.monotonic() + 60
        while True:
            reports = [compare.load(store, batch.id)[0] for batch in batches(store, compare.SUITE)]
            if len(reports) == 2 and all(report["state"] == "done" for report in reports):
                break
            assert time.monotonic() < deadline, reports
            time.sleep(0.5)
        assert [sorted(r["status"] for r in report["results"].values()) for report in reports] == [["done"] * 2] * 2
    finally:
        store.close()


# -- exposure: python -m clearside ui with the packaged settings ---------------------------------------------------


def start_ui(tmp_path: Path, *flags: str, scheme: str = "http", host: str = "127.0.0.1",
             env: dict[str, str] | None = None) -> tuple[str, subprocess.Popen]:
    """``python -m clearside ui`` on a free port with ``flags``; its URL once /_stcore/health answers "ok"."""
    port = free_port()
    environ = {**{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
               "CLEARSIDE_DATA": str(tmp_path / "data"), **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "clearside", "ui", "--port", str(port), *flags],
                            cwd=browser_kit.ROOT, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)  # stop() signals Streamlit, clearside ui's child, too
    url = f"{scheme}://{host}:{port}"
    unverified = ssl.create_default_context()
    unverified.check_hostname = False
    unverified.verify_mode = ssl.CERT_NONE
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2, context=unverified).read() == b"ok":
                return url, proc
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"clearside ui did not answer at {url}:\n{stop(proc)}")


def stop(proc: subprocess.Popen) -> str:
    """Stop clearside ui and its Streamlit; what they printed."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        return proc.communicate(timeout=15)[0]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"clearside ui did not stop within 15 s of SIGTERM:\n{proc.communicate()[0]}")


def refuses(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def test_clearside_ui_serves_https_with_streamlits_certificate_settings_on_127_0_0_1_only(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: it makes the throwaway certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True, timeout=60)
    url, proc = start_ui(tmp_path, "--server.sslCertFile", str(cert), "--server.sslKeyFile", str(key),
                         scheme="https")
    try:
        port = int(url.rsplit(":", 1)[1])
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):  # TLS, self-signed
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=5)
        served = ssl.get_server_certificate(("127.0.0.1", port))
        assert served.split() == cert.read_text().split()
        assert refuses("127.0.0.2", port), "bound to 127.0.0.1 alone (the settings' server.address)"
    finally:
        stop(proc)


@pytest.mark.browser
def test_a_store_error_names_its_fix_without_details_and_server_address_given_to_clearside_ui_wins(tmp_path,
                                                                                                 browser):
    """A data folder that cannot be created fails every page: the page says what to fix (the message ClearSide
    wrote for it), never the exception's type or a traceback, which go to the server's log."""
    from playwright.sync_api import expect

    (tmp_path / "a-file").write_text("not a folder")
    url, proc = start_ui(tmp_path, "--server.address", "127.0.0.2", host="127.0.0.2",
                         env={"CLEARSIDE_DATA": str(tmp_path / "a-file" / "data")})
    try:
        assert refuses("127.0.0.1", int(url.rsplit(":", 1)[1])), "the given address replaced 127.0.0.1"
        page = browser.new_page()
        page.goto(url)
        expect(page.get_by_role("alert")).to_contain_text("Set CLEARSIDE_DATA to a writable folder", timeout=30_000)
        text = page.locator("body").inner_text()
        for detail in ("StoreError", "Traceback", "clearside/store", 'File "'):
            assert detail not in text, f"{detail!r} reached the page"
        assert page.locator("[data-testid='stException']").count() == 0
        page.close()
    finally:
        log = stop(proc)
    assert "StoreError" in log and "Traceback" in log, "the details went to the server's log"


@pytest.mark.browser
def test_an_unexpected_page_error_shows_no_details(tmp_path, browser):
    """A fault that is not ClearSide's own (a bug) shows Streamlit's generic error and nothing of the exception: its
    type, message and traceback stay in the server's log. The fault is injected into the dashboard's process by
    a sitecustomize module that makes the sidebar raise."""
    from playwright.sync_api import expect

    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import os\n"
        "if os.environ.get('CLEARSIDE_TEST_PAGE_FAULT'):\n"
        "    import clearside_ui.phone as phone\n"
        "    def broken(*args, **kwargs):\n"
        "        raise KeyError('internal detail /srv/secret-path')\n"
        "    phone.close_sidebar_after_navigation = broken\n", encoding="utf-8")
    paths = os.pathsep.join([str(hook), str(browser_kit.ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    url, proc = start_ui(tmp_path, env={"PYTHONPATH": paths, "CLEARSIDE_TEST_PAGE_FAULT": "1"})
    try:
        page = browser.new_page()
        page.goto(url)
        shown = page.locator("[data-testid='stException']")
        expect(shown).to_contain_text("This app has encountered an error", timeout=30_000)
        text = page.locator("body").inner_text()
        for detail in ("KeyError", "Traceback", "secret-path", "sitecustomize", "clearside_ui"):
            assert detail not in text, f"{detail!r} reached the page"
        page.close()
    finally:
        log = stop(proc)
    assert "KeyError" in log and "secret-path" in log, "the details went to the server's log"
