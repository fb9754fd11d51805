"""What the browser tests share: `streamlit run app.py` on a free port, and Debian's Chromium under Playwright."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import free_port

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-quic"]


def streamlit_server(env: dict[str, str] | None = None) -> Iterator[str]:
    """Yield the URL of the dashboard running in a subprocess; stop it afterwards (a fixture body).

    It saves into a data folder of its own (``env`` may name one, or a ``DATABASE_URL``), never the user's
    ~/.clearside."""
    url, proc = start_streamlit(env)
    yield url
    stop_streamlit(proc)


def latency_dashboard(data: Path) -> Iterator[str]:
    """The dashboard on ``data`` with bench/latency_server.py as its OpenAI-compatible model (fast, no model
    loaded) and no Ollama to find; yields its URL."""
    from bench.latency_server import start

    with start(0, ttft=0.02, tps=800) as model_server:
        yield from streamlit_server({"CLEARSIDE_DATA": str(data), "OPENAI_BASE_URL": model_server.base_url,
                                     "OPENAI_API_KEY": "x", "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}"})


def stop_streamlit(proc: subprocess.Popen, seconds: float = 30) -> None:
    """SIGTERM, and fail (after a SIGKILL) with the end of its log when the dashboard does not stop in time."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        pytest.fail(f"streamlit did not stop within {seconds:.0f} s of SIGTERM; its log ends:\n{log_tail(proc)}")


def log_tail(proc: subprocess.Popen, chars: int = 4000) -> str:
    log = getattr(proc, "log_path", None)
    return Path(log).read_text(errors="replace")[-chars:] if log and Path(log).exists() else ""


def start_streamlit(env: dict[str, str] | None = None) -> tuple[str, subprocess.Popen]:
    """Start the dashboard in a subprocess and wait until it answers; its URL and process (the caller stops it)."""
    env = {"CLEARSIDE_DATA": tempfile.mkdtemp(prefix="clearside-browser-"), **(env or {})}
    env = {**{k: v for k, v in os.environ.items() if k != "DATABASE_URL"}, **env}  # a store only if env names one
    if not os.path.exists(CHROMIUM):
        pytest.fail("Debian's chromium is missing: scripts/test.sh installs it (apt-get install chromium)")
    port = free_port()
    # its output goes to a file: a pipe nobody reads fills up (64 KB of runtime logs) and blocks the dashboard
    log_path = Path(tempfile.mkdtemp(prefix="clearside-streamlit-")) / "streamlit.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
             "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, text=True, env=env)
    proc.log_path = log_path
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return url, proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    proc.wait(10)
    pytest.fail("streamlit did not start:\n" + log_tail(proc))


def chromium(playwright) -> Iterator:
    """Yield a headless Chromium browser (a fixture body)."""
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


# Visible buttons whose label does not fit (a cut label, "Exampl…"); a collapsed sidebar's are off-screen, not cut.
CUT_OFF_BUTTONS_JS = """() => [...document.querySelectorAll('button')]
  .filter(b => b.offsetParent && b.clientWidth > 0 && b.getBoundingClientRect().left >= 0)
  .filter(b => b.scrollWidth > b.clientWidth + 1
               || [...b.querySelectorAll('p, div, span')].some(e => e.scrollWidth > e.clientWidth + 1))
  .map(b => b.innerText.trim()).filter(Boolean)"""


def cut_off_buttons(page) -> list[str]:
    """The labels of the buttons on screen that are cut off at the page's width."""
    return page.evaluate(CUT_OFF_BUTTONS_JS)


def choose(page, combobox, option: str, seconds: float = 30) -> None:
    """Open ``combobox`` (a Streamlit select box) and click ``option`` in its list.

    A rerun that reaches the page between the click that opens the list and the click on the option (the first
    run of a page just opened, a fragment's tick) redraws the select box and closes its list; the list is opened
    again until ``seconds`` have passed."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + seconds
    while True:
        combobox.click()
        try:
            page.get_by_role("option", name=option).click(timeout=5_000)
            return
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise
            page.keyboard.press("Escape")


def settled(page) -> None:
    """Wait until the app has finished its rerun (Streamlit shows its status widget while it works)."""
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=30_000)
