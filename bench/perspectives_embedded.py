"""A 4-round perspectives session on the embedded model: wall time and tokens per call.

Spec 003 expects 45-90 s for a 4-round run with a 7B model on a laptop GPU (RTX 4060); this is
SmolLM2-135M on the CPU. Runs the clarifier, answers with fixed text, then 4 rounds of A and B
and the synthesis into a throwaway store, and reports per call: step, attempts, prompt and
completion tokens, seconds and tokens/s. Machine load is printed.

Run from the repository root:  python bench/perspectives_embedded.py [--rounds 4] [--runs 1]
Writes bench/results/perspectives_embedded.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clearside.perspectives import PerspectivesRun  # noqa: E402
from clearside.providers import get_provider  # noqa: E402
from clearside.store import Store  # noqa: E402

QUESTION = "My partner reads my messages without asking. Should I say something?"
ANSWERS = "It happened three times this month. We have been together two years. I want trust, not a fight."
RESULTS = Path(__file__).resolve().parent / "results"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def one(provider, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        store = Store(f"sqlite:///{folder}/bench.db")
        started = time.perf_counter()
        run = PerspectivesRun.create(QUESTION, provider, rounds=rounds, store=store)
        run.clarify()
        asked = time.perf_counter() - started
        run.answer(ANSWERS)
        session = run.run()
        wall = time.perf_counter() - started
        store.close()
    calls = [{**c, "tokens_per_s": round(c["completion_tokens"] / c["seconds"], 1) if c["seconds"] else 0.0}
             for c in session.calls]
    return {"wall_seconds": round(wall, 1), "clarification_seconds": round(asked, 1), "state": session.state,
            "summaries": len(session.summaries), "calls": calls,
            "completion_tokens": sum(c["completion_tokens"] for c in calls),
            "prompt_tokens": sum(c["prompt_tokens"] for c in calls), "attempts": sum(c["calls"] for c in calls)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--provider", default="embedded")
    args = parser.parse_args()
    provider = get_provider(args.provider)
    out = {"provider": provider.spec, "rounds": args.rounds, "load_before": load(), "cpu_count": os.cpu_count(),
           "runs": []}
    print(f"load before: {out['load_before']}", flush=True)
    for i in range(args.runs):
        result = one(provider, args.rounds)
        out["runs"].append(result)
        print(f"run {i + 1}: {result['wall_seconds']} s, {result['state']}, {result['attempts']} model calls, "
              f"{result['completion_tokens']} completion tokens", flush=True)
        for c in result["calls"]:
            print(f"  {c['step']:<12} {c['agent']:<10} attempts {c['calls']}  prompt {c['prompt_tokens']:>5}  "
                  f"completion {c['completion_tokens']:>4}  {c['seconds']:6.1f} s  {c['tokens_per_s']:5.1f} tok/s")
    out["load_after"] = load()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "perspectives_embedded.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"load after: {out['load_after']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
