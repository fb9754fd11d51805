"""Regression review commands: ``suite validate FILE`` and ``compare-runs BATCH_A BATCH_B``.

``compare-runs`` exits 0 when B shows no regression against A, 1 when it does (a metric significantly worse by
more than its tolerance), 2 on bad input (an unknown batch, one still running, no case in common).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..inputs import read_json
from .common import report_json, share, share_options, write

if TYPE_CHECKING:  # the rest is imported by the command that runs (see common.py)
    from ..quality import suites



def suite_text(suite: suites.Suite) -> str:
    s = suite.summary()
    lines = [f"Suite {s['name']} ({s['source']}): {s['cases']} case(s), valid.",
             f"  with key points: {s['with_key_points']}, with a reference debate: {s['with_reference']}, "
             f"with context: {s['with_context']}, with decision hinges: {s['with_hinges']}",
             f"  scored for coverage and stance: {s['scored_for_coverage']} of {s['cases']}"
             + ("" if s["scored_for_coverage"] == s["cases"] else " (add key_points or a reference to the others)")]
    lines += [f"  - {c.id}: {c.proposition}" for c in suite.cases]
    return "\n".join(lines) + "\n"


def cmd_suite_validate(args: argparse.Namespace) -> int:
    from ..quality import suites  # what batch.load_suite reads, without the regression machinery (and the store)

    suite = suites.resolve(args.file)
    sys.stdout.write(report_json(suite.summary()) if args.json else suite_text(suite))
    return 0


def cmd_compare_runs(args: argparse.Namespace) -> int:
    from ..quality.compare_runs import compare_runs, paired_markdown
    from ..store import open_store

    thresholds = read_json(args.thresholds, "thresholds") if args.thresholds else None
    if thresholds is not None and not isinstance(thresholds, dict):
        raise InputError(f"{args.thresholds} must hold an object such as {{\"coverage\": {{\"tolerance\": 0.2}}}}.")
    store = open_store()
    report = compare_runs(store, args.batch_a, args.batch_b, thresholds, allow_version_change=args.allow_version_change)
    for warning in report["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    write(report_json(report) if args.json else paired_markdown(report), args.out)
    share(report, store, args)
    return 1 if report["regression"] else 0


def add_parsers(sub: Any) -> None:
    s = sub.add_parser("suite", help="check a suite file of your own (YAML or JSONL cases) before regress uses it")
    ssub = s.add_subparsers(dest="suite_command", required=True)
    v = ssub.add_parser("validate", help="check a suite file: every case, with the line and the reason if not")
    v.add_argument("file", metavar="FILE", help="a .yaml, .yml or .jsonl suite (or a built-in's name)")
    v.add_argument("--json", action="store_true", help="print the summary as JSON")
    v.set_defaults(func=cmd_suite_validate)

    c = sub.add_parser("compare-runs", help="compare two batches run by run: paired statistics per metric, Holm "
                                            "correction, flipped cases (exit 1 on a regression of B against A)")
    c.add_argument("batch_a", metavar="BATCH_A", help="the batch compared against (e.g. the baseline)")
    c.add_argument("batch_b", metavar="BATCH_B", help="the batch under review")
    c.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    c.add_argument("--thresholds", metavar="FILE", help="JSON overriding gates and tolerances per metric, as regress")
    c.add_argument("--out", metavar="FILE", help="write the report here instead of stdout")
    share_options(c)
    c.add_argument("--allow-version-change", action="store_true",
                   help="compare batches scored by different metric suites or embedding models (refused otherwise), "
                        "with a warning")
    c.set_defaults(func=cmd_compare_runs)
