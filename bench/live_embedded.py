"""Live debate on the embedded model: full wall time and time to first token per turn.

Runs the whole six-phase protocol (21 turns plus the orchestrator) on the
embedded provider (the in-process GGUF) for ``--runs`` questions, and reports per
run: wall time, turns, completion tokens, guardrail regenerations, truncations,
and per turn the time to first token (request sent until the first streamed
text: prompt evaluation plus grammar set-up) with its median and 90th percentile,
and the synthesis turn's (the last and longest prompt: every turn is in its context).
Goal: time to first token under 1 s per turn on the embedded model; the benchmarks'
report asks median <= 1 s and 90th percentile <= 2 s. The protocol is not
shortened in ``report(quick=True)`` (``python -m bench``): shorter speeches would
shorten every later prompt and flatter the time to first token, so quick mode runs
one debate at the design's pace (docs/design/live-protocol.md#budgets) and full mode three.

Run from the repository root:  python bench/live_embedded.py [--runs 1] [--wpm 150]
Writes bench/results/live_embedded.json. Results depend on machine load, which is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clearside.live import LiveConfig, LiveDebate  # noqa: E402
from clearside.providers import get_provider  # noqa: E402
from clearside.providers.embedded import kv_memory  # noqa: E402
from clearside.store import Store  # noqa: E402

QUESTIONS = [
    "Should the United States impose a temporary moratorium on new large-scale AI data centers?",
    "Build or buy our feature-flag service?",
    "Leave my job for a startup?",
]
TTFT_GOAL_S = 1.0
TTFT_P90_GOAL_S = 2.0
RESULTS = Path(__file__).resolve().parent / "results"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_one(question: str, wpm: int, provider_spec: str, directory: Path) -> dict:
    provider = get_provider(provider_spec)
    started = time.perf_counter()
    store = Store(f"sqlite:///{directory / 'bench.db'}")
    debate = LiveDebate.create(question, provider, config=LiveConfig(words_per_minute=wpm), store=store)
    transcript = debate.run()
    wall = time.perf_counter() - started
    memory = kv_memory() if provider_spec == "embedded" else []
    ttft = [t.first_token_seconds for t in transcript.turns if t.step is not None]
    synthesis = [t.first_token_seconds for t in transcript.turns if t.step is not None and t.phase == "synthesis"]
    return {
        "question": question, "wall_seconds": round(wall, 1), "state": transcript.state,
        "turns": len(transcript.turns), "completion_tokens": sum(t.completion_tokens for t in transcript.turns),
        "regenerated": sum(t.regenerated for t in transcript.turns),
        "flags_kept": sum(len(t.flags) for t in transcript.turns),
        "truncated": sum(t.truncated for t in transcript.turns),
        "schema_reasks": len(debate.violations),
        "ttft_median_s": round(statistics.median(ttft), 3), "ttft_p90_s": round(pct(ttft, 0.9), 3),
        "ttft_max_s": round(max(ttft), 3), "ttft_under_goal": sum(x < TTFT_GOAL_S for x in ttft),
        "ttft_synthesis_s": round(synthesis[-1], 3) if synthesis else None, "ttft_all_s": ttft,
        "kv_memory": memory,
        "per_turn": [{"turn": t.turn, "label": t.label, "ttft_s": t.first_token_seconds, "seconds": t.seconds,
                      "tokens": t.completion_tokens, "words": len(t.text.split()), "budget_tokens": t.budget_tokens,
                      "truncated": t.truncated, "regenerated": t.regenerated,
                      "flags": [f["rule"] for f in t.flags]} for t in transcript.turns],
    }


def run(runs: int = 1, wpm: int = 150, provider: str = "embedded", prefill: tuple[str, ...] = ("on", "off")) -> dict:
    """The benchmark: prints a line per debate, writes bench/results/live_embedded.json and returns what it wrote.
    ``prefill``: each question is debated once per setting, with the agents' prefill ahead (clearside/live/ahead.py)
    on and off (``CLEARSIDE_PREFILL``), alternating, so the two are measured side by side."""
    load_before = [round(x, 2) for x in os.getloadavg()]
    # load the model once so the first turn's time to first token is not the model load
    get_provider(provider).check()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        previous = os.environ.get("CLEARSIDE_PREFILL")
        for index, question in enumerate((QUESTIONS * runs)[:runs]):
            for mode in (prefill if index % 2 == 0 else prefill[::-1]):
                os.environ["CLEARSIDE_PREFILL"] = "0" if mode == "off" else "1"
                try:
                    result = run_one(question, wpm, provider, Path(tmp))
                finally:
                    os.environ.pop("CLEARSIDE_PREFILL", None)
                    if previous is not None:
                        os.environ["CLEARSIDE_PREFILL"] = previous
                result["prefill"] = mode
                results.append(result)
            print(f"{result['wall_seconds']:6.1f} s  {result['turns']} turns  {result['completion_tokens']} tokens  "
                  f"TTFT median {result['ttft_median_s']} s, p90 {result['ttft_p90_s']} s, max {result['ttft_max_s']} s"
                  f", synthesis {result['ttft_synthesis_s']} s  "
                  f"({result['ttft_under_goal']}/{len(result['ttft_all_s'])} under {TTFT_GOAL_S} s)  "
                  f"regenerated {result['regenerated']}, flags kept {result['flags_kept']}, "
                  f"truncated {result['truncated']}, prefill {mode}  — {result['question']}",
                  flush=True)
    out = {"machine": {"loadavg_before": load_before, "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                       "cpu_count": os.cpu_count()},
           "provider": provider, "words_per_minute": wpm, "runs": results}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "live_embedded.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    print(f"load average before {load_before}, after {out['machine']['loadavg_after']}; "
          f"wrote {RESULTS / 'live_embedded.json'}")
    return out


def report(quick: bool = True) -> list[dict]:
    """The benchmark report's rows (bench/run_all.py): one live debate per prefill setting in quick mode, three in
    full, every turn's time to first token pooled per setting; the goals apply to prefill on (the default)."""
    out = run(runs=1 if quick else 3)
    rows = []
    medians = {}
    for mode in ("on", "off"):
        runs = [r for r in out["runs"] if r["prefill"] == mode]
        if not runs:
            continue
        ttft = [x for r in runs for x in r["ttft_all_s"]]
        median, p90 = round(statistics.median(ttft), 3), round(pct(ttft, 0.9), 3)
        medians[mode] = median
        synthesis = [r["ttft_synthesis_s"] for r in runs if r["ttft_synthesis_s"] is not None]
        worst = max(synthesis) if synthesis else None
        turns = (f"{len(ttft)} turns of {len(runs)} live debate{'s' if len(runs) != 1 else ''} "
                 f"at {out['words_per_minute']} wpm, prefill {mode}")
        wall = round(sum(r["wall_seconds"] for r in runs) / len(runs), 1)
        states = ", ".join(sorted({r["state"] for r in runs}))
        goal = mode == "on"
        rows += [
            {"figure": f"Live turn time to first token, median (prefill {mode})", "value": median, "unit": "s",
             "goal": f"<= {TTFT_GOAL_S:g} s" if goal else None, "met": median <= TTFT_GOAL_S if goal else None,
             "note": turns},
            {"figure": f"Live turn time to first token, 90th percentile (prefill {mode})", "value": p90, "unit": "s",
             "goal": f"<= {TTFT_P90_GOAL_S:g} s" if goal else None, "met": p90 <= TTFT_P90_GOAL_S if goal else None,
             "note": f"{turns}; longest {max(ttft):.3f} s; {sum(x < TTFT_GOAL_S for x in ttft)}/{len(ttft)} "
                     f"under {TTFT_GOAL_S:g} s"},
            {"figure": f"Live synthesis turn time to first token (prefill {mode})", "value": worst, "unit": "s",
             "goal": None, "met": None,
             "note": "the last turn: every speech is in its prompt" + (f"; the longest of {len(synthesis)}"
                                                                      if len(synthesis) > 1 else "")},
            {"figure": f"Live debate wall, embedded model (prefill {mode})", "value": wall, "unit": "s",
             "goal": None, "met": None,
             "note": f"mean of {len(runs)}, whole protocol at {out['words_per_minute']} wpm; ended {states}"},
        ]
    held = [m for r in out["runs"] if r["prefill"] == "on" for m in r.get("kv_memory", [])]
    if held:
        last = held[-1]
        agents = ", ".join(f"{h['agent'] or 'free'} {h['tokens']}" for h in last["sequences"])
        rows.append({"figure": "KV cache held after a live debate, embedded model (prefill on)",
                     "value": round(last["bytes"] / 2**20, 1), "unit": "MB", "goal": None, "met": None,
                     "note": f"tokens per sequence: {agents}; the most one sequence held: {last['peak_tokens']}; "
                             f"bound: {len(last['sequences'])} sequences x {last['n_ctx']} tokens = "
                             f"{last['bound_bytes'] / 2**20:.0f} MB"})
    if len(medians) == 2 and medians["off"]:
        rows.append({"figure": "Live median time to first token, prefill on / off", "unit": "×", "goal": None,
                     "value": round(medians["on"] / medians["off"], 3), "met": None,
                     "note": "measured side by side in this run"})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--wpm", type=int, default=150, help="pace: words per minute (default 150, the design's)")
    parser.add_argument("--provider", default="embedded")
    parser.add_argument("--prefill", nargs="+", choices=("on", "off"), default=["on", "off"],
                        help="debate each question with the agents' prefill ahead on, off, or both (default)")
    args = parser.parse_args()
    run(args.runs, args.wpm, args.provider, tuple(args.prefill))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
