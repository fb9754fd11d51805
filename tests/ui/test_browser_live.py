"""Real browser on the Live debate page: Debian's Chromium, Playwright, `streamlit run app.py`.

On the embedded model: Pause & ask mid-turn, the answer while paused, a source file injected as evidence while
paused (an unreadable one refused by name first), Resume from the saved speech, and the file delivered to both
advocates and quoted. The rest of a debate's 21 turns is what tests/live/test_e2e_live.py runs on the embedded
model (about four minutes), so here a whole six-phase debate runs to its end on bench/latency_server.py on
127.0.0.1 (OpenAI-compatible wire, a fixed pace, chosen in the sidebar as a user would): the finished page, the
controls on a phone, and the Timeline.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import browser_kit
import pytest
from helpers import free_port

from bench.latency_server import start
from clearside.live.exchange import load_live
from clearside.store import Store

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

ARTIFACTS = browser_kit.ARTIFACTS
QUESTION = "Should cities ban private cars downtown? <script>window.__pwned = 1</script>"
ASK = "What is the single strongest reason for your side?"
DELIVERY_MINUTES = 10  # from Resume to the evidence reaching both advocates: about one on an idle 2-core machine
RETRIES = 2  # a tiny model may still break a turn's schema after its re-asks; a user would press Retry


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("clearside-data")


@pytest.fixture(scope="module")
def model_server():
    with start(0, ttft=0.05, tps=400) as paced:
        yield paced


@pytest.fixture(scope="module")
def server(data, model_server):
    yield from browser_kit.streamlit_server({
        "CLEARSIDE_DATA": str(data), "CLEARSIDE_SEED": "20", "CLEARSIDE_THREADS": "2",
        "OPENAI_BASE_URL": model_server.base_url, "OPENAI_API_KEY": "x",
        "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}"})


@pytest.fixture(scope="module")
def browser():
    yield from browser_kit.chromium(playwright)


def saved(data: Path, debate_id: str) -> dict:
    """A live debate the dashboard saved, read from its store as another process would."""
    store = Store(f"sqlite:///{data / 'clearside.db'}")
    try:
        return load_live(store, debate_id).model_dump(mode="json")
    finally:
        store.close()


def start_live(page, question: str, pace: str) -> str:
    """Type the question and the pace on the Live page and press Start; the new debate's id (from the URL)."""
    page.get_by_role("textbox", name="Question or claim").fill(question)
    field = page.get_by_role("spinbutton", name="Pace (words per minute)")
    field.fill(pace)
    field.press("Enter")
    playwright.expect(field).to_have_value(pace)
    page.get_by_role("button", name="Start live debate").click()
    playwright.expect(page).to_have_url(re.compile(r"[?&]live=[0-9a-f]{32}"), timeout=30_000)
    return re.search(r"[?&]live=([0-9a-f]{32})", page.url).group(1)


def press_retry_until(page, done, data: Path, debate_id: str, minutes: float, what: str) -> int:
    """Wait until ``done()``, pressing Retry as a user would when the tiny model broke a turn (at most RETRIES
    times); how many times it was pressed."""
    retry = page.get_by_role("button", name="Retry")
    retries, deadline = 0, time.monotonic() + minutes * 60
    while not done():
        assert time.monotonic() < deadline, f"not {what} after {minutes} min: {saved(data, debate_id)['cursor']}/21"
        if retry.is_visible():
            retries += 1
            assert retries <= RETRIES, "failed again after retrying: " + saved(data, debate_id)["error"]
            print(f"retry {retries} after: {saved(data, debate_id)['error']}")
            retry.click()
        page.wait_for_timeout(2_000)
    return retries


REPORT = (b"# Transit report\n\nThe 2024 city survey of 3,000 commuters found that 41% would drive less if parking "
          b"cost more. <img src=x onerror=\"window.__pwned = 2\"> Bus ridership rose by 12% in the year after "
          b"the downtown lanes opened.\n\nShop owners on the pedestrian streets reported turnover 8% higher than the "
          b"year before.")


