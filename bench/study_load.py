"""Load on study mode: 100 participants at once on PostgreSQL, and nothing lost.

1. A throwaway PostgreSQL server (tests/pg_kit.py, Debian's binaries; ``CLEARSIDE_TEST_DATABASE_URL`` names an
   existing one instead) and bench/latency_server.py in its own process (the OpenAI wire at a fixed pace, the
   flagship debate's replies: the model costs no CPU).
2. A study made as its creator makes it from the command line: ``python -m clearside study create`` with the flagship
   question and two arms, the full debate (generated on the durable runtime, an in-process host, on the latency
   server) and sources only (a short text file), timed.
3. ``--participants`` (default 100) participants at once, each a thread of this process (as one dashboard server
   holds its sessions: one store, one connection pool), released together by a barrier: join (the balanced draw,
   the study locked per join), the "before" answer, the arm's material read, the "after" answer, the re-test,
   through the library API the dashboard's pages call (:mod:`clearside.quality.study`). Each answer is the
   understanding check's, a few reasons long.
4. Checked afterwards against the database: answers stored against answers sent (**lost**: sent, acknowledged and
   not stored), participants stored, the arms' balance, errors (any exception in a participant's thread); the
   latency of each operation (p50, p95, max) and the wall time; the results computed once at the end (every answer
   matched with MiniLM) and timed; the machine's load (1, 5, 15 min) before and after.

Run from the repository root:  python bench/study_load.py [--participants 100]
Writes bench/results/study_load.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import pg_kit  # noqa: E402

from bench.latency_server import MODEL  # noqa: E402
from bench.load import latency_server, loadavg, spread  # noqa: E402
from bench.run_all import git  # noqa: E402

RESULTS = ROOT / "bench" / "results"
NOTES = (b"Data centres use huge amounts of electricity and water. Laws cannot keep up with how fast AI is moving. "
         b"Pauses tend to become permanent.")
BEFORE = ("Laws cannot keep up with how fast AI is moving", "")
AFTER = ("Laws cannot keep up with how fast AI is moving\nData centres use huge amounts of electricity and water",
         "Pauses tend to become permanent\n=cmd|' /C calc'!A0")
OPERATIONS = ("join", "before", "read", "after", "retest")


def create_study(url: str, base_url: str, folder: Path) -> tuple[str, float]:
    """``study create`` run as a user runs it; the study's id and the seconds it took (documents made)."""
    from clearside.quality.references import flagship

    (folder / "notes.txt").write_bytes(NOTES)
    env = {**os.environ, "DATABASE_URL": url, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "x",
           "CLEARSIDE_DATA": str(folder)}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "clearside", "study", "create", "--title", "Load", "--question",
                           flagship().proposition, "--arm", "debate", "--arm", "sources", "--source",
                           f"1={folder / 'notes.txt'}", "--provider", f"openai:{MODEL}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise SystemExit(f"study create failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1], round(time.monotonic() - started, 2)


def participant(store: Any, study_id: str, join_key: str, gate: threading.Barrier,
                out: dict[str, Any]) -> None:
    """One participant's whole way through, each operation timed; any exception is an error."""
    from clearside.quality import study

    timings: dict[str, float] = {}
    out["timings"], out["sent"] = timings, 0
    try:
        gate.wait()

        def timed(name: str, call: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.monotonic()
            value = call(*args, **kwargs)
            timings[name] = time.monotonic() - started
            return value

        token, row = timed("join", study.join, store, study_id, join_key)
        out["arm"] = row.arm
        timed("before", study.answer, store, study_id, token, "before", *BEFORE, lean=0, confidence=40)
        out["sent"] += 1
        timed("read", study.material, store, study_id, row.question, row.arm)
        timed("after", study.answer, store, study_id, token, "after", *AFTER, lean=1, confidence=60)
        out["sent"] += 1
        timed("retest", study.answer, store, study_id, token, "retest", BEFORE[0], "", lean=1)
        out["sent"] += 1
    except Exception as exc:  # noqa: BLE001 - every failure is counted and named
        out["error"] = f"{type(exc).__name__}: {exc}"[:300]


def crowd(store: Any, study_id: str, join_key: str, count: int) -> tuple[list[dict[str, Any]], float]:
    outs: list[dict[str, Any]] = [{} for _ in range(count)]
    gate = threading.Barrier(count)
    threads = [threading.Thread(target=participant, args=(store, study_id, join_key, gate, outs[i]))
               for i in range(count)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    return outs, round(time.monotonic() - started, 2)


def figures(store: Any, study_id: str, outs: list[dict[str, Any]], wall: float) -> dict[str, Any]:
    from clearside.quality import study

    stored = store.study_answers(study_id)
    joined = store.participants(study_id)
    arms: dict[str, int] = {}
    for person in joined:
        arms[person.arm] = arms.get(person.arm, 0) + 1
    errors = [o["error"] for o in outs if "error" in o]
    sent = sum(o.get("sent", 0) for o in outs)
    started = time.monotonic()
    found = study.results(store, study_id)
    results_s = round(time.monotonic() - started, 2)
    return {"participants": len(outs), "joined": len(joined), "errors": len(errors), "error_samples": errors[:5],
            "answers_sent": sent, "answers_stored": len(stored), "lost": sent - len(stored), "arms": arms,
            "wall_s": wall, "latency_s": {op: spread([o["timings"][op] for o in outs if op in o.get("timings", {})])
                                          for op in OPERATIONS},
            "results_s": results_s,
            "gain_n": {arm: d["gains"]["after-before"]["named_total"]["n"] for arm, d in found["arms"].items()}}


def run(count: int) -> dict[str, Any]:
    from clearside.store import Store

    result: dict[str, Any] = {"commit": git("rev-parse", "--short=10", "HEAD"), "cpus": os.cpu_count(),
                              "load_before": loadavg(), "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    folder = Path(tempfile.mkdtemp(prefix="clearside-study-load-"))
    with pg_kit.server() as admin, latency_server(0.05, 400.0, folder) as (base_url, _stats):
        url = pg_kit.new_database(admin)
        study_id, result["create_s"] = create_study(url, base_url, folder)
        store = Store(url)
        made = store.study(study_id)
        outs, wall = crowd(store, study_id, made.join_key, count)
        result |= figures(store, study_id, outs, wall)
        store.close()
    result["load_after"] = loadavg()
    return result


def table(result: dict[str, Any]) -> str:
    lines = [f"{result['participants']} participants at once (threads of one process, one store), PostgreSQL, "
             f"commit `{result['commit']}`, {result['cpus']} CPUs, {result['at']}. Load {result['load_before']} -> "
             f"{result['load_after']}.", "",
             "| figure | value |", "|---|---|",
             f"| study created, its debate made on the runtime (latency server) | {result['create_s']} s |",
             f"| errors | {result['errors']} |",
             f"| answers sent / stored / lost | {result['answers_sent']} / {result['answers_stored']} / "
             f"{result['lost']} |",
             f"| participants stored | {result['joined']} |",
             f"| arms | {', '.join(f'{arm} {n}' for arm, n in sorted(result['arms'].items()))} |",
             f"| wall time, all participants | {result['wall_s']} s |",
             f"| results computed once (every answer matched) | {result['results_s']} s |"]
    lines += [f"| {op}: p50 / p95 / max | {s['p50']} / {s['p95']} / {s['max']} s |"
              for op, s in result["latency_s"].items()]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--participants", type=int, default=100)
    args = parser.parse_args()
    result = run(args.participants)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "study_load.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(table(result))
    if result["errors"] or result["lost"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
