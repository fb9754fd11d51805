"""What following a running debate in browser tabs costs the model (goal: 5 tabs add <= 10%).

For each tab count (``--tabs``, default 0,1,3,5) a fresh `streamlit run app.py` on the embedded default first runs
one unmeasured debate (it loads the GGUF and the embedding model). Then a second debate is generated from a
Chromium tab and, while it holds the model, the measured one is queued from the command line (``debate
--enqueue``: the dashboard's host runs it next) and the tabs open its link; each shows it queued. Opening a
Streamlit tab costs a few CPU seconds of page load, once; the question here is what *following* costs, so the
clock and the CPU counters start when the measured debate starts running, every tab loaded, and stop when the
store says it is over. Per run: wall time, the model's completion tokens and seconds (the debate's saved usage),
model seconds per 100 tokens, the server process's CPU seconds and the CPU seconds of the Chromium processes this
bench started (the tabs run on the same machine as the model here; ``--browser-nice 19`` runs them at the lowest
priority, as browsers on other machines would take nothing from the model). The embedded model samples from a
fixed seed, so the n-th debate of a fresh server writes the same text whatever the tabs do (the completion tokens
show it), and the rows compare like for like. ``--gc on``
turns Streamlit's post-run garbage collection back on (its default, which this repository's
.streamlit/config.toml turns off) to show what it cost.

Run from the repository root, on an otherwise idle machine:
python bench/ui_load.py [--tabs 0,1,3,5] [--repeat 1] [--poll SECONDS] [--browser-nice 19]
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
    """CPU seconds of the Chromium processes this bench started, alive now (the tabs run on this machine too,
    beside the model; another program's Chromium is not counted)."""
    stats, parents = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        pid = int(stat.parent.name)
        parents[pid] = int(fields[1])
        if "(chromium)" in text:
            stats[pid] = (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime

    def ours(pid: int) -> bool:
        while pid > 1:
            if pid == os.getpid():
                return True
            pid = parents.get(pid, 0)
        return False

    return sum(seconds for pid, seconds in stats.items() if ours(pid))


def niced(level: int) -> str:
    """Chromium's path, or a wrapper that runs it at niceness ``level`` (the tabs' processes inherit it)."""
    if not level:
        return CHROMIUM
    wrapper = Path(tempfile.mkdtemp(prefix="clearside-nice-")) / "chromium"
    wrapper.write_text(f'#!/bin/sh\nexec nice -n {level} {CHROMIUM} "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return str(wrapper)


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


def start_from_tab(browser, url: str) -> tuple:
    """Generate a debate from a new tab, as a user does; ``(page, debate id)``."""
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(url)
    box = page.get_by_role("textbox", name="Question or claim")
    expect(box).to_be_visible(timeout=60_000)
    box.fill(QUESTION)
    page.get_by_role("button", name="Generate Pro & Con Debate").click()
    page.wait_for_url("**debate=*", timeout=60_000)
    return page, page.url.split("debate=")[1][:32]


def wait_status(store: Store, debate_id: str, leave: tuple[str, ...]) -> str:
    while (status := store.get(debate_id).status) in leave:
        time.sleep(0.1)
    return status


def enqueue(data: Path) -> str:
    """The measured debate, queued from the command line: the dashboard's host runs it when the model is free."""
    env = {**os.environ, "CLEARSIDE_DATA": str(data)}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-m", "clearside", "debate", QUESTION, "--enqueue"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.split()[0]


def one(browser, url: str, data: Path, store: Store, tabs: int, server_pid: int) -> dict:
    """The measured debate, followed by ``tabs`` tabs opened while an earlier debate holds the model: the clock
    and the CPU counters start when the measured debate starts running, after every tab has loaded."""
    first, blocker = start_from_tab(browser, url)
    measured = enqueue(data)
    first.goto("about:blank")
    pages = [first]
    for n in range(tabs):
        page = first if n == 0 else browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(f"{url}/?debate={measured}")
        expect(page.get_by_text("Queued", exact=False).first).to_be_visible(timeout=60_000)
        pages.append(page) if n else None
    if store.get(blocker).status not in ("queued", "running"):
        raise SystemExit("the tabs loaded after the first debate finished: the measured one started unfollowed")
    wait_status(store, measured, ("queued",))
    cpu0, browser0 = cpu_seconds(server_pid), browser_cpu_seconds()
    started = time.perf_counter()
    status = wait_status(store, measured, ("running",))
    wall = time.perf_counter() - started
    cpu, browser = cpu_seconds(server_pid) - cpu0, browser_cpu_seconds() - browser0
    for page in pages:
        page.close()
    record = store.get(measured)
    usage = (record.data or {}).get("usage") or {}
    tokens = sum(u.get("completion_tokens", 0) for u in usage.values())
    seconds = sum(u.get("seconds", 0.0) for u in usage.values())
    return {"tabs": tabs, "status": status, "wall": round(wall, 1), "tokens": tokens,
            "model_seconds": round(seconds, 1), "per_100_tokens": round(100 * seconds / tokens, 2) if tokens else None,
            "server_cpu": round(cpu, 1), "browser_cpu": round(browser, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabs", default="0,1,3,5")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--gc", choices=("on", "off"), default="off")
    parser.add_argument("--browser-nice", type=int, default=0, help="run Chromium at this niceness (19: the tabs "
                        "take only the CPU the model leaves, as browsers on other machines would)")
    parser.add_argument("--poll", default=None, help="seconds between the Debate page's redraws "
                        "(CLEARSIDE_POLL_SECONDS; default: the page's own)")
    args = parser.parse_args()
    counts = [int(n) for n in args.tabs.split(",")]
    load_start = [round(x, 2) for x in os.getloadavg()]
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=niced(args.browser_nice), headless=True, args=CHROMIUM_ARGS)
        for _ in range(args.repeat):
            for tabs in counts:
                data = Path(tempfile.mkdtemp(prefix="clearside-ui-load-"))
                proc, url = serve(data, args.gc == "on", args.poll)
                try:
                    store = Store(f"sqlite:///{data / 'clearside.db'}")
                    page, warm = start_from_tab(browser, url)  # loads the models; not measured
                    page.close()
                    wait_status(store, warm, ("queued", "running"))
                    row = one(browser, url, data, store, tabs, proc.pid)
                    store.close()
                finally:
                    proc.terminate()
                    proc.wait(30)
                print(row, file=sys.stderr, flush=True)
                rows.append(row)
        browser.close()
    report = {"gc": args.gc, "poll": args.poll, "browser_nice": args.browser_nice, "load_start": load_start,
              "load_end": [round(x, 2) for x in os.getloadavg()], "cpu_count": os.cpu_count(), "rows": rows}
    RESULTS.mkdir(exist_ok=True)
    name = f"ui_load-gc-{args.gc}-poll-{args.poll or 'default'}-nice-{args.browser_nice}.json"
    (RESULTS / name).write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"Streamlit post-run GC {args.gc}; poll {args.poll or 'default'} s; Chromium nice {args.browser_nice}; "
          f"load {load_start} → {report['load_end']} on {os.cpu_count()} cores\n")
    print("| tabs | status | wall s | completion tokens | model s | model s / 100 tokens | server CPU s | "
          "browser CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['tabs']} | {r['status']} | {r['wall']} | {r['tokens']} | {r['model_seconds']} | "
              f"{r['per_100_tokens']} | {r['server_cpu']} | {r['browser_cpu']} |")


if __name__ == "__main__":
    main()