@pytest.mark.model
def test_live_debate_pause_ask_evidence_and_resume_on_the_embedded_model_in_a_real_browser(
        server, browser, data, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    expect = playwright.expect
    page.goto(f"{server}/live")
    expect(page.get_by_text("Six phases, 21 timed turns", exact=False)).to_be_visible(timeout=30_000)
    debate_id = start_live(page, QUESTION, "30")

    # a turn is streaming: some words of speech before the cursor
    speaking = page.get_by_test_id("stMarkdownContainer").filter(has_text=re.compile(r"[A-Za-z]{3,}.{10,}▌"))
    expect(speaking.first).to_be_visible(timeout=300_000)
    page.screenshot(path=str(ARTIFACTS / "live-streaming-1440.png"), full_page=True)

    page.get_by_role("textbox", name="Your question").first.fill(ASK)
    page.get_by_role("button", name="Pause & ask").click()
    expect(page.get_by_role("button", name="Resume", exact=True)).to_be_enabled(timeout=60_000)
    expect(page.get_by_text(" answered:", exact=False).first).to_be_visible(timeout=300_000)
    expect(page.get_by_text(ASK).first).to_be_visible()
    transcript = saved(data, debate_id)
    asked = transcript["interventions"]
    listed = [(i["type"], i["status"], i.get("text")) for i in asked]
    assert len(asked) == 1, f"one Pause & ask, one intervention: {listed}"
    [item] = asked
    assert item["type"] == "pause_question" and item["status"] == "answered" and item["response"]
    assert transcript["state"] == "paused", "the saved debate says it is paused"
    paused_turns = len(transcript["turns"])
    # the turn in flight was halted and its speech kept; or the click came as a turn ended (short turns at this
    # pace): nothing was halted and Resume starts the next turn (the halt itself: tests/live/test_runtime_live.py)
    halted = transcript["partial"] or {"speech": "", "step": transcript["cursor"]}
    kept, paused_step = halted["speech"], halted["step"]
    print(f"paused in {paused_step + 1}/21 with {len(kept)} characters of speech kept; answer: {item['response']!r}")
    page.screenshot(path=str(ARTIFACTS / "live-paused-1440.png"), full_page=True)

    # while paused, evidence as a file: an unreadable one is refused by name and queues nothing, then a report
    page.get_by_role("tab", name="Evidence").click()
    upload = page.locator("[data-testid='stFileUploader'] input[type='file']")
    (tmp_path / "scan.txt").write_bytes(bytes(range(32)) * 20)
    upload.set_input_files(str(tmp_path / "scan.txt"))
    page.get_by_role("button", name="Inject evidence").click()
    expect(page.get_by_text("scan.txt is not readable text", exact=False)).to_be_visible(timeout=30_000)
    assert len(saved(data, debate_id)["interventions"]) == 1, "a refused file queues nothing"
    (tmp_path / "transit.md").write_bytes(REPORT)
    upload.set_input_files(str(tmp_path / "transit.md"))
    # the new file clears the refusal (a rerun that moves the button up): click once the page has settled
    expect(page.get_by_text("scan.txt is not readable text", exact=False)).to_be_hidden(timeout=30_000)
    expect(page.get_by_role("button", name="Remove transit.md")).to_be_visible(timeout=30_000)
    page.get_by_role("button", name="Inject evidence").click()
    expect(page.get_by_text("File: transit.md (S1; markdown", exact=False)).to_be_visible(timeout=30_000)
    evidence = saved(data, debate_id)["interventions"][1]
    assert evidence["type"] == "inject_evidence" and evidence["source"]["name"] == "transit.md"
    assert evidence["text"] == "The attached file transit.md" and "window.__pwned = 2" in evidence["source"]["text"]

    # Resume: the paused turn runs again from its saved speech, then the file reaches both advocates
    page.get_by_role("button", name="Resume", exact=True).click()
    retries = press_retry_until(page, lambda: saved(data, debate_id)["interventions"][1]["status"] == "delivered",
                                data, debate_id, DELIVERY_MINUTES, "delivered to both advocates")
    transcript = saved(data, debate_id)
    assert len(transcript["turns"]) > paused_turns
    resumed = transcript["turns"][paused_turns]
    assert resumed["step"] == paused_step, "Resume runs the turn that was paused"
    assert resumed["text"].startswith(kept) and resumed["paused_at"] == (len(kept) or None), (
        "the resumed speech continues the text saved at the pause")
    evidence = transcript["interventions"][1]
    quoted = [transcript["turns"][n - 1]["fields"].get("evidence_quote") for n in evidence["delivered_to"]]
    assert quoted, evidence
    print(f"evidence delivered in turns {evidence['delivered_to']}: quotes {quoted}; flags "
          f"{[transcript['turns'][n - 1]['flags'] for n in evidence['delivered_to']]}")
    assert any(quoted), "no turn that acknowledged the file kept a verified quote of it"
    print(f"resumed turn {resumed['turn']} ({resumed['label']}); notes: {resumed['notes']}; retries: {retries}")
    expect(page.get_by_text("Quotes your source", exact=False).first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("<script>window.__pwned = 1</script>", exact=False).first).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "live-evidence-1440.png"), full_page=True)
    assert page.evaluate("window.__pwned") is None, "user text must never execute"
    assert dialogs == []
    page.close()


