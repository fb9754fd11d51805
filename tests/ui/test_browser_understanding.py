"""Real browser: the understanding check end to end in Debian's Chromium against `streamlit run app.py` on
bench/latency_server.py (an OpenAI-compatible server answering the flagship debate, no model of its own): the
switch turned on, the "before" answer, the debate, the "after" answer and its counts, the Understanding page with n
and the CSV, the re-test link answered, the results updated."""

from __future__ import annotations

import csv
import re
import tempfile
from pathlib import Path

import browser_kit
import pytest

from clearside.quality import understanding
from clearside.quality.references import flagship
from clearside.store import Store

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

LAWS = "Laws cannot keep up with how fast AI is moving"


@pytest.fixture(scope="module")
def data():
    return Path(tempfile.mkdtemp(prefix="clearside-understanding-"))


@pytest.fixture(scope="module")
def server(data):
    yield from browser_kit.latency_dashboard(data)


@pytest.fixture(scope="module")
def browser():
    yield from browser_kit.chromium(playwright)


def csv_rows(page, tmp_path: Path, name: str) -> list[dict]:
    with page.expect_download() as download:
        page.get_by_role("button", name="Download CSV").click()
    path = tmp_path / name
    download.value.save_as(path)
    return list(csv.DictReader(path.open(encoding="utf-8")))


def test_switch_before_debate_after_results_csv_and_retest(server, browser, data, tmp_path):
    expect = playwright.expect
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(server)
    expect(page.get_by_text("Think both sides. Decide with clarity.")).to_be_visible(timeout=30_000)
    sidebar = page.get_by_test_id("stSidebar")
    browser_kit.choose(page, sidebar.get_by_role("combobox", name="Provider"), "OpenAI-compatible")
    assert page.get_by_role("textbox", name="Reasons FOR you know").count() == 0, "off by default"
    sidebar.get_by_text("Understanding check").click()

    page.get_by_role("textbox", name="Reasons FOR you know").fill(LAWS)
    page.get_by_role("textbox", name="Question or claim").fill(flagship().proposition)
    page.get_by_role("button", name="Generate Pro & Con Debate").click()
    expect(page.get_by_text("MODERATOR SYNTHESIS")).to_be_visible(timeout=300_000)
    debate_id = re.search(r"debate=([0-9a-f]{32})", page.url)[1]

    after = page.get_by_role("textbox", name="Reasons FOR you know")
    after.fill(f"{LAWS}\nA few firms get the benefits of large AI data centers")
    page.get_by_role("textbox", name="Reasons AGAINST you know").fill(
        "<script>window.__pwned = 1</script> pausing helps foreign competitors")
    page.get_by_role("button", name="Save my answer").click()
    expect(page.get_by_text("Reasons you named for:", exact=False)).to_be_visible(timeout=60_000)
    store = Store(f"sqlite:///{data / 'clearside.db'}")
    try:
        expected = understanding.summary(store, debate_id)
        assert [s for s in expected["stages"]] == ["before", "after"]
        assert expected["stages"]["before"]["named_for"] == 1
        expect(page.get_by_text(expected["sentence"])).to_be_visible()
        page.screenshot(path=str(browser_kit.ARTIFACTS / "understanding-after.png"), full_page=True)

        page.get_by_role("link", name="Re-test later: answer again in a few days").click()
        expect(page.get_by_role("heading", name="Re-test", exact=True)).to_be_visible(timeout=30_000)
        expect(page.get_by_text("1 debate answered, 2 answers.")).to_be_visible()
        assert [r["stage"] for r in csv_rows(page, tmp_path, "before.csv")] == ["before", "after"]

        page.get_by_role("textbox", name="Reasons FOR you know").fill(LAWS)
        page.get_by_role("button", name="Save my re-test").click()
        expect(page.get_by_text("Saved. Your answers so far:")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("1 debate answered, 3 answers.")).to_be_visible()
        rows = csv_rows(page, tmp_path, "after.csv")
        assert [r["stage"] for r in rows] == ["before", "after", "retest"]
        assert rows[2]["named_for"] == "1" and rows[2]["reasons_for"] == LAWS
        retest = understanding.gains(store)["comparisons"]["retest-before"]["named_for"]
        assert (retest["n"], retest["mean"]) == (1, 0.0)
    finally:
        store.close()
    assert page.evaluate("window.__pwned") is None
    page.screenshot(path=str(browser_kit.ARTIFACTS / "understanding-page.png"), full_page=True)
    page.close()
