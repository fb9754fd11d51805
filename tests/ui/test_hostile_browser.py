"""Hostile input in a real browser: every page and its URL parameters (``?debate=``, ``?live=``,
``?perspectives=``, ``?batch=``, ``?compare=``), with one dashboard and one Chromium for the module.

The dashboard's store holds, made here on the scripted provider, a static debate, a live debate, a perspectives
session waiting at its clarification gate and a regression batch, each full of hostile text (markup and script,
Markdown links to ``javascript:`` and images on a remote host, bidi overrides and zero-width characters) in the
question, the model's output and a model's name, and each owned by another browser. Throughout:

* no script runs: ``window.__pwned``, which every payload would set, stays unset and no dialog opens;
* no request leaves 127.0.0.1 (Playwright's request log): not the remote image of a model's output, not the tab's
  icon (which Streamlit fetched from a font CDN for a ``:material/`` page icon);
* no page shows a traceback; a hostile link is refused with a short message that quotes the value escaped;
* the other browser's debate, live debate and session stay read-only: nothing here can answer the gate.
"""

from __future__ import annotations

import os
import re
import urllib.parse

import browser_kit
import pytest
from helpers import LiveResponder, fixture_dict

from clearside.inputs import MAX_QUESTION, clean, over_limit

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

FLAG = "window.__pwned"
PAYLOAD = ('<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
           '<iframe src="javascript:parent.__pwned=3"></iframe>')
MARKDOWN = ("[open me](javascript:window.__pwned=4) ![pixel](https://evil.example/pixel.png) "
            "<img src=https://evil.example/tracker.gif> :red[red] **bold** $x^2$")
BIDI, ZERO_WIDTH = "\u202egpj.exe", "\u200b\u2060"
QUESTION = f"Should we adopt {PAYLOAD} microservices? {MARKDOWN} {BIDI}{ZERO_WIDTH}"
OTHER_BROWSER = "f" * 32  # another browser's owner token
SAVED: dict[str, str] = {}  # the hostile items' ids, by kind


def hostile_store(data) -> None:
    """A hostile static debate, live debate, pending perspectives session and regression batch, each stamped as
    another browser's."""
    from perspectives_kit import script

    from clearside.live import LiveDebate
    from clearside.live.protocol import LiveConfig
    from clearside.modes import import_data
    from clearside.perspectives import PerspectivesRun
    from clearside.providers.scripted import ScriptedProvider
    from clearside.store import Store

    store = Store(f"sqlite:///{data / 'clearside.db'}")
    try:
        document = fixture_dict()
        document["proposition"]["raw_input"] = document["proposition"]["normalized_question"] = QUESTION
        document["pro"]["arguments"][0]["claim"] = f"Scaling {PAYLOAD} {MARKDOWN}"
        document["pro"]["assumptions"][0] = f"{BIDI} assumption {MARKDOWN}"
        document["moderator"]["decision_hinges"][0] = f"Hinge {PAYLOAD} {MARKDOWN}"
        SAVED["static"] = import_data(store, document).id

        # a speech may hold no quote, bracket or backslash (the live wire's pattern): a bare address and Markdown
        speech = ("Pro opens with https://evil.example/pixel.png, javascript:window.__pwned=4, **bold**, $x^2$, "
                  f"{BIDI} and a speech on service boundaries and costs.")
        # mostly not words, it is a garbled turn: written again once, then kept with its flag (both replies hostile)
        live = LiveDebate.create(QUESTION[:480], ScriptedProvider(fallback=LiveResponder(
            overrides={("pro", 1): {"speech": speech}, ("pro", 2): {"speech": speech}})), store=store,
            config=LiveConfig(words_per_minute=40))
        live.run()
        SAVED["live"] = live.transcript.id
        [kept] = [turn for turn in live.transcript.turns if "evil.example" in turn.text]
        assert {flag["rule"] for flag in kept.flags} == {"garbled"}, "the hostile speech was kept, flagged"

        clarifier = script(1)
        # 150 characters at most; specific questions, or the clarifier's checks would leave them out
        clarifier["perspectives-clarifier"] = [{"questions": [
            'Did <img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> break your release process '
            "last year?",
            "How many of your teams would own and run the new services? [open me](javascript:window.__pwned=4) "
            "**bold**"]}]
        session = PerspectivesRun.create(QUESTION[:480], ScriptedProvider(script=clarifier), rounds=1, store=store)
        session.clarify()
        SAVED["perspectives"] = session.session.session_id

        for debate_id in SAVED.values():
            store.update(debate_id, data={"owner": OTHER_BROWSER})
        batch = "c" * 32
        for i in range(2):
            store.add_run("flagship", provider="scripted", model=f"{PAYLOAD}{BIDI}", status="done",
                          metrics={"schema_valid": 1.0, "neutrality_violations": 0.0, "coverage": 0.6},
                          data={"batch": batch, "item": "flagship", "index": i, "wall_seconds": 2.0,
                                "started_at": "2026-01-01T00:00:00"})
        SAVED["batch"] = batch
    finally:
        store.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from helpers import free_port

    data = tmp_path_factory.mktemp("clearside-hostile")
    env = {**os.environ, "CLEARSIDE_DATA": str(data)}
    env.pop("DATABASE_URL", None)
    hostile_store(data)
    yield from browser_kit.streamlit_server({"CLEARSIDE_DATA": str(data),
                                             "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}"})


