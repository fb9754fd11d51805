"""Real browser: the dashboard's input policy, the Library's filters, Compare's preflight, narrow screens, a bare
URL in a question, the explore panel's controls with one re-map on the embedded model (the server's default), a
citation opened on its passage and a source file uploaded.

Debian's Chromium under Playwright against `streamlit run app.py` with a store of its own that holds three
imported debates (the Library needs one to show its filters; another's question holds a bare URL; the third quotes
two sources of its own, one of them hostile, for the citations), a finished
live debate and a finished perspectives session (made here on the scripted provider, for their pages' buttons),
and an Ollama host where nothing listens.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import browser_kit
import pytest
from helpers import free_port
from test_app_sources import HOSTILE, PRO_QUOTE, sourced_export

from clearside import checks, cruxes

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "microservices.json"
QUESTION = "Should we adopt microservices?"
URL_QUESTION = "Should we adopt microservices as https://example.org/report argues?"
IMPORTED: dict[str, str] = {}  # the imported debates' ids, by name
PAGES = ("", "live", "perspectives", "timeline", "library", "compare", "regression")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("clearside-data")
    env = {**os.environ, "CLEARSIDE_DATA": str(data)}
    env.pop("DATABASE_URL", None)
    linked = json.loads(FIXTURE.read_text(encoding="utf-8"))
    linked["proposition"]["raw_input"] = linked["proposition"]["normalized_question"] = URL_QUESTION
    linked = cruxes.attach(linked, checks.LEXICAL_ONLY).dump()  # with cruxes: its hinges are drawn by load
    (data / "linked.json").write_text(json.dumps(linked), encoding="utf-8")
    (data / "sourced.json").write_text(json.dumps(sourced_export()), encoding="utf-8")  # quoting its two sources
    for name, path in (("plain", FIXTURE), ("linked", data / "linked.json"), ("sourced", data / "sourced.json")):
        done = subprocess.run([sys.executable, "-m", "clearside", "import", str(path)], cwd=browser_kit.ROOT,
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        IMPORTED[name] = done.stdout.strip()
    finished_live_and_perspectives(data)
    yield from browser_kit.streamlit_server({"CLEARSIDE_DATA": str(data),
                                             "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}"})


def finished_live_and_perspectives(data: Path) -> None:
    """A finished live debate and a finished perspectives session in the server's store (the scripted provider,
    in a second or two)."""
    from helpers import LiveResponder
    from perspectives_kit import ANSWERS, script

    from clearside.live import LiveDebate
    from clearside.live.protocol import LiveConfig
    from clearside.perspectives import PerspectivesRun
    from clearside.providers.scripted import ScriptedProvider
    from clearside.store import Store

    store = Store(f"sqlite:///{data / 'clearside.db'}")
    try:
        live = LiveDebate.create(QUESTION, ScriptedProvider(fallback=LiveResponder()), store=store,
                                 config=LiveConfig(words_per_minute=40))
        live.run()
        IMPORTED["live"] = live.transcript.id
        session = PerspectivesRun.create(QUESTION, ScriptedProvider(script=script(2)), rounds=2, store=store)
        session.clarify()
        session.answer(ANSWERS)
        session.run()
        IMPORTED["perspectives"] = session.session.session_id
        two_batches(store)
    finally:
        store.close()


def two_batches(store) -> None:
    """Two flagship batches of eight runs saved straight into the store (no debate runs): B's coverage is 0.3 lower
    and its third run misses the neutrality gate, so "Compare two batches" shows a regression and a flip."""
    for batch, shift in (("a" * 32, 0.0), ("b" * 32, -0.3)):
        for i in range(8):
            store.add_run("flagship", provider="scripted", model=f"{batch[:4]}.json", status="done",
                          metrics={"schema_valid": 1.0, "neutrality_violations": 1.0 if batch[0] == "b" and i == 2
                                   else 0.0, "coverage": round(0.6 + (-0.02, 0.01, 0.02, -0.01)[i % 4] + shift, 4)},
                          data={"batch": batch, "item": "flagship", "index": i, "wall_seconds": 2.0 + i,
                                "started_at": f"2026-01-01T00:00:0{'ab'.index(batch[0])}"})


@pytest.fixture(scope="module")
def browser():
    yield from browser_kit.chromium(playwright)


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    yield page
    page.close()


def test_a_long_paste_is_kept_and_says_how_much_to_shorten(server, page):
    expect = playwright.expect
    page.goto(server)
    box = page.get_by_role("textbox", name="Question or claim")
    expect(box).to_be_visible(timeout=30_000)
    pasted = ("Should a mid-sized city ban private cars from its historic center? " * 10)[:620]
    box.fill(pasted)
    box.press("Control+Enter")  # a text area's value reaches the app on Ctrl+Enter (or on leaving it)
    expect(page.get_by_text("Shorten it by 120", exact=False).first).to_be_visible(timeout=30_000)
    assert box.input_value() == pasted, "nothing was cut"
    page.get_by_role("button", name="Generate Pro & Con Debate").click()
    expect(page.get_by_text("620 characters long; the limit is 500", exact=False).first).to_be_visible(
        timeout=30_000)
    assert "debate=" not in page.url, "nothing started"


def test_the_persona_picker_takes_built_ins_and_your_own_and_names_the_fix(server, page):
    expect = playwright.expect
    page.goto(server)
    expect(page.get_by_role("textbox", name="Question or claim")).to_be_visible(timeout=30_000)
    page.get_by_role("textbox", name="Question or claim").fill(QUESTION)
    page.get_by_text("Personas (optional)").click()
    browser_kit.settled(page)  # leaving the question box reruns the app (the text is committed): pick in the new run
    option = page.get_by_role("option", name="economist")
    for _ in range(3):  # a rerun that lands while the list opens closes it again: open it once more
        page.get_by_role("combobox", name="Built-in personas").click()
        try:
            expect(option).to_be_visible(timeout=5_000)
            break
        except AssertionError:
            browser_kit.settled(page)
    option.click()
    page.keyboard.press("Escape")
    browser_kit.settled(page)  # the pick reruns the app: type into the box of the new run, not the one being replaced
    own = page.get_by_role("textbox", name="Your own personas")
    own.fill("Farmer <b>crop yields</b>")  # no "Name: lens"
    own.press("Control+Enter")
    browser_kit.settled(page)
    page.get_by_role("button", name="Generate Pro & Con Debate").click()
    expect(page.get_by_text('write it as "Name: one-line lens"', exact=False).first).to_be_visible(timeout=30_000)
    assert page.locator("b", has_text="crop yields").count() == 0, "the typed text stays text"
    assert "debate=" not in page.url, "nothing started"


def test_clear_filters_empties_the_search(server, page):
    expect = playwright.expect
    page.goto(f"{server}/library")
    search = page.get_by_role("textbox", name="Search")
    expect(search).to_be_visible(timeout=30_000)
    search.fill("no such words anywhere")
    search.press("Enter")
    expect(page.get_by_text("No saved debate matches these filters", exact=False)).to_be_visible(timeout=30_000)
    page.get_by_role("button", name="Clear filters").click()
    expect(search).to_have_value("", timeout=30_000)
    expect(page.get_by_text("No saved debate matches these filters", exact=False)).to_have_count(0)
    page.get_by_role("combobox", name="Kind").click()  # another filter change must not bring the words back
    page.get_by_role("option", name="Static").click()
    browser_kit.settled(page)
    expect(search).to_have_value("")


def test_compare_refuses_an_unreachable_model_before_starting(server, page):
    expect = playwright.expect
    page.goto(f"{server}/compare")
    question = page.get_by_role("textbox", name="Question or claim")
    expect(question).to_be_visible(timeout=30_000)
    question.fill(QUESTION)
    question.press("Control+Enter")
    browser_kit.settled(page)
    second = page.get_by_role("textbox", name="Model 2")
    second.fill("ollama:llama3.2")
    second.press("Enter")
    browser_kit.settled(page)
    page.get_by_role("button", name="Compare", exact=True).click()
    expect(page.get_by_text("Model 2 (ollama:llama3.2) cannot run, so nothing was started", exact=False)).to_be_visible(
        timeout=30_000)
    expect(page.get_by_text("Ollama is not reachable", exact=False).first).to_be_visible()
    assert "compare=" not in page.url, "no comparison was started"
    expect(second).to_have_value("ollama:llama3.2")


def test_a_bare_url_in_a_question_stays_text_on_the_debate_page_and_in_the_library(server, page):
    expect = playwright.expect
    page.goto(f"{server}/?debate={IMPORTED['linked']}")
    expect(page.get_by_text("MODERATOR SYNTHESIS")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("https://example.org/report", exact=False).first).to_be_visible()
    expect(page.get_by_text("Load: FOR", exact=False).first).to_be_visible()  # the hinges by load (cruxes)
    assert page.locator("a[href*='example.org']").count() == 0, "the URL in the question is not a link"
    page.goto(f"{server}/library")
    search = page.get_by_role("textbox", name="Search")
    expect(search).to_be_visible(timeout=30_000)
    search.fill("example.org")
    search.press("Enter")
    expect(page.get_by_text("1 saved debate", exact=False).first).to_be_visible(timeout=30_000)
    shown = page.locator("[data-testid='stMarkdownContainer']", has_text="https://example.org/report")
    expect(shown.first).to_be_visible(timeout=30_000)  # the picked debate's question, beside the table
    assert page.locator("a[href*='example.org']").count() == 0, "the URL in the Library is not a link"


def test_on_a_phone_the_sidebar_closes_after_picking_a_page(server, browser):
    expect = playwright.expect
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    phone.goto(server)
    sidebar = phone.locator("section[data-testid='stSidebar']")
    expect(sidebar).to_have_attribute("data-collapsed", "true", timeout=30_000)  # a phone starts with it closed
    phone.locator("[data-testid='stExpandSidebarButton']").click()
    expect(sidebar).to_have_attribute("data-collapsed", "false")
    phone.get_by_role("button", name="Look again").click()  # using the sidebar's own controls keeps it open
    browser_kit.settled(phone)
    expect(sidebar).to_have_attribute("data-collapsed", "false")
    phone.locator("[data-testid='stSidebarNav'] a", has_text="Library").click()
    expect(sidebar).to_have_attribute("data-collapsed", "true", timeout=10_000)
    expect(phone.get_by_role("textbox", name="Search")).to_be_in_viewport(timeout=30_000)
    expect(phone.get_by_role("heading", name="Library")).to_be_in_viewport()  # the page asked for, not the sidebar
    # the attribute flips before the slide-out transition ends: wait for the sidebar to leave the screen
    phone.wait_for_function("() => document.querySelector('section[data-testid=\"stSidebar\"]')"
                            ".getBoundingClientRect().right <= 1", timeout=10_000)
    phone.close()
    desktop = browser.new_page(viewport={"width": 1440, "height": 900})  # side by side, it stays where it is
    desktop.goto(server)
    desktop.locator("[data-testid='stSidebarNav'] a", has_text="Library").click()
    expect(desktop.get_by_role("textbox", name="Search")).to_be_visible(timeout=30_000)
    expect(desktop.locator("section[data-testid='stSidebar']")).to_have_attribute("data-collapsed", "false")
    desktop.close()


@pytest.mark.parametrize("width", [700, 780, 900])
def test_no_button_is_cut_off_on_a_narrow_screen(server, browser, width):
    narrow = browser.new_page(viewport={"width": width, "height": 900})
    cut = {}
    for path in PAGES:
        narrow.goto(f"{server}/{path}")
        narrow.wait_for_selector("[data-testid='stMain'] [data-testid='stMarkdownContainer']", timeout=30_000)
        browser_kit.settled(narrow)
        if found := browser_kit.cut_off_buttons(narrow):
            cut[path or "debate"] = found
    finished = ((f"?debate={IMPORTED['plain']}", "MODERATOR SYNTHESIS"),  # a saved debate's exports and buttons
                (f"live?live={IMPORTED['live']}", "This live debate is finished"),
                (f"perspectives?perspectives={IMPORTED['perspectives']}", "Conclusions"))
    for path, shown in finished:
        narrow.goto(f"{server}/{path}")
        playwright.expect(narrow.get_by_text(shown).first).to_be_visible(timeout=30_000)
        browser_kit.settled(narrow)
        if path.startswith("?debate="):  # another browser's debate: said read-only where the page lands, on top
            playwright.expect(narrow.get_by_text("Read-only: this debate was made in another browser",
                                                 exact=False)).to_be_in_viewport()
        if found := browser_kit.cut_off_buttons(narrow):
            cut[path.split("=")[0]] = found
    narrow.close()
    assert cut == {}, f"buttons cut off at {width} px: {cut}"


@pytest.mark.model  # the re-map runs the embedded model: with the model tests, one at a time
def test_the_explore_panel_reorders_by_a_slider_and_an_editable_copy_is_remapped(server, page):
    """The weights' sliders, the assumption stances and, on an editable copy, Re-map with these priorities run on
    the embedded model (the server's default): the saved version and its diff, or the page's stated failure of
    the moderator's checks with the button back (the tiny model can end there)."""
    expect = playwright.expect
    page.goto(f"{server}/?debate={IMPORTED['plain']}")
    expect(page.get_by_text("Explore with your priorities")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("technical · weight 1").first).to_be_visible()
    slider = page.locator("[data-testid='stSlider']", has_text="Technical").get_by_role("slider")
    for _ in range(2):  # one press per rerun: while the app reruns, the old slider and the new can both be there
        expect(slider).to_have_count(1, timeout=30_000)  # the rerun is over: one slider, the live one
        slider.focus()
        slider.press("ArrowRight")
        browser_kit.settled(page)
    expect(page.get_by_text("technical · weight 3")).to_have_count(2, timeout=30_000)  # both cases, no model call
    expect(page.get_by_text("P1 (FOR)", exact=False).first).to_be_visible()
    expect(page.get_by_text("reject").first).to_be_visible()
    page.get_by_role("button", name="Make an editable copy").click()
    remap = page.get_by_role("button", name="Re-map with these priorities")
    expect(remap).to_be_visible(timeout=30_000)
    page.locator("[data-testid='stRadio']", has_text="P1 (FOR)").get_by_text("reject", exact=True).click()
    browser_kit.settled(page)
    remap.click()
    outcome = page.get_by_text(re.compile(r"Saved as version 1|failed its checks|substance checks"))
    expect(outcome.first).to_be_visible(timeout=180_000)
    browser_kit.ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(browser_kit.ARTIFACTS / "remap-1440.png"), full_page=True)
    print(f"re-map in the browser: {outcome.first.inner_text()!r}")
    if "Saved as version 1" in outcome.first.inner_text():
        expect(page.get_by_text("Versions of this debate", exact=False)).to_be_visible()
        expect(page.get_by_text("Hinges listed first are the decisive ones", exact=False)).to_be_visible()
    expect(remap).to_be_enabled(timeout=30_000)


