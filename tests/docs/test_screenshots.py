"""The dashboard screenshots the documentation shows (docs/assets/screenshots/), taken from today's pages.

The dashboard and its store are tests/ui/test_browser_a11y.py's fixtures, reused: `streamlit run app.py` on a
store that holds the fixture debate (this browser's own copy), a finished live debate and perspectives session
(the scripted provider), two regression batches and a saved comparison of two models, with a scripted
OpenAI-compatible server on 127.0.0.1. Each page is opened in Debian's Chromium at 1440x900, checked to show what
it should, and saved as a full-page PNG where the docs find it; commit the PNGs a run writes. A shot that differs
from the saved one in under 0.1% of its pixels (the scripted server's port, the times: a word or two of the page as
well) leaves the saved one as it is, so a run on unchanged pages leaves the work tree clean;
``CLEARSIDE_SCREENSHOTS=refresh`` writes every shot regardless.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from browser_kit import settled
from PIL import Image, ImageChops
from test_browser_a11y import IDS, browser, context, model_server, server  # noqa: F401  (fixtures by name)

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

# The page's whole height: Streamlit scrolls its main area inside the window (a full-page screenshot of the window
# would stop at the viewport), so the window is made as tall as the tallest scrolling area's content.
HEIGHT_JS = """() => Math.max(document.documentElement.scrollHeight, ...[...document.querySelectorAll('*')]
  .filter(e => /(auto|scroll)/.test(getComputedStyle(e).overflowY) && e.scrollHeight > e.clientHeight)
  .map(e => e.scrollHeight + e.getBoundingClientRect().top))"""
UNCHANGED = 0.05  # of the pixels: a shot that differs in fewer (dates, ports, a chart's x axis) leaves the saved one
MAX_HEIGHT = 6000  # px: a long debate is cut here rather than made into a huge image
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "assets" / "screenshots"

# (file, address after the server's, texts the page shows once it is drawn)
SHOTS = [
    ("debate", lambda: f"?debate={IDS['owned']}", ["MODERATOR SYNTHESIS", "Challenge the reasoning"]),
    ("live", lambda: f"live?live={IDS['live']}", ["This live debate is finished"]),
    ("perspectives", lambda: f"perspectives?perspectives={IDS['perspectives']}", ["Conclusions"]),
    ("library", lambda: "library", ["saved debate"]),
    ("regression", lambda: "regression", ["Compare two batches"]),
    ("compare", lambda: f"compare?compare={IDS['compare']}", ["Earlier comparisons"]),
]


@pytest.mark.parametrize(("name", "address", "shown"), SHOTS, ids=[shot[0] for shot in SHOTS])
def test_the_docs_screenshot_of_each_page(context, server, name, address, shown):  # noqa: F811
    expect = playwright.expect
    page = context.new_page()
    try:
        page.goto(f"{server}/{address()}")
        for text in shown:
            expect(page.get_by_text(text, exact=False).first).to_be_visible(timeout=60_000)
        settled(page)
        if name == "library":
            expect(page.locator("[data-testid='stDataFrame']").first).to_be_visible(timeout=30_000)
        assert page.get_by_test_id("stException").count() == 0, f"{name}: the page shows an error"
        page.wait_for_timeout(1500)  # charts and tables draw just after their frames
        height = min(MAX_HEIGHT, max(900, int(page.evaluate(HEIGHT_JS))))
        page.set_viewport_size({"width": 1440, "height": height})
        page.wait_for_timeout(1000)  # the page lays itself out again at the new height
        settled(page)
        shot = page.screenshot(full_page=True)
    finally:
        page.close()
    assert len(shot) > 10_000
    path = SCREENSHOTS / f"{name}.png"
    refresh = os.environ.get("CLEARSIDE_SCREENSHOTS") == "refresh"
    if refresh or not (path.is_file() and same_picture(path.read_bytes(), shot)):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path.write_bytes(shot)


def same_picture(saved: bytes, shot: bytes) -> bool:
    """The same size, and all but a few pixels (``UNCHANGED``) alike."""
    before, after = (Image.open(io.BytesIO(data)).convert("RGB") for data in (saved, shot))
    if before.size != after.size:
        return False
    changed = ImageChops.difference(before, after).convert("L").point(lambda value: 255 if value else 0)
    return changed.histogram()[255] <= UNCHANGED * before.size[0] * before.size[1]
