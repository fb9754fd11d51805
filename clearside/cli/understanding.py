"""``understanding``: the understanding check from the command line, as the dashboard's Debate and Understanding
pages do it (docs/quality/understanding.md).

    understanding answer ID --stage before|after|retest --for REASON ... --against REASON ... --lean L --confidence N
    understanding show ID [--format json]
    understanding gains [--format json] [--csv FILE]

Answers recorded here belong to no browser; every list here shows every answer the store holds (the dashboard
shows a browser its own). Bad input exits 2 and saves nothing.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import InputError
from ..inputs import clean
from .common import report_json, write

STAGES = ("before", "after", "retest")  # clearside.store.understanding.STAGES


def cmd_answer(args: argparse.Namespace) -> int:
    from ..quality import understanding
    from ..store import open_store

    store = open_store()
    answer = understanding.answer(args.stage, args.reasons_for, args.reasons_against, lean_value=args.lean,
                                  confidence_value=args.confidence)
    number = understanding.record(store, args.id, answer)
    print(f"Saved answer {number} ({args.stage}) to debate {store.get(args.id).id}.", file=sys.stderr)
    return _show(store, args.id, args.format)


def cmd_show(args: argparse.Namespace) -> int:
    from ..store import open_store

    return _show(open_store(), args.id, args.format)


def _show(store: Any, debate_id: str, fmt: str) -> int:
    from ..quality import understanding

    summary = understanding.summary(store, debate_id)
    if fmt == "json":
        write(report_json(summary), None)
        return 0
    lines = [f"{clean(summary['title'])[:100]}  ({summary['debate_id']})", summary["sentence"]]
    if summary["hinges_named"]:
        lines.append("The hinges you named: " + "; ".join(clean(h) for h in summary["hinges_named"]))
    for stage, data in summary["stages"].items():
        said = [f"lean {understanding.LEANS[data['lean']]}" if data["lean"] is not None else "",
                f"confidence {data['confidence']} %" if data["confidence"] is not None else ""]
        lines.append(f"  {understanding.STAGE_LABELS[stage]}: {data['written_for']} reason(s) written for, "
                     f"{data['written_against']} against{''.join(f'; {s}' for s in said if s)} "
                     f"(answered {data['answered_at']})")
    print("\n".join(lines))
    return 0


def _interval(row: dict[str, Any]) -> str:
    if row["n"] == 0:
        return "no debate answered both"
    spread = (f"95 % interval {row['ci_low']:+.2f} to {row['ci_high']:+.2f}" if row["ci_low"] is not None
              else "an interval needs 2 debates")
    return f"{row['mean']:+.2f} ({spread}; n = {row['n']})"


def cmd_gains(args: argparse.Namespace) -> int:
    from ..quality import understanding
    from ..store import open_store

    store = open_store()
    if args.csv:
        text = understanding.csv_text(understanding.csv_rows(store))
        try:
            with open(args.csv, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
        except OSError as exc:
            raise InputError(f"Cannot write {args.csv}: {exc.strerror}") from exc
        print(f"Wrote {args.csv}", file=sys.stderr)
    result = understanding.gains(store)
    if args.format == "json":
        write(report_json(result), None)
        return 0
    lines = [f"{result['debates']} debate(s) with answers, {result['answers']} answer(s)."]
    for name, table in result["comparisons"].items():
        later, earlier = name.split("-")
        lines.append(f"{understanding.STAGE_LABELS[later].capitalize()} minus {earlier}:")
        lines += [f"  {row['label']}: {_interval(row)}" for row in table.values()]
    print("\n".join(lines))
    return 0


def add_parser(sub: Any) -> None:
    u = sub.add_parser("understanding", help="the understanding check: answer before and after reading a debate, "
                                             "a debate's summary, the gains across debates")
    inner = u.add_subparsers(dest="understanding_command", required=True)
    a = inner.add_parser("answer", help="record an answer (the reasons you know, your lean and confidence)")
    a.add_argument("id", help="the debate's id (`python -m clearside list`)")
    a.add_argument("--stage", choices=STAGES, required=True,
                   help="before reading, after reading, or a re-test days later")
    a.add_argument("--for", dest="reasons_for", action="append", metavar="REASON", default=[],
                   help="a reason you know for the proposition (repeat for each)")
    a.add_argument("--against", dest="reasons_against", action="append", metavar="REASON", default=[],
                   help="a reason you know against it (repeat for each)")
    a.add_argument("--lean", help="-2 (strongly against) to 2 (strongly for), or words such as 'leaning for'")
    a.add_argument("--confidence", help="how sure you are, 0 to 100")
    a.add_argument("--format", choices=("text", "json"), default="text", help="the summary's format")
    a.set_defaults(func=cmd_answer)
    s = inner.add_parser("show", help="a debate's answers in numbers and words (never a grade)")
    s.add_argument("id", help="the debate's id")
    s.add_argument("--format", choices=("text", "json"), default="text")
    s.set_defaults(func=cmd_show)
    g = inner.add_parser("gains", help="the gains across debates: mean, 95 %% interval, n")
    g.add_argument("--format", choices=("text", "json"), default="text")
    g.add_argument("--csv", metavar="FILE", help="also write every answer as CSV (one row per debate and stage)")
    g.set_defaults(func=cmd_gains)