def test_the_regression_page_offers_the_swap_check(server, page):
    page.goto(f"{server}/regression")
    box = page.get_by_role("checkbox", name="Swap check")
    expect = playwright.expect
    expect(box).to_be_visible(timeout=30_000)
    expect(box).not_to_be_checked()
    page.get_by_text("Swap check", exact=True).click()
    expect(box).to_be_checked()


def test_compare_two_batches_shows_the_regression_and_downloads_a_report_that_opens_offline(server, page, tmp_path):
    """The Regression page's paired comparison in Chromium: the verdict, the flipped run side by side, and the HTML
    report downloaded from it, then opened with no request leaving the file and no script."""
    expect = playwright.expect
    page.goto(f"{server}/regression")
    expect(page.get_by_role("heading", name="Compare two batches")).to_be_visible(timeout=30_000)
    verdict = page.get_by_text("REGRESSION — B is significantly worse beyond tolerance on coverage", exact=False)
    expect(verdict.first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("flagship #3: pass → fail", exact=False).first).to_be_visible()
    with page.expect_download() as info:
        page.get_by_role("button", name="Download the HTML report").click()
    saved = tmp_path / "report.html"
    info.value.save_as(saved)
    text = saved.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "coverage" in text and "<script" not in text
    report = page.context.browser.new_page()
    requests: list[str] = []
    report.on("request", lambda request: requests.append(request.url))
    report.goto(saved.as_uri())
    expect(report.get_by_text("coverage").first).to_be_visible()
    assert requests == [saved.as_uri()], "the report loads nothing but itself"
    report.close()