@pytest.fixture(scope="module")
def browser():
    yield from browser_kit.chromium(playwright)


class Watched:
    """A page whose requests, web sockets and dialogs are logged from the start."""

    def __init__(self, browser, server: str) -> None:
        self.server = server
        self.context = browser.new_context(viewport={"width": 1440, "height": 900})
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.page = self.context.new_page()
        self.page.on("websocket", lambda socket: self.requests.append(socket.url))
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))

    def open(self, path: str, shows: str) -> None:
        """Open a page and wait until it shows ``shows`` and has finished its run; then check it."""
        self.page.goto(f"{self.server}/{path}")
        playwright.expect(self.page.get_by_text(shows, exact=False).first).to_be_visible(timeout=30_000)
        self.settled()

    def settled(self) -> None:
        self.page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                                    timeout=30_000)
        self.page.wait_for_timeout(300)  # what the run drew: images requested, scripts (would have) run
        self.check()

    def check(self) -> None:
        page = self.page
        assert page.evaluate(FLAG) is None and page.evaluate("window.parent.__pwned") is None, "a payload ran"
        assert self.dialogs == [], "a payload opened a dialog"
        assert page.locator("[data-testid='stException']").count() == 0, "a traceback is shown"
        assert page.locator("a[href^='javascript:'], iframe[src^='javascript:']").count() == 0
        assert page.locator("img[src*='evil.example'], img[src='x']").count() == 0
        host = urllib.parse.urlsplit(self.server).netloc
        away = [url for url in self.requests
                if not url.startswith(("data:", "blob:", "about:")) and urllib.parse.urlsplit(url).netloc != host]
        assert away == [], f"requests left 127.0.0.1: {away}"

    def text(self) -> str:
        return self.page.locator("[data-testid='stMain']").inner_text()


@pytest.fixture(scope="module")
def watched(server, browser):
    watched = Watched(browser, server)
    yield watched
    watched.check()
    watched.context.close()


def test_hostile_links_are_refused_with_a_short_escaped_message(watched):
    value = urllib.parse.quote(f"{PAYLOAD}{BIDI}{'x' * 10_000}")
    for path, shows in ((f"?debate={value}", "This link does not open a saved debate"),
                        (f"live?live={value}", "in the address is not a live debate id"),
                        (f"perspectives?perspectives={value}", "in the address is not a perspectives session id"),
                        (f"timeline?debate={value}", "in the address is not a live debate id"),
                        (f"regression?batch={value}", "This link does not open a regression batch"),
                        (f"compare?compare={value}", "This link does not open a saved comparison")):
        watched.open(path, shows)
        [message] = [m for m in watched.page.locator("[data-testid='stAlert']").all_inner_texts() if shows in m]
        assert "(10,1" in message and len(message) < 400, f"cut, with its length: {message}"
        assert "\u202e" not in message, "the bidi override is escaped, not applied"


