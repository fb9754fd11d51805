"""Metrics speed: every metric on one debate, after the embedding model is loaded (goal < 2 s).

Loads the offline MiniLM once (timed separately: torch import and weights), then
computes every metric of two documents K times each: the flagship reference
against its own key points (18 arguments, 16 assumptions, 4 hinges) and a saved
debate from the embedded model, if ``--debate ID`` names one. Prints p50/p95/max
and writes bench/results/metrics.json. Results depend on machine load, printed.

Run from the repository root:  python bench/metrics.py [--repeat 20] [--debate ID]
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
from clearside.quality import metrics, references  # noqa: E402
from clearside.store import open_store  # noqa: E402

GOAL_S = 2.0
RESULTS = Path(__file__).resolve().parent / "results"


def timings(document: dict, reference, usage, repeat: int) -> dict:
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        metrics.compute(document, reference=reference, usage=usage)
        seconds.append(time.perf_counter() - started)
    seconds.sort()
    return {"runs": repeat, "p50_s": round(statistics.median(seconds), 3),
            "p95_s": round(seconds[max(0, int(0.95 * repeat) - 1)], 3), "max_s": round(seconds[-1], 3),
            "pass": seconds[max(0, int(0.95 * repeat) - 1)] < GOAL_S}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--debate", help="a saved debate's id to score as well (scored against the flagship)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    started = time.perf_counter()
    embed.encode(["warm up"])
    load_s = time.perf_counter() - started
    flagship = references.flagship()
    result = {"machine": {"cpu_count": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load_before]},
              "embedding_model_load_s": round(load_s, 2), "goal_s": GOAL_S,
              "flagship": timings(flagship.document, flagship, None, args.repeat)}
    if args.debate:
        record = open_store().get(args.debate)
        result["saved_debate"] = {"id": args.debate, **timings(record.document, flagship,
                                                               (record.data or {}).get("usage"), args.repeat)}
    result["machine"]["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "metrics.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0 if all(v["pass"] for k, v in result.items() if isinstance(v, dict) and "pass" in v) else 1


if __name__ == "__main__":
    sys.exit(main())