def test_a_live_debate_runs_to_its_end_in_a_real_browser_and_opens_in_the_timeline(server, browser, data,
                                                                                     model_server):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    expect = playwright.expect
    page.goto(f"{server}/live")
    expect(page.get_by_text("Six phases, 21 timed turns", exact=False)).to_be_visible(timeout=30_000)
    sidebar = page.get_by_test_id("stSidebar")
    browser_kit.choose(page, sidebar.get_by_role("combobox", name="Provider"), "OpenAI-compatible")
    expect(sidebar.get_by_role("combobox", name="Model")).to_be_visible(timeout=30_000)  # the server's models
    debate_id = start_live(page, QUESTION, "150")
    expect(page.get_by_text("The live debate is finished", exact=False)).to_be_visible(timeout=300_000)

    transcript = saved(data, debate_id)
    planned = [t for t in transcript["turns"] if t["step"] is not None]
    assert transcript["state"] == "done" and len(planned) == 21 and transcript["document"] is not None
    assert transcript["provider"].startswith("openai") and model_server.stats()["requests"] >= 1 + len(planned), (
        "the debate ran on the model server the sidebar chose")
    expect(page.get_by_text(f"All {len(transcript['turns'])} turns done")).to_be_visible()
    expect(page.get_by_text("Moderator synthesis").first).to_be_visible()
    expect(page.get_by_text("<script>window.__pwned = 1</script>", exact=False).first).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "live-done-1440.png"), full_page=True)

    # on a phone the controls stack above the 21-turn transcript, so they stay in the first screen
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    phone.goto(f"{server}/live?live={debate_id}")
    control = phone.get_by_role("link", name="Open in Timeline")
    expect(control).to_be_visible(timeout=30_000)
    box = control.bounding_box()
    assert box and box["y"] + box["height"] <= 844, f"the controls start {box} down the page at 390x844"
    phone.screenshot(path=str(ARTIFACTS / "live-done-390.png"))
    phone.close()

    page.get_by_role("link", name="Open in Timeline").click()
    expect(page.get_by_text("Replay a saved live debate", exact=False)).to_be_visible(timeout=30_000)
    expect(page).to_have_url(re.compile(rf"/timeline\?debate={debate_id}"))
    page.get_by_role("radio", name="Rebuttals").click()
    expect(page.get_by_text("Con rebuts Pro").first).to_be_visible(timeout=10_000)
    page.screenshot(path=str(ARTIFACTS / "timeline-1440.png"), full_page=True)

    assert page.evaluate("window.__pwned") is None, "user text must never execute"
    assert dialogs == []
    page.close()
