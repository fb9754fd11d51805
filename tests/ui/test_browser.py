"""Real browser: Debian's Chromium driven by Playwright against `streamlit run app.py` on the embedded model.

The Retry test switches from an Ollama host where nothing listens to bench/latency_server.py on 127.0.0.1 (an
OpenAI-compatible server with a fixed pace, found running by the sidebar), so it needs no model of its own."""

from __future__ import annotations

import re

import browser_kit
import pytest

from bench.latency_server import MODEL, start
from clearside.quality.references import flagship

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

ARTIFACTS = browser_kit.ARTIFACTS
HOSTILE = ('Should cities ban cars downtown? <script>window.__pwned = 1</script>'
           '<img src=x onerror="window.__pwned = 2">')


CONTRAST_JS = """([text]) => {
  const el = [...document.querySelectorAll('h3 span, h3')].find(e => e.textContent.trim() === text);
  const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const channel = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  const clear = e => /rgba\\(0, 0, 0, 0\\)|transparent/.test(getComputedStyle(e).backgroundColor);
  let bg = el;
  while (bg && clear(bg)) bg = bg.parentElement;
  const fg = lum(rgb(getComputedStyle(el).color));
  const back = lum(rgb(getComputedStyle(bg || document.body).backgroundColor));
  return (Math.max(fg, back) + 0.05) / (Math.min(fg, back) + 0.05);
}"""


@pytest.fixture(scope="module")
def server():
    from helpers import free_port

    # an Ollama host where nothing listens: the Retry test starts on a provider that fails, then retries on the
    # OpenAI-compatible server
    with start(0, ttft=0.05, tps=400) as model_server:
        yield from browser_kit.streamlit_server({"OLLAMA_HOST": f"http://127.0.0.1:{free_port()}",
                                                   "OPENAI_BASE_URL": model_server.base_url, "OPENAI_API_KEY": "x"})


@pytest.fixture(scope="module")
def browser():
    yield from browser_kit.chromium(playwright)


@pytest.mark.model
def test_debate_challenge_and_escaping_in_a_real_browser(server, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1440, "height": 900})  # one browser: its tabs share cookies
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(server)
    expect = playwright.expect
    expect(page.get_by_text("Think both sides. Decide with clarity.")).to_be_visible(timeout=30_000)

    # (a long paste is tested in tests/test_browser_pages.py; the box has no max_chars counter now)
    page.get_by_role("textbox", name="Question or claim").fill(HOSTILE)
    page.get_by_role("button", name="Generate Pro & Con Debate").click()
    expect(page.get_by_text("Analyzing both sides...")).to_be_visible(timeout=10_000)
    expect(page.get_by_text("Analyzing both sides...")).to_be_in_viewport()  # the progress comes into view
    # The tiny model's output can keep failing a substance check; the page then names the checks and offers
    # Retry, which reruns only the agents that did not finish: a user presses it, and so does this test.
    finish_with_retries(page, expect)
    # the debate's own FOR and AGAINST headings (the explore panel below also labels its columns FOR and AGAINST)
    for_heading = page.locator("#for").get_by_text("FOR", exact=True)
    expect(for_heading).to_be_in_viewport()  # the finished debate is brought into view
    expect(for_heading).to_be_visible()
    expect(page.locator("#against").get_by_text("AGAINST", exact=True)).to_be_visible()
    expect(page.get_by_text("<script>window.__pwned = 1</script>", exact=False).first).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "debate-1440.png"), full_page=True)
    for heading in ("FOR", "AGAINST", "MODERATOR SYNTHESIS"):
        ratio = page.evaluate(CONTRAST_JS, [heading])
        assert ratio >= 4.5, f"{heading} heading contrast {ratio:.2f}:1 is below WCAG AA"

    page.get_by_role("button", name="Question an assumption").click()
    expect(page.get_by_text("Challenge · Question an assumption", exact=False).first).to_be_visible(timeout=120_000)
    # the answer lands beside the assumption, far above the buttons: the page goes there, and a link says where
    expect(page.get_by_text("Challenge · Question an assumption", exact=False).first).to_be_in_viewport()
    expect(page.get_by_role("link", name="Jump to the answer ↑")).to_have_attribute("href", "#cs-challenge-0")
    page.screenshot(path=str(ARTIFACTS / "challenge-1440.png"), full_page=True)

    # your own debate stays yours: a reload and a new tab of this browser keep the challenge panel
    assert any(c["name"] == "clearside_owner" for c in page.context.cookies()), "the ownership cookie is set"
    page.reload()
    expect(page.get_by_text("MODERATOR SYNTHESIS")).to_be_visible(timeout=60_000)
    expect(page.get_by_role("button", name="Question an assumption")).to_be_visible()
    assert page.get_by_text("Read-only", exact=False).count() == 0
    tab = context.new_page()
    tab.goto(page.url)
    expect(tab.get_by_text("MODERATOR SYNTHESIS")).to_be_visible(timeout=60_000)
    expect(tab.get_by_role("button", name="Question an assumption")).to_be_visible()
    tab.close()

    assert page.evaluate("window.__pwned") is None, "user text must never execute"
    assert dialogs == []

    page.set_viewport_size({"width": 780, "height": 900})  # the sidebar and the page side by side, both narrow
    page.wait_for_timeout(500)
    assert browser_kit.cut_off_buttons(page) == [], "every button of a finished debate shows its whole label"

    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "debate-390.png"), full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 400, f"no horizontal scrolling at 390 px (page is {width} px wide)"
    link = page.url
    context.close()
    assert re.search(r"[?&]debate=[0-9a-f]{32}", link), f"the address is the share link: {link}"

    shared = browser.new_page(viewport={"width": 1440, "height": 900})  # another browser: a context of its own
    shared.goto(link)
    expect(shared.get_by_text("MODERATOR SYNTHESIS")).to_be_visible(timeout=60_000)
    expect(shared.get_by_text("Challenge · Question an assumption", exact=False).first).to_be_visible()
    expect(shared.get_by_text("Read-only: this debate was made in another browser", exact=False)).to_be_visible()
    expect(shared.get_by_text("Read-only: make an editable copy to re-map", exact=False)).to_be_visible()
    assert shared.get_by_role("button", name="Question an assumption").count() == 0
    assert shared.get_by_role("button", name="Re-map with these priorities").count() == 0
    shared.goto(f"{server}/library")
    expect(shared.get_by_text("Library", exact=True).first).to_be_visible(timeout=30_000)
    expect(shared.get_by_text("1 saved debate", exact=False).first).to_be_visible(timeout=30_000)
    assert shared.evaluate("window.__pwned") is None
    expect(shared.locator("[data-testid='stDataFrame']")).to_be_visible(timeout=30_000)
    shared.wait_for_timeout(1500)  # the table's grid draws after its frame appears
    shared.screenshot(path=str(ARTIFACTS / "library-1440.png"), full_page=True)
    shared.close()


