"""Scale-out of the durable runtime: a regression batch of 24 debates (``regress --enqueue``'s workflow) run by
1, 2 and 4 ``python -m clearside worker`` processes, and the runtime's cost per step against the engine run on threads.

The model is bench/latency_server.py on 127.0.0.1 (the OpenAI-compatible wire, a fixed time to first token and
tokens/s per request, each request on its own): what is measured is ClearSide's queueing, checkpointing and
store writes, not a model's CPU time. The store and the runtime's system database are a throwaway PostgreSQL
server started from Debian's binaries (tests/pg_kit.py), as a team would run them; ``--sqlite`` uses a SQLite
file instead. Each worker serves up to ``--concurrency`` jobs at once (the team-wide setting of the server queue).

Run from the repository root:  python bench/scale.py [--debates 24] [--workers 1 2 4] [--sqlite]
Writes bench/results/scale.json. Results depend on machine load, which is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import pg_kit  # noqa: E402

from bench.latency_server import MODEL, start  # noqa: E402
from clearside import modes, runtime  # noqa: E402
from clearside.providers.openai_compat import OpenAIProvider  # noqa: E402
from clearside.quality import workflow as batches  # noqa: E402
from clearside.quality.references import flagship  # noqa: E402
from clearside.static import workflow as workflows  # noqa: E402
from clearside.static.engine import Engine  # noqa: E402
from clearside.static.recorder import StaticRecorder  # noqa: E402
from clearside.static.run import DebateRun  # noqa: E402
from clearside.store import open_store  # noqa: E402

STEPS = 4  # per static debate: orchestrator, advocates, moderator, finish


@contextlib.contextmanager
def databases(sqlite: bool):
    """Yields a function giving a fresh, empty store URL each call."""
    if sqlite:
        folder = Path(tempfile.mkdtemp(prefix="clearside-scale-"))
        count = iter(range(1000))
        yield lambda: f"sqlite:///{folder / f'store-{next(count)}.db'}"
        return
    with pg_kit.server() as admin:
        yield lambda: pg_kit.new_database(admin)


def workers(n: int, url: str, concurrency: int, logs: Path) -> list[subprocess.Popen]:
    env = {**os.environ, "DATABASE_URL": url, "OPENAI_API_KEY": "not-needed", "PYTHONUNBUFFERED": "1"}
    made = []
    for i in range(n):
        out = (logs / f"worker-{n}-{i}.log").open("w")
        made.append(subprocess.Popen([sys.executable, "-m", "clearside", "worker", "--concurrency", str(concurrency)],
                                     cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT))
    for i in range(n):
        log = logs / f"worker-{n}-{i}.log"
        deadline = time.monotonic() + 120
        while "serving queued" not in log.read_text():
            if time.monotonic() > deadline or made[i].poll() is not None:
                raise SystemExit(f"worker {i} did not start:\n{log.read_text()}")
            time.sleep(0.1)
    return made


def drain(n: int, url: str, server, debates: int, concurrency: int, logs: Path) -> dict:
    os.environ["DATABASE_URL"] = url
    server.reset()
    started = workers(n, url, concurrency, logs)
    try:
        provider = OpenAIProvider(MODEL, base_url=server.base_url)
        t0 = time.monotonic()
        batch = batches.enqueue_regress("flagship", provider, batches.RegressSettings(runs=debates, retries=1),
                                        lend=False)
        while not runtime.state(batch).finished:
            time.sleep(0.1)
        seconds = time.monotonic() - t0
        report = runtime.state(batch).result["report"]
        states = {d["status"] for d in report["debates"]} | ({"cancelled"} if len(report["debates"]) < debates
                                                           else set())
    finally:
        for process in started:
            process.terminate()
        for process in started:
            process.wait(timeout=30)
        runtime.reset()
    return {"workers": n, "debates": debates, "seconds": round(seconds, 2),
            "per_minute": round(debates / seconds * 60, 1), "states": sorted(states),
            "requests": server.stats()["agents"], "max_in_flight": server.stats()["max_in_flight"]}


def overhead(url: str, server, debates: int) -> dict:
    """Seconds per step the runtime adds: the same debates in this process, on the engine's threads and as
    workflows hosted here (the same latency server, one debate at a time)."""
    os.environ["DATABASE_URL"] = url
    provider = OpenAIProvider(MODEL, base_url=server.base_url)
    store = open_store()
    t0 = time.monotonic()
    for _ in range(debates):
        run = DebateRun.from_input(flagship().proposition)
        recorder = StaticRecorder(store, run, provider)
        recorder.finish(Engine(provider, retries=1, on_section=recorder.on_section).run(run), run)
    threads = (time.monotonic() - t0) / debates
    modes.host(role="bench")
    try:
        t0 = time.monotonic()
        for _ in range(debates):
            debate_id = StaticRecorder(store, DebateRun.from_input(flagship().proposition), provider).id
            workflows.enqueue_static(debate_id, provider, retries=1)
            while not runtime.state(debate_id).finished:
                time.sleep(0.01)
        durable = (time.monotonic() - t0) / debates
    finally:
        runtime.reset()
    return {"debates": debates, "threads_s": round(threads, 3), "runtime_s": round(durable, 3),
            "per_step_ms": round((durable - threads) / STEPS * 1000, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--debates", type=int, default=24)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--concurrency", type=int, default=4, help="jobs each worker runs at once")
    parser.add_argument("--ttft", type=float, default=0.3)
    parser.add_argument("--tps", type=float, default=60.0)
    parser.add_argument("--sqlite", action="store_true", help="a SQLite file instead of PostgreSQL")
    args = parser.parse_args()
    load = os.getloadavg()
    logs = Path(tempfile.mkdtemp(prefix="clearside-scale-logs-"))
    rows = []
    with databases(args.sqlite) as fresh, start(0, ttft=args.ttft, tps=args.tps) as server:
        for n in args.workers:
            row = drain(n, fresh(), server, args.debates, args.concurrency, logs)
            rows.append(row)
            print(json.dumps(row), flush=True)
        ideal = rows[0]["per_minute"] / rows[0]["workers"]
        for row in rows:
            row["ratio_to_ideal"] = round(row["per_minute"] / (ideal * row["workers"]), 2)
        server.reset()
        cost = overhead(fresh(), server, 10)
        print(json.dumps(cost), flush=True)
    result = {"store": "sqlite" if args.sqlite else "postgresql", "ttft": args.ttft, "tps": args.tps,
              "concurrency": args.concurrency, "load_before": [round(x, 2) for x in load],
              "load_after": [round(x, 2) for x in os.getloadavg()], "drain": rows, "overhead": cost, "logs": str(logs)}
    out = ROOT / "bench" / "results" / "scale.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print("\n| workers | seconds | debates/min | ratio to ideal |\n|---|---|---|---|")
    for row in rows:
        print(f"| {row['workers']} | {row['seconds']} | {row['per_minute']} | {row['ratio_to_ideal']} |")
    print(f"\nper step: threads {cost['threads_s']} s/debate, runtime {cost['runtime_s']} s/debate, "
          f"overhead {cost['per_step_ms']} ms/step; load {result['load_before']} -> {result['load_after']}")


if __name__ == "__main__":
    main()
