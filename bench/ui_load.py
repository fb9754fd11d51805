"""What following a running debate in browser tabs costs the model (issue 14, item 12; goal: 5 tabs add <= 10%).

For each tab count (``--tabs``, default 0,1,3,5) one static debate on the embedded default is started from a
Chromium tab on `streamlit run app.py`; with 0 tabs that tab closes at once (the debate keeps running on the
server), otherwise the other tabs open its link and follow it too. The debate is over when the store says so.
Per run: wall time (click to done), the model's completion tokens and seconds (the debate's saved usage), model
seconds per 100 tokens (the figure to compare: the tiny model's replies differ in length from run to run), the
server process's CPU seconds and the Chromium processes' (the tabs run on the same machine). The server's first
debate also loads the GGUF and the embedding model, so each tab count gets a server of its own that first runs one
unmeasured debate; the measured one is then the server's second. The embedded model samples from a fixed seed, so
the n-th debate of a fresh server writes the same text whatever the tabs do (the completion tokens show it), and
the model seconds of the rows compare like for like. ``--gc on``
turns Streamlit's post-run garbage collection back on (its default, which this repository's
.streamlit/config.toml turns off) to show what it cost.

Run from the repository root, on an otherwise idle machine:
python bench/ui_load.py [--tabs 0,1,3,5] [--repeat 1] [--poll SECONDS]
Writes bench/results/ui_load.json and prints a Markdown table with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
from browser_kit import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from helpers import free_port  # noqa: E402

from clearside.store import Store  # noqa: E402

QUESTION = "Should a mid-sized city ban private cars from its historic center?"
RESULTS = ROOT / "bench" / "results"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def browser_cpu_seconds() -> float:
    """CPU seconds of every Chromium process alive now (the tabs run on this machine too, beside the model)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if "(chromium)" in (text := stat.read_text()):
                fields = text.rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / TICKS
        except OSError:
            continue
    return total


def serve(data: Path, gc: bool, poll: str | None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "CLEARSIDE_DATA": str(data), **({"CLEARSIDE_POLL_SECONDS": poll} if poll else {})}
    env.pop("DATABASE_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.address", "127.0.0.1", "--server.port", str(port),
                             "--runner.postScriptGC", "true" if gc else "false"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("streamlit did not start")


def one(browser, url: str, store: Store, tabs: int, server_pid: int) -> dict:
    first = browser.new_page(viewport={"width": 1440, "height": 900})
    first.goto(url)
    box = first.get_by_role("textbox", name="Question or claim")
    expect(box).to_be_visible(timeout=60_000)
    box.fill(QUESTION)
    cpu0, browser0 = cpu_seconds(server_pid), browser_cpu_seconds()
    started = time.perf_counter()
    first.get_by_role("button", name="Generate Pro & Con Debate").click()
    first.wait_for_url("**debate=*", timeout=60_000)
    debate_id = first.url.split("debate=")[1][:32]
    pages = [first]
    if tabs == 0:
        first.close()
        pages = []
    for _ in range(max(tabs - 1, 0)):
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(f"{url}/?debate={debate_id}")
        pages.append(page)
    while (record := store.get(debate_id)).status in ("queued", "running"):  # the runtime queues it first
        time.sleep(0.5)
    wall = time.perf_counter() - started
    cpu, browser = cpu_seconds(server_pid) - cpu0, browser_cpu_seconds() - browser0
    for page in pages:
        page.close()
    usage = (record.data or {}).get("usage") or {}
    tokens = sum(u.get("completion_tokens", 0) for u in usage.values())
    seconds = sum(u.get("seconds", 0.0) for u in usage.values())
    return {"tabs": tabs, "status": record.status, "wall": round(wall, 1), "tokens": tokens,
            "model_seconds": round(seconds, 1), "per_100_tokens": round(100 * seconds / tokens, 2) if tokens else None,
            "server_cpu": round(cpu, 1), "browser_cpu": round(browser, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabs", default="0,1,3,5")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--gc", choices=("on", "off"), default="off")
    parser.add_argument("--poll", default=None, help="seconds between the Debate page's redraws "
                        "(CLEARSIDE_POLL_SECONDS; default: the page's own)")
    args = parser.parse_args()
    counts = [int(n) for n in args.tabs.split(",")]
    load_start = [round(x, 2) for x in os.getloadavg()]
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for _ in range(args.repeat):
            for tabs in counts:
                data = Path(tempfile.mkdtemp(prefix="clearside-ui-load-"))
                proc, url = serve(data, args.gc == "on", args.poll)
                try:
                    store = Store(f"sqlite:///{data / 'clearside.db'}")
                    one(browser, url, store, 0, proc.pid)  # loads the models; not measured
                    row = one(browser, url, store, tabs, proc.pid)
                    store.close()
                finally:
                    proc.terminate()
                    proc.wait(30)
                print(row, file=sys.stderr, flush=True)
                rows.append(row)
        browser.close()
    report = {"gc": args.gc, "poll": args.poll, "load_start": load_start,
              "load_end": [round(x, 2) for x in os.getloadavg()], "cpu_count": os.cpu_count(), "rows": rows}
    RESULTS.mkdir(exist_ok=True)
    name = f"ui_load-gc-{args.gc}-poll-{args.poll or 'default'}.json"
    (RESULTS / name).write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"Streamlit post-run GC {args.gc}; poll {args.poll or 'default'} s; load {load_start} → "
          f"{report['load_end']} on {os.cpu_count()} cores\n")
    print("| tabs | status | wall s | completion tokens | model s | model s / 100 tokens | server CPU s | "
          "browser CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['tabs']} | {r['status']} | {r['wall']} | {r['tokens']} | {r['model_seconds']} | "
              f"{r['per_100_tokens']} | {r['server_cpu']} | {r['browser_cpu']} |")


if __name__ == "__main__":
    main()
