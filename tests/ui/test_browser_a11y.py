"""Accessibility (WCAG 2 A and AA) in a real browser: axe-core on every page in its main states, the debate flow with
the keyboard alone, the FOR and AGAINST sides named in text wherever colour marks them, and a challenge asked from
the control beside its element at 1440 and 390 px (axe run with the control open on the phone).

One dashboard (`streamlit run app.py`) and one Debian Chromium for the module. Before the dashboard starts, its store
is given, in a few seconds: the fixture debate imported and copied as this browser's own (the browser gets the
matching ownership cookie, so the challenge panel shows beside the fixture's answered challenges), a finished live
debate and a finished perspectives session (the scripted provider), two regression batches and a saved comparison of
two models. The model server the sidebar finds running is a scripted one on 127.0.0.1 (bench/latency_server.py's
OpenAI-compatible wire, answering with the flagship debate, and a challenge with an answer about its target); the
substance checks run lexically (no MiniLM to load). The keyboard test picks that server with the keyboard.

axe-core is the ``axe.min.js`` that the axe-playwright-python wheel ships (requirements.txt), injected with a script
tag and run here with the WCAG 2.0, 2.1 and 2.2 A and AA tags and axe's best practices: nothing is downloaded at
run time. A violation of impact serious or critical fails its page, and so does a heading out of order (ClearSide's
own headings). Nothing is excluded (``EXCLUDED``). ``CLEARSIDE_A11Y_TABLE=path`` writes the per-page results as a
Markdown table there.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import browser_kit
import pytest
from helpers import free_port

playwright = pytest.importorskip("playwright.sync_api")
axe_package = pytest.importorskip("axe_playwright_python")
pytestmark = pytest.mark.browser

AXE_JS = Path(axe_package.__file__).parent / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
RUN_TAGS = [*TAGS, "best-practice"]  # axe's best practices too (heading order, landmarks): reported, and ...
BLOCKING = ("critical", "serious")
OWN_RULES = ("heading-order",)  # ... this one is ClearSide's own to keep (its headings), so it fails a page too
IMPACTS = ("critical", "serious", "moderate", "minor")
# (axe rule, CSS selector of one Streamlit element, why ClearSide cannot fix it): only that rule on that element is
# left out of the results. Empty: every page passes with no exclusion.
EXCLUDED: list[tuple[str, str, str]] = []
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "microservices.json"
OWNER_KEY = "acce55ed" * 4  # this browser's ownership key (clearside_ui/owner.py): the copied debate is its own
IDS: dict[str, str] = {}  # the store's debates, sessions and batches, by name
RESULTS: dict[str, dict] = {}  # per page state: violations by impact and the exclusions applied

RUN_AXE_JS = """async ({tags, excluded}) => {
  const results = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations'],
                                           elementRef: true});
  const skipped = {};
  const violations = results.violations.map(v => {
    const nodes = v.nodes.filter(n => {
      const hit = excluded.find(([rule, selector]) => rule === v.id && n.element && n.element.matches(selector));
      if (hit) skipped[v.id] = (skipped[v.id] || 0) + 1;
      return !hit;
    });
    return {id: v.id, impact: v.impact, help: v.help, count: nodes.length,
            targets: nodes.slice(0, 3).map(n => n.target.join(' >> ')),
            why: nodes.length ? nodes[0].failureSummary : ''};
  }).filter(v => v.count > 0);
  return {version: axe.version, violations, skipped};
}"""


# -- the scripted model server ---------------------------------------------------------------------------------------


def challenge_reply(messages: list[dict]) -> dict:
    """A challenge answer about its target (the prompt's ``TARGET (USER TEXT):`` line), as the checks require."""
    said = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    target = re.search(r"TARGET \(USER TEXT\): (.+)", said)
    element = (target.group(1).strip() if target else "the element")[:120]
    return {"analysis": [f"The element rests on an assumption: {element}",
                         "It depends on how mature the teams and their tooling already are."],
            "historical_context": ["Earlier platform migrations show mixed results, and the record is incomplete."],
            "classification": "uncertain"}


@pytest.fixture(scope="module")
def model_server():
    """bench/latency_server.py at full speed, with a challenge answer about its target."""
    from bench.latency_replies import reply_for
    from bench.latency_server import _TOKEN, LatencyServer, _Handler, _schema

    class Handler(_Handler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            schema = _schema(body.get("response_format"))
            schema = schema if isinstance(schema, dict) else None
            messages = body.get("messages") or []
            asks = set((schema or {}).get("properties", {}))
            reply = challenge_reply(messages) if {"analysis", "classification"} <= asks else reply_for(schema, messages)
            self._openai(body, _TOKEN.findall(json.dumps(reply)))

    server = LatencyServer(0, ttft=0.0, tps=20_000)
    server.RequestHandlerClass = Handler
    server.start()
    yield server
    server.stop()


# -- the store and the dashboard --------------------------------------------------------------------------------------


def owner_token(key: str) -> str:
    return hashlib.sha256(f"clearside-owner:{key}".encode()).hexdigest()[:32]  # as clearside_ui/owner.py


def fill_store(data: Path) -> None:
    """Everything the pages show, made without the dashboard (a few seconds: scripted providers, no embeddings)."""
    from helpers import LiveResponder
    from perspectives_kit import ANSWERS, script

    from clearside.live import LiveDebate
    from clearside.live.protocol import LiveConfig
    from clearside.modes import import_file
    from clearside.perspectives import PerspectivesRun
    from clearside.providers.scripted import ScriptedProvider
    from clearside.quality import metrics
    from clearside.store import Store

    store = Store(f"sqlite:///{data / 'clearside.db'}")
    try:
        IDS["imported"] = import_file(store, str(FIXTURE)).id  # as `clearside import` does
        IDS["owned"] = store.duplicate(IDS["imported"], owner=owner_token(OWNER_KEY))
        live = LiveDebate.create("Should we adopt microservices?", ScriptedProvider(fallback=LiveResponder()),
                                 store=store, config=LiveConfig(words_per_minute=40))
        live.run()
        IDS["live"] = live.transcript.id
        session = PerspectivesRun.create("Should we adopt microservices?", ScriptedProvider(script=script(2)),
                                         rounds=2, store=store)
        session.clarify()
        session.answer(ANSWERS)
        session.run()
        IDS["perspectives"] = session.session.session_id
        for batch, shift in (("a" * 32, 0.0), ("b" * 32, -0.3)):  # B's coverage lower: "Compare two batches" flags it
            for i in range(4):
                store.add_run("flagship", provider="scripted", model=f"{batch[:4]}.json", status="done",
                              metrics={"schema_valid": 1.0, "neutrality_violations": 0.0,
                                       "coverage": round(0.6 + (-0.02, 0.01, 0.02, -0.01)[i] + shift, 4)},
                              data={"batch": batch, "item": "flagship", "index": i, "wall_seconds": 2.0 + i,
                                    "started_at": f"2026-01-01T00:00:0{'ab'.index(batch[0])}"})
        # a saved comparison of two models, one of them failed (one finished debate: no MiniLM to load to match
        # the models' points), scored without embeddings
        IDS["compare"] = batch = "c" * 32
        document = store.get(IDS["imported"]).document
        detail = metrics.compute(document, semantic_metrics=False)
        for name, status in (("a.json", "done"), ("b.json", "failed")):
            copy_id = store.duplicate(IDS["imported"])
            outcome = ({"wall_seconds": 3.0, "detail": detail} if status == "done"
                       else {"wall_seconds": 1.0, "error": "The model server answered HTTP 503 three times."})
            store.add_run("compare", provider="scripted", model=name, debate_id=copy_id, status=status,
                          metrics=metrics.summary(detail) if status == "done" else {},
                          data={"batch": batch, "question": document["proposition"]["normalized_question"],
                                "label": f"scripted:{name}", "spec": f"scripted:{name}", "temperature": 0.4,
                                "started_at": "2026-01-02T00:00:00", "planned": 2, **outcome})
    finally:
        store.close()


@pytest.fixture(scope="module")
def server(model_server, tmp_path_factory):
    data = tmp_path_factory.mktemp("clearside-data")
    fill_store(data)
    yield from browser_kit.streamlit_server({
        "CLEARSIDE_DATA": str(data), "OPENAI_BASE_URL": model_server.base_url, "OPENAI_API_KEY": "scripted",
        "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}", "CLEARSIDE_SEMANTIC_CHECKS": "0"})


@pytest.fixture(scope="module")
def browser():
    yield from browser_kit.chromium(playwright)


@pytest.fixture(scope="module")
def context(server, browser):
    """The browser that owns the copied debate (its ownership cookie is set)."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.add_cookies([{"name": "clearside_owner", "value": OWNER_KEY, "url": server}])
    yield context
    context.close()


@pytest.fixture(scope="module", autouse=True)
def results_table():
    """After the module: the per-page table, where ``CLEARSIDE_A11Y_TABLE`` names a file."""
    yield
    if (path := os.environ.get("CLEARSIDE_A11Y_TABLE")) and RESULTS:
        Path(path).write_text(markdown_table(), encoding="utf-8")


def markdown_table() -> str:
    version = next(iter(RESULTS.values()))["version"]
    lines = [f"axe-core {version} (from axe-playwright-python), tags {', '.join(RUN_TAGS)}; Chromium at 1440x900.",
             "",
             "| Page / state | critical | serious | moderate | minor | excluded rules |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    for state, result in RESULTS.items():
        cells = []
        for impact in IMPACTS:
            found = [v for v in result["violations"] if v["impact"] == impact]
            rules = ", ".join(f"{v['id']} {v['count']}" for v in found)
            cells.append(f"{sum(v['count'] for v in found)} ({rules})" if found else "0")
        skipped = ", ".join(f"{rule} ({n})" for rule, n in result["skipped"].items()) or "none"
        lines.append(f"| {state} | " + " | ".join(cells) + f" | {skipped} |")
    return "\n".join(lines) + "\n"


def run_axe(page) -> dict:
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(path=str(AXE_JS))
    excluded = [[rule, selector] for rule, selector, _ in EXCLUDED]
    return page.evaluate(RUN_AXE_JS, {"tags": RUN_TAGS, "excluded": excluded})


def report(violations: list[dict]) -> str:
    return "\n".join(f"  {v['impact']} {v['id']} ({v['count']}): {v['help']}\n    at " + "\n    at ".join(v["targets"])
                     + "\n    " + v["why"].replace("\n", "\n    ") for v in violations)


# -- axe on every page ------------------------------------------------------------------------------------------------


def open_settings(page) -> None:
    """The sidebar with the server it found in use and its Generation options open."""
    page.get_by_role("button", name="Use it").click()
    playwright.expect(page.get_by_text("Using the OpenAI-compatible server", exact=False)).to_be_visible(
        timeout=30_000)
    page.get_by_test_id("stSidebar").get_by_text("Generation").click()
    playwright.expect(page.get_by_role("spinbutton", name="Concurrency")).to_be_visible(timeout=30_000)


# (page and state, address after the server's, text shown once it is drawn, what to do then)
STATES = [
    ("Debate: empty", lambda: "", "Think both sides. Decide with clarity.", None),
    ("Debate: the reference example", lambda: "?example=flagship", "MODERATOR SYNTHESIS", None),
    ("Debate: finished, own, challenge panel and answers", lambda: f"?debate={IDS['owned']}",
     "Challenge the reasoning", None),
    ("Debate: finished, read-only (another browser's)", lambda: f"?debate={IDS['imported']}",
     "Make an editable copy", None),
    ("Live debate: empty", lambda: "live", "Start live debate", None),
    ("Live debate: finished", lambda: f"live?live={IDS['live']}", "This live debate is finished", None),
    ("Perspectives: empty", lambda: "perspectives", "Ask clarifying questions", None),
    ("Perspectives: finished session", lambda: f"perspectives?perspectives={IDS['perspectives']}", "Conclusions",
     None),
    ("Timeline: a saved live debate", lambda: f"timeline?debate={IDS['live']}", "Show the whole transcript", None),
    ("Library: saved debates", lambda: "library", "saved debate", None),
    ("Compare models: a saved comparison, one model failed", lambda: f"compare?compare={IDS['compare']}",
     "Earlier comparisons", None),
    ("Regression: batches, two compared, one run's debate", lambda: "regression", "Compare two batches", None),
    ("Sidebar settings: a server in use, Generation open", lambda: "", "Think both sides. Decide with clarity.",
     open_settings),
]
BY_NAME = {state[0]: state for state in STATES}

# The text of every mark in the theme's green or red (coloured text, badges, highlights) in the page's main area:
# FOR is green and AGAINST red wherever the sides are coloured (view.side_view, live_view.SPEAKER_COLOURS).
SIDE_MARKS_JS = """() => {
  const hue = c => {
    const [r, g, b, a = 1] = (c.match(/[\\d.]+/g) || []).map(Number);
    if (a < 0.05) return '';
    const max = Math.max(r, g, b), min = Math.min(r, g, b);
    if (max - min < 40) return '';  // grey: no hue to speak of
    const h = max === r ? ((g - b) / (max - min) + 6) % 6 : max === g ? (b - r) / (max - min) + 2
                                                                       : (r - g) / (max - min) + 4;
    return h * 60 < 20 || h * 60 > 340 ? 'red' : h * 60 > 90 && h * 60 < 170 ? 'green' : '';
  };
  const marks = document.querySelectorAll('[data-testid="stMain"] :is(.stMarkdownColoredText, .stMarkdownBadge, '
    + '.stMarkdownColoredBackground)');
  return [...marks].map(e => {
    const s = getComputedStyle(e);
    return {colour: hue(s.color) || hue(s.backgroundColor), text: e.textContent.trim()};  // shut expanders too
  }).filter(m => m.colour);
}"""
SIDES = re.compile(r"\b(FOR|AGAINST|Pro|Con)\b")
# green or red marks that are no side: each names its own meaning in words (after its icon's name, as "check"), or
# is the live debate's badge of a quoted source ("verified" and the source, after the words "Quotes your source")
STATUS_MARKS = re.compile(r"^([a-z_]+ )?(✓ |Finished|Failed|Delivered to the debaters|Could not be answered)"
                          r"|^verified ")
SIDE_MARKS: dict[str, list[dict]] = {}  # per page state, the coloured marks the axe test saw


def open_state(context, server, state):
    """A new page showing ``state``, settled."""
    name, address, shown, action = state
    page = context.new_page()
    page.goto(f"{server}/{address()}")
    playwright.expect(page.get_by_text(shown, exact=False).first).to_be_visible(timeout=30_000)
    browser_kit.settled(page)
    if action:
        action(page)
        browser_kit.settled(page)
    page.wait_for_timeout(300)  # charts and tables draw just after their frames
    return page


@pytest.mark.parametrize("state", STATES, ids=[s[0] for s in STATES])
def test_no_serious_or_critical_wcag_violation(context, server, state):
    page = open_state(context, server, state)
    try:
        result = run_axe(page)
        SIDE_MARKS[state[0]] = page.evaluate(SIDE_MARKS_JS)
    finally:
        page.close()
    RESULTS[state[0]] = result
    blocking = [v for v in result["violations"] if v["impact"] in BLOCKING or v["id"] in OWN_RULES]
    assert not blocking, f"{state[0]}: violations (axe-core {result['version']}):\n{report(blocking)}"


@pytest.mark.parametrize(("name", "sides"), [
    ("Debate: finished, own, challenge panel and answers", {"green", "red"}),
    ("Live debate: finished", {"green", "red"}),
    ("Timeline: a saved live debate", {"green"}),  # its first turn: Pro's opening
    ("Compare models: a saved comparison, one model failed", {"green", "red"}),
    ("Regression: batches, two compared, one run's debate", {"green", "red"})])
def test_the_sides_are_named_in_text_wherever_colour_marks_them(context, server, name, sides):
    """Green is FOR and red AGAINST: each green or red mark names its side in its own words (or, for a status in
    those colours, its meaning), so the colour is never the only signal (WCAG 1.4.1)."""
    if name not in SIDE_MARKS:  # run on its own: the axe test did not open the page
        page = open_state(context, server, BY_NAME[name])
        SIDE_MARKS[name] = page.evaluate(SIDE_MARKS_JS)
        page.close()
    marks = SIDE_MARKS[name]
    assert {m["colour"] for m in marks if SIDES.search(m["text"])} == sides, f"the sides marked: {marks}"
    unnamed = [m for m in marks if not SIDES.search(m["text"]) and not STATUS_MARKS.match(m["text"])]
    assert not unnamed, f"{name}: marked by colour alone: {unnamed}"
    wrong = [m for m in marks if SIDES.search(m["text"]) and not STATUS_MARKS.match(m["text"])
             and m["colour"] != ("green" if re.search(r"\b(FOR|Pro)\b", m["text"]) else "red")]
    assert not wrong, f"{name}: a side in the other side's colour: {wrong}"


# -- the debate flow with the keyboard alone -------------------------------------------------------------------------

# The focused element: its role and accessible name (axe-core's own computation) and whether a keyboard user sees
# where the focus is: it matches :focus-visible and it, or the box drawn around it (two levels up at most, within its
# widget), has an outline or a box-shadow.
FOCUS_JS = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  axe.setup(document);
  let name = '', role = '';
  try {
    name = axe.commons.text.accessibleTextVirtual(axe.utils.getNodeFromTree(el)).trim();
    role = axe.commons.aria.getRole(el) || el.tagName.toLowerCase();
  } finally { axe.teardown(); }
  const ringed = e => {
    const s = getComputedStyle(e);
    return (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none';
  };
  let ring = false;
  for (let e = el, up = 0; e && up < 3 && !ring; e = e.parentElement, up++) {
    ring = ringed(e);
    if (e.getAttribute('data-testid') === 'stElementContainer') break;
  }
  return {role, name, visible: el.matches(':focus-visible'), ring, sidebar: !!el.closest('[data-testid="stSidebar"]')};
}"""


def focused(page) -> dict | None:
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(path=str(AXE_JS))
    return page.evaluate(FOCUS_JS)


def tab_to(page, name: str, reached: list[dict], *, key: str = "Tab", limit: int = 120) -> None:
    """Press ``key`` until the control named ``name`` has the focus; every control on the way goes in ``reached``."""
    for _ in range(limit):
        page.keyboard.press(key)
        now = focused(page)
        if now is not None:
            reached.append(now)
            if now["name"] == name:
                return
    pytest.fail(f"{name!r} not reached with {key} in {limit} presses; reached: {[c['name'] for c in reached]}")


def test_the_debate_flow_with_the_keyboard_alone(server, browser):
    """Tab, Shift+Tab, typing, Enter and Space only: pick the model server the sidebar found, type a question,
    generate the debate, reach the finished document and ask a challenge. Every control on the way has a name and a
    visible focus ring, the order follows the page, and no element jumps the order with a positive tabindex."""
    from clearside.quality.references import flagship

    expect = playwright.expect
    page = browser.new_page(viewport={"width": 1440, "height": 900})  # a browser of its own: a new owner
    try:
        page.goto(server)
        expect(page.get_by_role("button", name="Use it")).to_be_visible(timeout=30_000)  # the server was found
        browser_kit.settled(page)
        reached: list[dict] = []
        tab_to(page, "Use it", reached)
        assert reached[0]["name"] == "Skip to main content", "the first stop skips the sidebar"
        page.keyboard.press("Enter")
        expect(page.get_by_text("Using the OpenAI-compatible server", exact=False)).to_be_visible(timeout=30_000)
        browser_kit.settled(page)
        tab_to(page, "Question or claim", reached)
        page.keyboard.type(flagship().proposition)
        tab_to(page, "Generate Pro & Con Debate", reached)  # leaving the box hands its text to the app
        page.keyboard.press("Enter")
        expect(page.get_by_text("MODERATOR SYNTHESIS")).to_be_visible(timeout=60_000)
        browser_kit.settled(page)
        tab_to(page, "Element to challenge", reached)
        tab_to(page, "Question an assumption", reached)
        back: list[dict] = []
        tab_to(page, "Element to challenge", back, key="Shift+Tab", limit=1)  # the order runs backwards too
        tab_to(page, "Question an assumption", back, limit=1)
        page.keyboard.press("Space")  # a button takes Space as well as Enter
        expect(page.get_by_text("Challenge · Question an assumption", exact=False).first).to_be_visible(
            timeout=60_000)
        browser_kit.settled(page)
        tab_to(page, "Jump to the answer ↑", reached)  # the answer's link, after the buttons
        page.keyboard.press("Enter")  # follows it: the next Tab goes on from the answer, far above the buttons
        page.keyboard.press("Tab")
        after_jump = focused(page)
        reached.append(after_jump)
        positive = page.evaluate("() => [...document.querySelectorAll('[tabindex]')].filter(e => e.tabIndex > 0)"
                                 ".map(e => e.outerHTML.slice(0, 80))")
    finally:
        page.close()
    names = [c["name"] for c in reached]
    # the main area itself takes the focus (Streamlit makes it scrollable by keyboard): a landmark, not a control
    unnamed = [c for c in reached if not c["name"] and c["role"] != "main"]
    assert not unnamed, f"controls without an accessible name: {unnamed}"
    unseen = [c for c in reached if not (c["visible"] and c["ring"])]
    assert not unseen, f"controls whose focus is not visible: {unseen}"
    assert positive == [], "no positive tabindex reorders the page"
    order = ["Question or claim", "Generate Pro & Con Debate", "Element to challenge", "Question an assumption",
             "Jump to the answer ↑"]
    assert sorted(order, key=names.index) == order, f"the order follows the page: {names}"
    assert after_jump and after_jump["name"].startswith("Challenge · Question an assumption"), \
        f"the jump link leads the keyboard to the answer: {after_jump}"
    first_main = next(i for i, c in enumerate(reached) if not c["sidebar"] and c["name"] != "Skip to main content")
    assert all(c["sidebar"] for c in reached[1:first_main]), "the sidebar comes first, then the page"


# -- a challenge asked where its element is shown -------------------------------------------------------------------


def ask_beside(page, element: str, label: str, action: str):
    """Open the "Challenge: <first words>" control beside ``element`` (named ``label``) and see it hold the element's
    whole text; the button for ``action`` in it, to tap."""
    expect = playwright.expect
    # click() scrolls the control into view itself, and finds it again when a rerun has just redrawn it (an explicit
    # scroll_into_view_if_needed failed with "not attached to the DOM" when a rerun replaced it in between)
    page.get_by_role("button", name=f"Challenge: {label}").click()
    body = page.get_by_test_id("stPopoverBody")
    expect(body.get_by_text(element, exact=True)).to_be_visible(timeout=10_000)
    return body.get_by_role("button", name=action)


def answered_beside(page, element: str, action: str) -> None:
    expect = playwright.expect
    answer = page.get_by_text(re.compile(rf"^The element rests on an assumption: .?{re.escape(element)}"))
    expect(answer).to_be_visible(timeout=30_000)
    expect(page.get_by_text(f"Challenge · {action}", exact=False).first).to_be_visible()
    expect(answer).to_be_in_viewport()  # the page goes to the answer
    shown, box = page.get_by_text(element, exact=True).first.bounding_box(), answer.bounding_box()
    assert 0 < box["y"] - shown["y"] < 400, f"the answer lands under its element: {shown} then {box}"


def test_a_challenge_is_asked_where_its_element_is_shown_at_1440_and_390(context, server):
    """Beside each argument, assumption and hinge of the user's own debate, a control named after the element opens
    that element's challenges: one tap asks it and the answer lands under it, on a desktop (1440 px) and on a phone
    (390 px), where the page does not scroll sideways; axe finds nothing serious with the control open."""
    page = context.new_page()
    try:
        page.goto(f"{server}/?debate={IDS['owned']}")
        playwright.expect(page.get_by_text("Challenge the reasoning")).to_be_visible(timeout=30_000)
        browser_kit.settled(page)
        page.get_by_role("button", name="Use it").click()  # the scripted model server the sidebar found
        playwright.expect(page.get_by_text("Using the OpenAI-compatible server", exact=False)).to_be_visible(
            timeout=30_000)
        browser_kit.settled(page)
        element = "Current monolith is maintainable"
        ask_beside(page, element, element, "Ask for stronger counterargument").click()
        answered_beside(page, element, "Ask for stronger counterargument")
        page.keyboard.press("Escape")  # the control closes
        browser_kit.settled(page)
        cut = {}
        for width in (780, 390):  # (780: the sidebar and the page side by side, both narrow)
            page.set_viewport_size({"width": width, "height": 844})
            page.wait_for_timeout(300)
            cut[width] = browser_kit.cut_off_buttons(page)

        element = "Teams can handle distributed system complexity"
        button = ask_beside(page, element, "Teams can handle distributed system…", "What evidence would change this?")
        result = run_axe(page)
        page.screenshot(path=str(browser_kit.ARTIFACTS / "challenge-beside-390.png"))
        width = page.evaluate("document.documentElement.scrollWidth")
        button.click()
        answered_beside(page, element, "What evidence would change this?")
    finally:
        page.close()
    assert cut == {780: [], 390: []}, f"every control shows its whole label: {cut}"
    assert width <= 400, f"no horizontal scrolling at 390 px with the control open (page is {width} px wide)"
    blocking = [v for v in result["violations"] if v["impact"] in BLOCKING or v["id"] in OWN_RULES]
    assert not blocking, f"a challenge control open at 390 px (axe-core {result['version']}):\n{report(blocking)}"