def test_a_citation_opens_its_passage_with_the_quote_highlighted_and_the_source_stays_text(server, page):
    expect = playwright.expect
    page.goto(f"{server}/?debate={IMPORTED['sourced']}")
    expect(page.get_by_text("MODERATOR SYNTHESIS")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("fact claimed, no source").first).to_be_visible()
    marker = page.locator("[data-testid='stExpander'] summary", has_text="[S2.1]")
    marker.click()
    passage = page.locator("[data-testid='stExpander']", has_text="[S2.1]").locator("blockquote")
    expect(passage).to_be_visible(timeout=10_000)
    expect(passage).to_contain_text(HOSTILE)  # the whole passage, as text: its markup and asterisks literal
    highlight = passage.locator("strong")
    expect(highlight).to_have_text(PRO_QUOTE[:-1])
    colour = highlight.evaluate("e => getComputedStyle(e.closest('span') || e).backgroundColor")
    assert colour not in ("", "rgba(0, 0, 0, 0)", "transparent"), f"the quote is highlighted: {colour}"
    assert page.locator("[data-testid='stMain'] img[src='x']").count() == 0, "the source's markup is not markup"
    assert "orange-background" not in passage.inner_text()
    expect(page.get_by_text("arguments citing it: FOR 1 · AGAINST 0")).to_be_visible()  # the Sources panel
    passage.scroll_into_view_if_needed()
    browser_kit.ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(browser_kit.ARTIFACTS / "citation-1440.png"))  # the opened citation, in view


