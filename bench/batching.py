"""Pro||con on the embedded model: batched decoding (CLEARSIDE_BATCH=2) against one call at a time (=1).

The advocates' stage of a real debate (``Engine.run_stage(run, "advocates")``: pro and con started together, each
blind to the other, with their substance checks and re-asks) on the in-process GGUF, the proposition given so the
orchestrator does not run. Temperature 0, so both modes write the same arguments and the work compared is the same
(the tokens written are printed per run to show it). The modes alternate run by run, so a change in the machine's
load falls on both alike; the ratio is batched wall over sequential wall, medians of ``--runs`` each (goal <= 0.6).
It also reports the prompt tokens the second advocate did not evaluate because the first had (the shared prefix).
Prints a table with the machine's load before and after and writes bench/results/batching.json.

Run from the repository root, alone on the machine:  python bench/batching.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clearside.providers.embedded import BATCH_ENV, EmbeddedProvider, load_batcher  # noqa: E402
from clearside.schema import Proposition  # noqa: E402
from clearside.static.engine import Engine  # noqa: E402
from clearside.static.run import DebateRun  # noqa: E402

QUESTION = "Should our city ban cars from its historic centre?"
GOAL = 0.6
RESULTS = ROOT / "bench" / "results"


def machine() -> dict:
    return {"loadavg": [round(x, 2) for x in os.getloadavg()], "cpu_count": os.cpu_count()}


def one(width: int) -> dict:
    os.environ[BATCH_ENV] = str(width)
    provider = EmbeddedProvider()
    batcher, _ = load_batcher(provider.path, provider.n_ctx, provider.n_threads)
    widest, reused_before = batcher.widest, batcher.reused
    batcher.widest = 0
    run = DebateRun.from_input(QUESTION)
    run.proposition = Proposition(raw_input=QUESTION, normalized_question=QUESTION)
    started = time.perf_counter()
    Engine(provider, temperature=0.0).run_stage(run, "advocates")
    wall = time.perf_counter() - started
    row = {"width": width, "wall_s": round(wall, 2),
           "calls": sum(u.calls for u in run.usage.values()),
           "tokens": sum(u.completion_tokens for u in run.usage.values()),
           "widest_batch": batcher.widest, "reused_prompt_tokens": batcher.reused - reused_before}
    batcher.widest = max(batcher.widest, widest)
    return row


def run(runs: int = 3) -> dict:
    previous = os.environ.get(BATCH_ENV)
    before = machine()
    provider = EmbeddedProvider()
    load_batcher(provider.path, provider.n_ctx, provider.n_threads)
    one(1)  # warm-up: the model's pages and the grammars' first compilation, not timed
    rows = []
    try:
        for index in range(runs):
            for width in ((1, 2) if index % 2 == 0 else (2, 1)):
                rows.append(one(width))
                print(rows[-1], flush=True)
    finally:
        if previous is None:
            os.environ.pop(BATCH_ENV, None)
        else:
            os.environ[BATCH_ENV] = previous
    sequential = statistics.median(r["wall_s"] for r in rows if r["width"] == 1)
    batched = statistics.median(r["wall_s"] for r in rows if r["width"] == 2)
    # the substance checks may re-ask in one mode and not the other (numerics of a different batch split change a
    # greedy pick now and then): the wall per token written compares the same work
    per_token = {w: sum(r["wall_s"] for r in rows if r["width"] == w) / max(1, sum(r["tokens"] for r in rows
                                                                                 if r["width"] == w))
                 for w in (1, 2)}
    result = {"question": QUESTION, "runs": rows, "sequential_s": sequential, "batched_s": batched,
              "ratio": round(batched / sequential, 3), "per_token_ratio": round(per_token[2] / per_token[1], 3),
              "goal": GOAL, "before": before, "after": machine()}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "batching.json").write_text(json.dumps(result, indent=2))
    return result


def report(quick: bool = True) -> list[dict]:
    result = run(runs=1 if quick else 3)
    tokens = {w: [r["tokens"] for r in result["runs"] if r["width"] == w] for w in (1, 2)}
    reused = max(r["reused_prompt_tokens"] for r in result["runs"])
    note = f"advocates' stage, temperature 0; tokens written sequential {tokens[1]}, batched {tokens[2]}"
    return [
        {"figure": "pro‖con batched / sequential (embedded)", "value": result["ratio"], "unit": "×",
         "goal": f"≤ {GOAL}", "met": result["ratio"] <= GOAL, "note": note},
        {"figure": "pro‖con batched / sequential per token written (embedded)", "value": result["per_token_ratio"],
         "unit": "×", "goal": f"≤ {GOAL}", "met": result["per_token_ratio"] <= GOAL,
         "note": "wall seconds per token written, the same work whatever the re-asks"},
        {"figure": "pro‖con sequential wall (embedded)", "value": result["sequential_s"], "unit": "s", "goal": None,
         "met": None, "note": "CLEARSIDE_BATCH=1"},
        {"figure": "pro‖con batched wall (embedded)", "value": result["batched_s"], "unit": "s", "goal": None,
         "met": None, "note": "CLEARSIDE_BATCH=2"},
        {"figure": "prompt tokens shared, not evaluated again", "value": reused, "unit": "tokens", "goal": None,
         "met": None, "note": "per advocates' stage: the second advocate's prefix taken from the first's"},
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    result = run(args.runs)
    print(f"\nsequential {result['sequential_s']} s, batched {result['batched_s']} s, ratio {result['ratio']}, "
          f"per token {result['per_token_ratio']} "
          f"(goal <= {GOAL}); load before {result['before']['loadavg']}, after {result['after']['loadavg']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