def test_another_browsers_debate_is_read_only_and_its_hostile_text_inert(watched):
    watched.open(f"?debate={SAVED['static']}", "MODERATOR SYNTHESIS")
    shown = watched.text()
    assert '<img src=x onerror="window.__pwned=1">' in shown and "<script>window.__pwned=2</script>" in shown
    assert "[open me](javascript:window.__pwned=4)" in shown and "![pixel](https://evil.example/pixel.png)" in shown
    assert "\u202e" not in shown and "\u200b" not in shown and "gpj.exe" in shown, "the override is dropped"
    expect = playwright.expect
    expect(watched.page.get_by_text("Read-only: this debate was made in another browser", exact=False)).to_be_visible()
    assert watched.page.get_by_role("button", name="Question an assumption").count() == 0
    expect(watched.page.get_by_role("button", name="Make an editable copy")).to_be_visible()


def test_another_browsers_live_debate_and_its_timeline_show_the_hostile_speech_as_text(watched):
    watched.open(f"live?live={SAVED['live']}", "This live debate is finished")
    assert watched.page.get_by_role("button", name="Pause").count() == 0
    watched.page.get_by_text("Pro opens", exact=False).first.scroll_into_view_if_needed()
    watched.settled()
    shown = watched.text()
    assert "Pro opens with https://evil.example/pixel.png, javascript:window.__pwned=4, **bold**, $x^2$" in shown
    assert "<script>window.__pwned=2</script>" in shown and "\u202e" not in shown, "the question, inert"
    watched.open(f"timeline?debate={SAVED['live']}", "Pro opens")
    shown = watched.text()
    assert "<script>window.__pwned=2</script>" in shown and "https://evil.example/pixel.png" in shown


def test_another_browsers_session_at_the_gate_cannot_be_answered_here(watched):
    """Its clarifying questions (the model's, hostile) are shown as text, with no box to answer them in."""
    watched.open(f"perspectives?perspectives={SAVED['perspectives']}", "Read-only: this session was started")
    shown = watched.text()
    assert 'Did <img src=x onerror="window.__pwned=1">' in shown and "[open me](javascript:" in shown
    page = watched.page
    assert page.get_by_role("textbox", name=re.compile("Your answer to question")).count() == 0
    assert page.get_by_role("button", name=re.compile("^(Continue|Resume|Ask again)$")).count() == 0


def test_library_search_and_titles_take_markup_sql_and_wildcards_as_text(watched):
    page, expect = watched.page, playwright.expect
    watched.open("library", "saved debate")
    search = page.get_by_role("textbox", name="Search")
    # LIKE's wildcards taken as wildcards would match "window" in every question; as text they match nothing. The
    # searches alternate between matching all three and none, so each expected line proves a new search ran (the
    # page still shows the previous one until it has).
    for words, found in (("<script>window.__pwned=2</script>", "3 saved debates match"),  # each one's question
                         ("win%pwned", "No saved debate matches"), ("pwned", "3 saved debates match"),
                         ("w_ndow", "No saved debate matches"), ("javascript:window.__pwned=4 gpj.exe",
                                                                 "3 saved debates match"),
                         ("' OR 1=1 --", "No saved debate matches")):
        search.fill(words)
        search.press("Enter")
        expect(page.get_by_text(found, exact=False).first).to_be_visible(timeout=30_000)
        watched.settled()


def test_regression_page_shows_a_hostile_model_name_as_text(watched):
    watched.open(f"regression?batch={SAVED['batch']}", "flagship")
    assert "This link does not open" not in watched.text()


def test_ten_thousand_characters_of_markup_in_the_question_box_are_kept_and_refused(watched):
    page, expect = watched.page, playwright.expect
    watched.open("", "Think both sides")
    pasted = ((PAYLOAD + MARKDOWN + " ") * 60)[:10_000]
    box = page.get_by_role("textbox", name="Question or claim")
    box.fill(pasted)
    box.press("Tab")
    note = over_limit(clean(pasted), MAX_QUESTION, "Question or claim")
    assert "the limit is 500. Shorten it by 9" in note
    expect(page.get_by_text(note).first).to_be_visible(timeout=30_000)
    watched.settled()
    assert box.input_value() == pasted, "kept whole, as typed"
