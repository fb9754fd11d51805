"""A 4-round perspectives session on the embedded model: wall time and tokens per call.

The design (docs/design/perspectives.md#cost) expects 45-90 s for a 4-round run with a 7B model on a laptop GPU (RTX
4060); this is SmolLM2-135M on the CPU. Runs the clarifier, answers with fixed text, then 4 rounds of A and B and the
synthesis into a throwaway store, and reports per call: step, attempts, prompt and completion tokens, seconds and
tokens/s. Machine load is printed. ``report(quick=True)`` (``python -m bench``) runs one 2-round session,
``quick=False`` one of 4 rounds; neither has a goal of its own (the design's range is for another model on another
machine).

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


def run(rounds: int = 4, runs: int = 1, provider_spec: str = "embedded") -> dict:
    """The benchmark: prints each session's calls, writes bench/results/perspectives_embedded.json and returns it."""
    provider = get_provider(provider_spec)
    out = {"provider": provider.spec, "rounds": rounds, "load_before": load(), "cpu_count": os.cpu_count(),
           "runs": []}
    print(f"load before: {out['load_before']}", flush=True)
    for i in range(runs):
        result = one(provider, rounds)
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
    return out


def report(quick: bool = True) -> list[dict]:
    """The benchmark report's rows (bench/run_all.py): a 2-round session in quick mode, 4 rounds in full."""
    out = run(rounds=2 if quick else 4)
    result = out["runs"][0]
    return [{"figure": f"Perspectives session wall, {out['rounds']} rounds, embedded model",
             "value": result["wall_seconds"], "unit": "s", "goal": None, "met": None,
             "note": f"{result['state']}; clarifier, {out['rounds']} rounds of A and B and the synthesis: "
                     f"{result['attempts']} model calls, {result['completion_tokens']} tokens written; the design "
                     "expects 45-90 s for 4 rounds of a 7B model on a laptop GPU"}]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--provider", default="embedded")
    args = parser.parse_args()
    run(args.rounds, args.runs, args.provider)
    return 0


if __name__ == "__main__":
    sys.exit(main())
