"""Re-map on the embedded model: the time of one re-map (the moderator rerun under the user's weights and stances).

The debate is the flagship reference document (docs/design/requirements.md#flagship), so no debate is generated
first: each run is exactly the code path of ``python -m clearside remap DEBATE.json --weights ... --reject ...``
(``clearside.remap.remap``, then ``remap.diff`` against the original synthesis). The goal is under
10 s: a re-map reruns the moderator only. Each run is timed from the call to the diff (wall) and by the model's
own seconds; a run whose moderator fails its checks after its re-asks is reported with its typed error. Prints a
table with the machine's load before and after and writes bench/results/remap.json.

Run from the repository root, alone on the machine:  python bench/remap.py [--provider embedded] [--runs 3]
[--weights economic=3,ethical=0] [--reject C1] [--document DEBATE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clearside import embed
from clearside.contract import validate_document  # noqa: E402
from clearside.errors import ClearSideError  # noqa: E402
from clearside.providers import get_provider  # noqa: E402
from clearside.quality.references import flagship  # noqa: E402
from clearside.static import remap  # noqa: E402
from clearside.static.engine import Engine  # noqa: E402

GOAL_S = 10.0
RESULTS = Path(__file__).resolve().parent / "results"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--provider", default="embedded")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--weights", default="economic=3,ethical=0")
    parser.add_argument("--reject", action="append", default=None, help="assumption id or text (default C1)")
    parser.add_argument("--baseline", action="store_true", help="also time the plain moderator rerun (no "
                        "conditions, Engine.moderate) in each run: what the re-map adds to the moderator's own cost")
    parser.add_argument("--document", metavar="DEBATE.json", help="the debate to re-map (default: the flagship "
                        "reference, 9 arguments a side)")
    args = parser.parse_args()
    data = json.loads(Path(args.document).read_text(encoding="utf-8")) if args.document else flagship().document
    document = validate_document(data)
    weights = remap.parse_weights(args.weights)
    stances = remap.stances_for(document, reject=args.reject or ["C1"])
    load_before = os.getloadavg()
    provider = get_provider(args.provider)
    engine = Engine(provider)
    embed.encode(["warm up"])  # the embedding model's load is not part of a re-map
    provider.check()  # nor is loading the model's weights
    rows = []
    for number in range(1, args.runs + 1):
        started = time.perf_counter()
        row: dict = {"run": number}
        try:
            remapped = remap.remap(document, engine, weights=weights, stances=stances)
            changes = remap.diff(document.moderator, remapped.moderator, engine.embeddings)
        except ClearSideError as exc:
            row.update(error=f"{type(exc).__name__}: {exc}"[:300], wall_s=round(time.perf_counter() - started, 1))
            rows.append(row)
            print(f"run {number}: failed in {row['wall_s']} s: {row['error']}", flush=True)
            continue
        usage = engine.last_usage.get("moderator")
        row.update(wall_s=round(time.perf_counter() - started, 2), model_s=round(usage.seconds, 2) if usage else None,
                   calls=usage.calls if usage else None, tokens=usage.completion_tokens if usage else None,
                   changed={s: {k: len(v[k]) for k in ("added", "removed", "reworded", "moved")}
                            for s, v in changes["sections"].items()})
        if args.baseline:
            started = time.perf_counter()
            try:
                engine.moderate(document)
                row["baseline_wall_s"] = round(time.perf_counter() - started, 2)
            except ClearSideError as exc:
                row["baseline_error"] = f"{type(exc).__name__}: {exc}"[:300]
        rows.append(row)
        print(f"run {number}: {row['wall_s']} s wall, {row['model_s']} s in the model, {row['calls']} call(s), "
              f"{row['tokens']} tokens" + (f"; plain moderator {row['baseline_wall_s']} s" if "baseline_wall_s" in row
                                          else ""), flush=True)
    done = [r["wall_s"] for r in rows if "error" not in r]
    result = {"machine": {"cpu_count": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before],
                          "loadavg_after": [round(x, 2) for x in os.getloadavg()]},
              "provider": provider.spec, "goal_s": GOAL_S, "document": args.document or "flagship reference",
              "weights": weights.dump(),
              "stances": [s.dump() for s in stances], "runs": rows,
              "median_wall_s": round(statistics.median(done), 2) if done else None,
              "completed": len(done), "pass": bool(done) and statistics.median(done) < GOAL_S}
    print("\n| run | wall s | model s | calls | result |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['run']} | {r['wall_s']} | {r.get('model_s', '—')} | {r.get('calls', '—')} | "
              f"{'failed: ' + r['error'][:60] if 'error' in r else 'ok'} |")
    if done:
        print(f"\nMedian re-map {result['median_wall_s']} s over {len(done)}/{len(rows)} run(s) on {provider.spec} "
              f"({'under' if result['pass'] else 'over'} the {GOAL_S:g} s goal).")
    print(f"load average before {result['machine']['loadavg_before']}, after {result['machine']['loadavg_after']}")
    RESULTS.mkdir(exist_ok=True)
    name = f"remap-{Path(args.document).stem}.json" if args.document else "remap.json"
    (RESULTS / name).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if done else 1


if __name__ == "__main__":
    raise SystemExit(main())
