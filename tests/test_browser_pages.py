"""Real browser, no model: the dashboard's input policy, the Library's filters and Compare's preflight.

Debian's Chromium under Playwright against `streamlit run app.py` with a store of its own that holds one
imported debate (the Library needs one to show its filters) and an Ollama host where nothing listens.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import browser_kit
import pytest
from helpers import free_port

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "microservices.json"
QUESTION = "Should we adopt microservices?"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("clearside-data")
    env = {**os.environ, "CLEARSIDE_DATA": str(data)}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-m", "clearside", "import", str(FIXTURE)], cwd=browser_kit.ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    yield from browser_kit.streamlit_server({"CLEARSIDE_DATA": str(data),
                                             "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}"})


@pytest.fixture(scope="module")
def browser():
    yield from browser_kit.chromium(playwright)


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    yield page
    page.close()


def settled(page) -> None:
    """Wait until the app has finished its rerun (Streamlit marks the app "running" while it works)."""
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=30_000)


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
    settled(page)
    expect(search).to_have_value("")


def test_compare_refuses_an_unreachable_model_before_starting(server, page):
    expect = playwright.expect
    page.goto(f"{server}/compare")
    question = page.get_by_role("textbox", name="Question or claim")
    expect(question).to_be_visible(timeout=30_000)
    question.fill(QUESTION)
    question.press("Control+Enter")
    settled(page)
    second = page.get_by_role("textbox", name="Model 2")
    second.fill("ollama:llama3.2")
    second.press("Enter")
    settled(page)
    page.get_by_role("button", name="Compare", exact=True).click()
    expect(page.get_by_text("Model 2 (ollama:llama3.2) cannot run, so nothing was started", exact=False)).to_be_visible(
        timeout=30_000)
    expect(page.get_by_text("Ollama is not reachable", exact=False).first).to_be_visible()
    assert "compare=" not in page.url, "no comparison was started"
    expect(second).to_have_value("ollama:llama3.2")
