"""The argument map's render time on a debate of 40 elements (the goal: under 1 s on a quiet machine).

The debate is the flagship reference (9 arguments and 8 assumptions a side, 4 hinges, 3 conflicts) with one more
argument a side: 40 elements (20 arguments, 16 assumptions, 4 hinges) besides the proposition, and cruxes linking
every argument and assumption to a hinge, so every link the map draws is drawn. One run is what the dashboard does
for the map (the graph, both SVG layouts, the nested list) plus the three exports (Argdown, AIF, Kialo), timed
apart. Prints the median and the slowest of the runs with the machine's load before and after, and writes
bench/results/argmap.json.

Run from the repository root, alone on the machine:  python bench/argmap.py [--runs 50]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clearside.quality.references import flagship  # noqa: E402
from clearside.render import render  # noqa: E402
from clearside.render.argmap import argument_map  # noqa: E402
from clearside.render.mapsvg import map_svg, outline  # noqa: E402
from clearside.schema import Document  # noqa: E402

GOAL_S = 1.0
RESULTS = Path(__file__).resolve().parent / "results"


def forty() -> Document:
    """The flagship with one more argument a side and cruxes over every argument and assumption: 40 elements."""
    data = copy.deepcopy(flagship().document)
    for side in ("pro", "con"):
        extra = copy.deepcopy(data[side]["arguments"][0])
        extra["claim"] = f"An added {side} argument, so the debate has forty elements in all."
        data[side]["arguments"].append(extra)
    hinges = len(data["moderator"]["decision_hinges"])
    data["moderator"]["cruxes"] = [
        {"hinge": h, "load": {"pro": 0.3, "con": 0.3}, "if_yes": "Yes tests the items listed.",
         "if_no": "No tests the items listed.",
         **{f"{side}_{kind}": [i for i in range(len(data[side][kind])) if i % hinges == h]
            for side in ("pro", "con") for kind in ("arguments", "assumptions")}} for h in range(hinges)]
    document = Document.model_validate(data)
    graph = argument_map(document)
    assert len(graph) - 1 == 40, len(graph)
    return document


def one_run(document: Document) -> tuple[float, float]:
    started = time.perf_counter()
    graph = argument_map(document)
    map_svg(graph)
    map_svg(graph, narrow=True)
    outline(graph)
    drawn = time.perf_counter()
    for fmt in ("argdown", "aif", "kialo"):
        render(document, fmt)
    return drawn - started, time.perf_counter() - drawn


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    document = forty()
    load_before = os.getloadavg()
    one_run(document)  # imports and caches warmed: not part of a page's render
    runs = [one_run(document) for _ in range(args.runs)]
    load_after = os.getloadavg()
    maps, exports = [r[0] for r in runs], [r[1] for r in runs]
    result = {"elements": 40, "runs": args.runs, "map_median_s": statistics.median(maps), "map_max_s": max(maps),
              "exports_median_s": statistics.median(exports), "exports_max_s": max(exports), "goal_s": GOAL_S,
              "load_before": load_before, "load_after": load_after, "cpus": os.cpu_count()}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "argmap.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"Argument map of 40 elements, {args.runs} runs on {os.cpu_count()} CPUs "
          f"(load {load_before[0]:.2f} before, {load_after[0]:.2f} after):")
    print(f"  map (graph, both SVG layouts, the list): median {result['map_median_s'] * 1000:.1f} ms, "
          f"slowest {result['map_max_s'] * 1000:.1f} ms (goal under {GOAL_S:.0f} s)")
    print(f"  exports (Argdown, AIF, Kialo): median {result['exports_median_s'] * 1000:.1f} ms, "
          f"slowest {result['exports_max_s'] * 1000:.1f} ms")
    return 0 if result["map_max_s"] < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
