"""Debate time with citations on, against citations off, on one provider.

The same proposition is debated ``--runs`` times in each of three configurations, alternating so that a change
in the machine's load falls on all of them alike: **off** (no sources), **shown** (two sources shown to the
advocates, ``--no-citations``) and **on** (the same sources, quoted and verified). The proposition is given
(the orchestrator does not run), so the figure is the advocates' and the moderator's. The sources are two short
reports made here (plain text, about 600 characters each). Each run reports wall seconds, model calls, tokens
written and, with citations on, the quotes kept and removed. Prints a table with the machine's load before and
after and writes bench/results/citations.json.

Run from the repository root, alone on the machine:  python bench/citations.py [--provider embedded] [--runs 3]
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

from clearside import embed, sources  # noqa: E402
from clearside.errors import DebateFailed  # noqa: E402
from clearside.providers import get_provider  # noqa: E402
from clearside.schema import Proposition  # noqa: E402
from clearside.static.engine import Engine  # noqa: E402
from clearside.static.run import DebateRun  # noqa: E402

QUESTION = "Should cities ban cars from their historic centres?"
REPORTS = {
    "madrid study.txt": "A 2019 study of Madrid found that nitrogen dioxide levels in the central zone fell by a third "
                        "after cars were restricted. Shops on the main pedestrian streets reported more visitors in "
                        "the first year. Residents said the streets felt quieter and safer for children. Bus journeys "
                        "across the centre became four minutes faster on average. The city spent eleven million "
                        "euros on cameras, signs and new loading bays.",
    "oslo report.txt": "Delivery firms in Oslo reported that each van spent twenty minutes longer per route after the "
                       "centre closed to cars. Older residents who rely on taxis said the new rules made hospital "
                       "visits harder. Some small shops near the edge of the zone lost customers who used to park "
                       "outside. Parking revenue that had paid for street repairs fell by half. Cycling trips into "
                       "the centre doubled within two years.",
}
RESULTS = ROOT / "bench" / "results"


def one(provider, mode: str) -> dict:
    attached = sources.read_sources([(name, text.encode()) for name, text in REPORTS.items()]) \
        if mode != "off" else None
    run = DebateRun.from_input(QUESTION, sources=attached, cite=mode == "on")
    run.proposition = Proposition(raw_input=QUESTION, normalized_question=QUESTION)
    started = time.perf_counter()
    row: dict = {"mode": mode}
    try:
        document = Engine(provider).run(run)
    except DebateFailed as exc:
        row.update(error=f"{type(exc.cause).__name__}: {exc.cause}"[:200])
        document = None
    row["wall_s"] = round(time.perf_counter() - started, 2)
    row["calls"] = sum(u.calls for u in run.usage.values())
    row["tokens"] = sum(u.completion_tokens for u in run.usage.values())
    if document is not None and mode == "on":
        arguments = [*document.pro.arguments, *document.con.arguments]
        row["cited_arguments"] = sum(a.support == "cited" for a in arguments)
        row["arguments"] = len(arguments)
        items = [i for q in document.quality.agents.values() for i in q.items if i.check == "unverified_quote"]
        row["quotes_removed"] = sum(i.action == "dropped" for i in items)
        row["quotes_reasked"] = sum(i.action == "reasked" for i in items)
    return row


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--provider", default="embedded")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    provider = get_provider(args.provider)
    provider.check()  # the model's load is not part of a debate
    embed.encode(["warm up"])  # nor is MiniLM's
    before = os.getloadavg()
    rows = []
    for number in range(1, args.runs + 1):
        for mode in ("off", "shown", "on"):
            row = {"run": number, **one(provider, mode)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary = {}
    for mode in ("off", "shown", "on"):
        done = [r["wall_s"] for r in rows if r["mode"] == mode and "error" not in r]
        summary[mode] = {"completed": len(done), "runs": args.runs,
                         "median_wall_s": round(statistics.median(done), 2) if done else None}
    base = summary["off"]["median_wall_s"]
    for mode in ("shown", "on"):
        value = summary[mode]["median_wall_s"]
        summary[mode]["vs_off"] = round(value / base, 2) if base and value else None
    result = {"provider": provider.spec, "question": QUESTION, "runs": rows, "summary": summary,
              "machine": {"cpu_count": os.cpu_count(), "loadavg_before": [round(x, 2) for x in before],
                          "loadavg_after": [round(x, 2) for x in os.getloadavg()]}}
    print("\n| configuration | completed | median wall s | vs off |\n|---|---|---|---|")
    for mode in ("off", "shown", "on"):
        s = summary[mode]
        print(f"| {mode} | {s['completed']}/{s['runs']} | {s['median_wall_s']} | {s.get('vs_off', '–')} |")
    print(f"load average before {result['machine']['loadavg_before']}, after {result['machine']['loadavg_after']}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "citations.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