def test_an_uploaded_file_is_listed_as_attached_and_one_over_the_limit_is_refused_by_name(server, page, tmp_path):
    expect = playwright.expect
    page.goto(server)
    box = page.get_by_role("textbox", name="Question or claim")
    expect(box).to_be_visible(timeout=30_000)
    box.fill(QUESTION)
    box.press("Control+Enter")
    browser_kit.settled(page)
    page.get_by_text("Sources (optional)").click()
    (tmp_path / "notes.md").write_bytes(b"# Notes\n\nOur platform team halved the hosting bill in a year.\n")
    upload = page.locator("[data-testid='stFileUploader'] input[type='file']")
    upload.set_input_files(str(tmp_path / "notes.md"))
    expect(page.get_by_text("Attached (1): notes.md (62 bytes)")).to_be_visible(timeout=30_000)
    (tmp_path / "big.txt").write_bytes(b"a" * (5 * 1024 * 1024 + 1))
    upload.set_input_files(str(tmp_path / "big.txt"))
    # over server.maxUploadSize (5, as clearside.sources.MAX_BYTES): the uploader refuses it beside its name and
    # never sends it (a client that sends one anyway meets ClearSide's own check: tests/test_app_sources.py)
    uploader = page.locator("[data-testid='stFileUploader']")
    expect(uploader.get_by_role("alert")).to_contain_text("File must be 5.0MB or smaller", timeout=30_000)
    expect(uploader).to_contain_text("big.txt")
    expect(page.get_by_text("Attached (1): notes.md (62 bytes)")).to_be_visible()  # nothing lost, nothing added
    assert "debate=" not in page.url, "nothing started"
    expect(box).to_have_value(QUESTION)
    browser_kit.ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(browser_kit.ARTIFACTS / "sources-refused-1440.png"), full_page=True)


@pytest.mark.parametrize("width", [1440, 390])
def test_a_click_on_a_debates_title_in_the_library_picks_that_debate(server, browser, width):
    """The Library's table: a click on a row's title (a cell, not the row's small box) picks that debate for the
    actions below it; a click on the first row's title picks the first again (which row is which is tested
    without a browser, in test_app_library.py)."""
    expect = playwright.expect
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(f"{server}/library")
    table = page.locator("[data-testid='stDataFrame']")
    expect(table).to_be_visible(timeout=30_000)
    page.wait_for_timeout(1500)  # the grid draws after its frame appears
    picker = page.get_by_role("combobox", name="Debate")
    first = picker.input_value()
    assert first, "a debate is picked at first"
    table.scroll_into_view_if_needed()  # on a phone the filters stack above it
    page.wait_for_timeout(500)
    box = table.bounding_box()
    for row, expected in ((2, None), (1, first)):
        page.mouse.click(box["x"] + 40, box["y"] + 35 * row + 17)  # the title cell of that row
        if expected is None:
            expect(picker).not_to_have_value(first, timeout=30_000)
        else:
            expect(picker).to_have_value(expected, timeout=30_000)
        page.wait_for_timeout(500)
    page.close()
