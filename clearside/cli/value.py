"""``value``: did the debate add anything? The same propositions as debates and as the single-pass control, paired.

Runs two regression batches of one suite in this process (:func:`clearside.cli.regression.run_here`: each run
printed as it finishes, Ctrl+C cancels): first the single-pass control, then the debates, on one provider with the
same runs, temperature and re-asks; then pairs them run by run (:mod:`clearside.quality.value`). Exit 0 with the
report; 1 when the debate is significantly worse than the single pass on a gated metric (as ``compare-runs`` exits
on a regression of B against A).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..providers import get_provider
from . import here
from .common import STRATEGIES, log_violations, report_json, share, share_options, write


def cmd_value(args: argparse.Namespace) -> int:
    from ..quality import value
    from ..quality.batch import load_suite
    from ..quality.workflow import RegressSettings
    from ..store import open_store
    from .regression import run_here

    strategy = value.debate_strategy(args.strategy)
    suite = load_suite(args.suite)  # a malformed suite file is refused here, before any model call
    log_violations(args.violations_log)
    provider = get_provider(args.provider, concurrency=args.concurrency)
    provider.preflight()  # an unreachable server is reported (exit 3) before any run is saved
    store = open_store()
    common = {"runs": args.runs, "retries": args.retries, "temperature": args.temperature, "window": args.concurrency}
    batches = {}
    with here.hosting(store.url):  # one host for both batches (each run_here would start and stop its own)
        for role, way in (("single pass", value.CONTROL), ("debate", strategy)):
            print(f"The {role}: {suite.name} ({len(suite.cases)} case(s)) {args.runs} time(s) on {provider.spec}"
                  f"{f' ({way})' if way else ''}; each run is saved as it finishes.", file=sys.stderr)
            settings = RegressSettings(**common, strategy=way)
            # never judged against the suite's baseline: the two batches are compared with each other
            batches[role] = run_here(suite, provider, settings, store, against_baseline=False)["batch"]
            print(f"The {role}: batch {batches[role]}.", file=sys.stderr)
    report = value.paired(store, batches["single pass"], batches["debate"])
    for warning in report["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    share(report, store, args)
    write(report_json(report) if args.format == "json" else value.markdown(report), args.out)
    return 1 if report["regression"] else 0



def add_parsers(sub: Any, model_options: Any) -> None:
    from .common import SUITES

    v = sub.add_parser("value", help="did the debate add anything? the same propositions as debates and as one "
                                     "single pass each, paired run by run (exit 1 when the debate does worse)")
    v.add_argument("--suite", metavar="NAME|FILE", default="argkp-dev",
                   help=f"a built-in suite ({', '.join(SUITES)}; default argkp-dev, the ArgKP dev topics with "
                        "their expert key points) or a suite file of your own")
    v.add_argument("--runs", type=int, default=3, help="debates of each kind per proposition (default 3)")
    v.add_argument("--strategy", choices=[s for s in STRATEGIES if s != "single"],
                   help="how the debates' agents write (default: the provider's)")
    v.add_argument("--format", choices=("md", "json"), default="md", help="the report's format (default md)")
    share_options(v)
    model_options(v)
    v.set_defaults(func=cmd_value)
