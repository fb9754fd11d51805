"""Swap check on the embedded model: time of one swapped moderator run and the flip rate, flagship and ArgKP dev.

For each topic: the debate to check, then one swap check (``clearside.swap.swap_check``, the code path of
``python -m clearside metrics --swap-check``). The flagship is its hand-structured reference document, so its
original synthesis is first rerun on the model (a hand-written synthesis is not the model's; see swap.py). An
ArgKP dev topic has key points, not a debate: its newest debate saved by ``regress --suite argkp-dev`` is used,
else one is generated here on the same model (its time is printed apart and not part of the swap check). The
swap check's goal is under 10 s: it reruns the moderator only. Prints a table with the machine's load
before and after, and writes bench/results/swap_check.json; LLM judges' published flip rate (13.6%, "The Coin
Flip Judge", 2026) is printed as context, not as a like-for-like comparison.

Run from the repository root, alone on the machine:  python bench/swap_check.py [--provider embedded]
[--only flagship,argkp-dev:1] [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clearside import embed
from clearside.errors import ClearSideError  # noqa: E402
from clearside.providers import get_provider  # noqa: E402
from clearside.quality import references
from clearside.static import swap  # noqa: E402
from clearside.static.engine import Engine  # noqa: E402
from clearside.static.run import DebateRun  # noqa: E402
from clearside.store import open_store  # noqa: E402

GOAL_S = 10.0
RESULTS = Path(__file__).resolve().parent / "results"


def saved_debate(name: str) -> dict | None:
    store = open_store()
    for row in reversed(store.runs("argkp-dev")):
        if row["status"] == "done" and (row.get("data") or {}).get("item") == name and row.get("debate_id"):
            try:
                return store.get(row["debate_id"]).document
            except ClearSideError:
                continue
    return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--provider", default="embedded")
    parser.add_argument("--runs", type=int, default=1, help="swapped runs per topic (default 1)")
    parser.add_argument("--control", action="store_true", help="also rerun the moderator on the original order "
                        "(the moderator's own variation; the swap effect is the flip rate minus it)")
    parser.add_argument("--only", help="comma-separated topics: flagship, argkp-dev:1..4 (default: all five)")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",")] if args.only else list(references.NAMES)
    load_before = os.getloadavg()
    provider = get_provider(args.provider)
    engine = Engine(provider)
    embed.encode(["warm up"])  # the embedding model's load is not part of a swap check
    rows = []
    for name in names:
        ref = references.load(name)
        row: dict = {"topic": name, "proposition": ref.proposition}
        document, debate_s = ref.document, None
        if document is None:
            document = saved_debate(name)
            row["debate"] = "saved (regress --suite argkp-dev)" if document else "generated here"
        if document is None:
            started = time.perf_counter()
            try:
                document = engine.run(DebateRun.from_input(ref.proposition)).dump()
            except ClearSideError as exc:
                row["error"] = f"the debate itself failed: {exc}"
                rows.append(row)
                print(f"{name}: {row['error']}", flush=True)
                continue
            debate_s = round(time.perf_counter() - started, 1)
        row["debate_seconds"] = debate_s
        started = time.perf_counter()
        try:
            result = swap.swap_check(document, engine, runs=args.runs, name=name, control=args.control)
        except ClearSideError as exc:
            row["error"] = f"the swapped moderator failed: {exc}"
            rows.append(row)
            print(f"{name}: {row['error']}", flush=True)
            continue
        swapped_s = [d["model_seconds"] for d in result["details"]]
        row.update(flip_rate=result["flip_rate"], original=result["original"], model_calls=result["model_calls"],
                   swap_check_wall_s=round(time.perf_counter() - started, 1),
                   swapped_run_s=round(sum(swapped_s) / len(swapped_s), 1),
                   sections={k: {x: v[x] for x in ("items", "matched", "flipped", "vanished")}
                             for k, v in result["sections"].items()})
        if args.control:
            row.update(control_flip_rate=result["control_flip_rate"], swap_effect=result["swap_effect"])
        row["pass"] = row["swapped_run_s"] < GOAL_S
        rows.append(row)
        print(f"{name}: flip rate {row['flip_rate']:.1%}, swapped moderator run {row['swapped_run_s']} s "
              f"({'under' if row['pass'] else 'over'} the {GOAL_S:g} s goal), {row['model_calls']} call(s), "
              f"{row['swap_check_wall_s']} s wall"
              + (f"; control {row['control_flip_rate']:.1%}, swap effect {row['swap_effect']:+.1%}"
                 if args.control else ""), flush=True)
    rates = [r["flip_rate"] for r in rows if "flip_rate" in r]
    result = {"machine": {"cpu_count": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before],
                          "loadavg_after": [round(x, 2) for x in os.getloadavg()]},
              "provider": provider.spec, "goal_s": GOAL_S, "topics": rows,
              "mean_flip_rate": round(sum(rates) / len(rates), 3) if rates else None,
              "published": swap.PUBLISHED}
    print("\n| topic | flip rate | swapped run s | calls | debate |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['topic']} | {r.get('flip_rate', 'failed')} | {r.get('swapped_run_s', '—')} | "
              f"{r.get('model_calls', '—')} | {r.get('debate', 'reference document')} |")
    if rates:
        print(f"\nMean flip rate {result['mean_flip_rate']:.1%} over {len(rates)} topic(s) on {provider.spec}; "
              f"context: {swap.PUBLISHED['what']} is about {swap.PUBLISHED['flip_rate']:.1%} "
              f"({swap.PUBLISHED['source']}), {swap.PUBLISHED['note']}.")
    print(f"load average before {result['machine']['loadavg_before']}, after {result['machine']['loadavg_after']}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "swap_check.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if rates else 1


if __name__ == "__main__":
    raise SystemExit(main())