def finish_with_retries(page, expect) -> None:
    """Wait for the synthesis; where the tiny model's output kept failing a check, press Retry as a user would."""
    synthesis, retry = page.get_by_text("MODERATOR SYNTHESIS"), page.get_by_role("button", name="Retry")
    for _ in range(3):
        expect(synthesis.or_(retry)).to_be_visible(timeout=300_000)
        if not retry.is_visible():
            return
        alerts = page.get_by_role("alert").all_inner_texts()
        assert any(re.search("substance checks|ClearSide schema", text) for text in alerts), (
            f"Retry is offered for a check that failed, never for another error; the page says: {alerts}")
        retry.click()
        expect(retry).to_be_hidden(timeout=30_000)  # the rerun has started
    expect(synthesis).to_be_visible(timeout=300_000)


def test_retry_after_switching_the_provider_runs_the_new_one(server, browser):
    expect = playwright.expect
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(server)
    expect(page.get_by_text("Think both sides. Decide with clarity.")).to_be_visible(timeout=30_000)
    sidebar = page.get_by_test_id("stSidebar")
    browser_kit.choose(page, sidebar.get_by_role("combobox", name="Provider"), "Ollama")
    model = sidebar.get_by_role("textbox", name="Model")
    model.fill("llama3.2")
    model.press("Enter")
    page.wait_for_timeout(500)
    # the flagship question: the latency server's replies are the flagship debate's, on topic for it
    page.get_by_role("textbox", name="Question or claim").fill(flagship().proposition)
    page.get_by_role("button", name="Generate Pro & Con Debate").click()
    expect(page.get_by_text("Ollama is not reachable", exact=False).first).to_be_visible(timeout=60_000)
    expect(page.get_by_role("button", name="Retry with ollama:llama3.2")).to_be_visible()

    browser_kit.choose(page, sidebar.get_by_role("combobox", name="Provider"), "OpenAI-compatible")
    retry = page.get_by_role("button", name=f"Retry with openai:{MODEL}")
    expect(retry).to_be_visible(timeout=30_000)
    expect(page.get_by_text("The run that stopped used ollama:llama3.2", exact=False)).to_be_visible()
    retry.click()
    expect(retry).to_be_hidden(timeout=30_000)  # the rerun has started
    finish_with_retries(page, expect)
    expect(page.get_by_text(f"Model: openai:{MODEL}", exact=False).first).to_be_visible()
    page.close()


@pytest.mark.model
def test_the_perspectives_gate_refuses_a_blank_answer_and_marks_it(server, browser):
    expect = playwright.expect
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{server}/perspectives")
    box = page.get_by_role("textbox", name="Your question or situation")
    expect(box).to_be_visible(timeout=30_000)
    box.fill("Should I leave my stable job to join a friend's startup?")
    box.press("Control+Enter")
    page.get_by_role("button", name="Ask clarifying questions").click()
    answers = page.get_by_placeholder("Your answer (what you know", exact=False)
    retry = page.get_by_role("button", name="Retry")
    for _ in range(3):  # the tiny model may fail to write its questions: a user presses Retry
        expect(answers.first.or_(retry)).to_be_visible(timeout=300_000)
        if not retry.is_visible():
            break
        retry.click()
        expect(retry).to_be_hidden(timeout=30_000)
    count = answers.count()
    assert count >= 1
    for n in range(count):  # the first answer is only spaces; the others are real answers
        answers.nth(n).fill("   " if n == 0 else "not sure")
        answers.nth(n).press("Control+Enter")
        page.wait_for_timeout(300)
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_text("Question 1 needs an answer", exact=False)).to_be_visible(timeout=30_000)
    expect(answers.first).to_be_visible()  # still at the gate: nothing started
    if count > 1:
        expect(answers.nth(1)).to_have_value("not sure")  # what was typed is kept
    assert page.get_by_text("Question 2 needs an answer", exact=False).count() == 0
    page.close()
