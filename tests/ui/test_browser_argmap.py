"""Real browser: the argument map of the example (flagship) debate in Debian's Chromium at 1440 and 390 px: the
layout that fits is the one shown, it fits the width, its texts are the debate's, nothing is fetched from another
host, the nested list is there for screen readers, and axe-core (WCAG 2 A/AA) finds nothing serious or critical."""

from __future__ import annotations

import base64
from pathlib import Path

import browser_kit
import pytest
from helpers import free_port

playwright = pytest.importorskip("playwright.sync_api")
axe_package = pytest.importorskip("axe_playwright_python")
pytestmark = pytest.mark.browser

AXE_JS = Path(axe_package.__file__).parent / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
RUN_AXE_JS = """async (tags) => {
  const results = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return results.violations.filter(v => ['serious', 'critical'].includes(v.impact))
    .map(v => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.slice(0, 3).map(n => n.target.join(' >> ')).join(', ')}`);
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("clearside-argmap")
    yield from browser_kit.streamlit_server({"CLEARSIDE_DATA": str(data),
                                             "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}"})


@pytest.fixture(scope="module")
def browser():
    yield from browser_kit.chromium(playwright)


@pytest.mark.parametrize(("width", "shown", "hidden"), [(1440, "cs-map-wide", "cs-map-narrow"),
                                                        (390, "cs-map-narrow", "cs-map-wide")])
def test_the_map_fits_each_width_and_axe_finds_nothing_serious(server, browser, width, shown, hidden):
    expect = playwright.expect
    page = browser.new_page(viewport={"width": width, "height": 900})
    hosts = set()
    page.on("request", lambda request: hosts.add(request.url.split("/")[2]))
    page.goto(f"{server}/?example=flagship")
    page.get_by_text("Argument map", exact=True).click()
    drawing = page.locator(f".{shown} img")
    expect(drawing).to_be_visible(timeout=30_000)
    expect(page.locator(f".{hidden} img")).to_be_hidden()
    assert drawing.evaluate("img => img.complete && img.naturalWidth > 0"), "the SVG draws"
    box = drawing.bounding_box()
    assert box["width"] > 0.6 * min(width, 700) and box["x"] + box["width"] <= width, box
    svg = base64.b64decode(drawing.get_attribute("src").split(",", 1)[1]).decode("utf-8")
    assert "FOR assumption 4" in svg and "Precaution is justified" in svg and "<script" not in svg
    assert drawing.get_attribute("alt").startswith("Argument map: Should the United States")
    assert drawing.evaluate("img => getComputedStyle(img).display") != "none"
    if width == 390:  # one column: every box's text at least 10 px high on the phone's screen
        scale = box["width"] / 360
        assert 14 * scale >= 10, scale
    page.get_by_role("tab", name="As a list").click()
    expect(page.get_by_text("AGAINST assumption 2: Other nations will not adopt similar pauses.")).to_be_visible()
    page.add_script_tag(path=str(AXE_JS))
    serious = page.evaluate(RUN_AXE_JS, TAGS)
    assert serious == [], "\n".join(serious)
    assert hosts <= {server.split("/")[2]}, f"fetched from another host: {hosts}"
    page.close()


HOSTILE_MAP = {"nodes": [{"nodeID": 1, "text": "Cities should ban cars", "type": "I"},
                         {"nodeID": 2, "text": "<img src=x onerror=\"window.__pwned=1\"> cars pollute", "type": "I"},
                         {"nodeID": 3, "text": "Default Inference", "type": "RA"},
                         {"nodeID": 4, "text": "Bob: cars pollute", "type": "L"}],
               "edges": [{"edgeID": 1, "fromID": 2, "toID": 3}, {"edgeID": 2, "fromID": 3, "toID": 1}]}


def test_a_foreign_aif_map_uploaded_in_the_library_is_kept_read_only_and_escaped(server, browser, tmp_path):
    import json

    expect = playwright.expect
    path = tmp_path / "other-tool.json"
    path.write_text(json.dumps(HOSTILE_MAP), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{server}/library")
    page.get_by_text("Import a debate or an argument map").click()
    page.locator("input[type=file]").set_input_files(str(path))
    expect(page.get_by_text("Imported other-tool.json as a read-only map")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Placed 2 claim(s) and 1 support or attack link(s)").first).to_be_visible()
    expect(page.get_by_text('Pro: <img src=x onerror="window.__pwned=1"> cars pollute').first).to_be_visible()
    page.reload()
    expect(page.get_by_text("Imported maps (1)")).to_be_visible(timeout=30_000)
    page.get_by_text("Imported maps (1)").click()
    expect(page.get_by_text("Read-only map from other-tool.json")).to_be_visible()
    assert page.evaluate("window.__pwned") is None, "the map's text ran as HTML"
    page.close()
