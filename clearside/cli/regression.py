"""Regression commands: ``regress`` (a suite's batch), ``runs`` (the batches) and ``bless`` (a suite's baseline).

``regress`` exits 0 when the batch passes and 1 on a regression, so CI can gate on it. Without ``--enqueue`` it
runs the batch's workflow in this process (:mod:`clearside.cli.here`), its debates too, printing each run as it
finishes; Ctrl+C cancels the batch (what finished stays saved). ``--enqueue`` queues it for the workers.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..inputs import read_json
from ..providers import get_provider
from . import here
from .common import COMPARE_SUITE, STRATEGIES, SUITES, log_violations, report_json, share, share_options, write

if TYPE_CHECKING:  # the rest is imported by the command that runs (see common.py)
    from .. import modes
    from ..providers import Provider
    from ..quality.suites import Suite
    from ..quality.workflow import RegressSettings
    from ..store import Store

log = logging.getLogger("clearside.cli")

POLL_SECONDS = 0.5  # how often a batch run here is asked which of its runs finished



class FinishedRuns:
    """Each run of a batch printed the moment it finishes, from its item's state on the runtime:
    ``[2/6] flagship #1 in 41.2 s: valid, 0 neutrality violations, coverage 0.8 (debate ID)``."""

    def __init__(self, batch_id: str, total: int, store_url: str) -> None:
        from ..quality.workflow import item_id

        self.waiting = [item_id(batch_id, n) for n in range(total)]
        self.total, self.store_url, self.count = total, store_url, 0
        self._stop = threading.Event()

    def poll(self) -> None:
        from .. import runtime

        states = runtime.states(self.waiting, self.store_url)
        for job_id in list(self.waiting):
            state = states.get(job_id)
            if state is not None and state.finished:
                self.waiting.remove(job_id)
                if (state.result or {}).get("status") in ("done", "failed"):
                    self.say(state.result)

    def say(self, result: dict[str, Any]) -> None:
        self.count += 1
        tail = f"failed: {result['error']}" if result["status"] == "failed" else (
            f"valid, {result['metrics'].get('neutrality_violations', 0):g} neutrality violations, "
            f"coverage {result['metrics'].get('coverage', 0):g}")
        print(f"[{self.count}/{self.total}] {result['item']} #{result['index'] + 1} in "
              f"{result.get('wall_seconds', 0)} s: {tail} (debate {result['debate_id']})", file=sys.stderr, flush=True)

    def __enter__(self) -> FinishedRuns:
        def watch() -> None:
            while not self._stop.wait(POLL_SECONDS):
                try:
                    self.poll()
                except Exception as exc:  # a database that did not answer this time: asked again at the next tick
                    log.debug("could not read the batch's runs: %s", exc)

        self._thread = threading.Thread(target=watch, name="regress-runs", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        self._stop.set()
        self._thread.join()
        if kind is None:
            self.poll()  # the runs that finished since the last look


def _settings(args: argparse.Namespace, thresholds: dict | None) -> RegressSettings:
    from ..quality.workflow import RegressSettings

    return RegressSettings(runs=args.runs, retries=args.retries, temperature=args.temperature, thresholds=thresholds,
                           window=args.concurrency, swap_check=args.swap_check, strategy=args.strategy)


def cmd_regress(args: argparse.Namespace) -> int:
    from ..quality import regress
    from ..quality.baseline import NOTE_REQUIRED, bless
    from ..quality.batch import load_suite
    from ..store import open_store

    thresholds = read_json(args.thresholds, "thresholds") if args.thresholds else None
    if thresholds is not None and not isinstance(thresholds, dict):
        raise InputError(f"{args.thresholds} must hold an object such as {{\"coverage\": {{\"tolerance\": 0.2}}}}.")
    suite = load_suite(args.suite)  # a malformed suite file is refused here, before any model call
    if args.bless and suite.name in NOTE_REQUIRED and not (args.note or "").strip():
        raise InputError(f"--bless on the {suite.name} suite needs --note \"why\": a new {suite.name} baseline is "
                         "blessed only with a note of why (it changes only if reasoning quality improves).")
    if args.enqueue and (args.report or args.junit):
        raise InputError("--report and --junit write the finished batch's report, which --enqueue does not wait "
                         "for: run without --enqueue, or compare the batch when it is done with `compare-runs "
                         "BASELINE BATCH --report FILE.html --junit FILE.xml`.")
    log_violations(args.violations_log)
    provider = get_provider(args.provider, concurrency=args.concurrency)
    provider.preflight()  # an unreachable server is reported (exit 3) before any run is saved as failed
    if args.enqueue:
        return enqueue_regress(args, suite, provider, _settings(args, thresholds))
    store = open_store()
    print(f"Running {suite.name} ({len(suite.cases)} case(s)) {args.runs} time(s) on {provider.spec}; "
          f"each run is saved as it finishes.", file=sys.stderr)
    report = run_here(suite, provider, _settings(args, thresholds), store,
                      against_baseline=not args.allow_version_change)
    for warning in report["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    if args.bless:
        blessed = bless(store, report["batch"], note=args.note or "")
        print(f"Blessed batch {report['batch']} as the {suite.name} baseline.", file=sys.stderr)
        for warning in blessed.warnings:
            print(f"warning (recorded in the bless history): {warning}", file=sys.stderr)
    text = regress.markdown(report)
    if args.out:
        write(report_json(report), args.out)
        write(text, str(Path(args.out).with_suffix(".md")))
    share(report, store, args)
    sys.stdout.write(report_json(report) if args.format == "json" else text)
    return 0 if report["passed"] else 1


def run_here(suite: Suite, provider: Provider, settings: RegressSettings, store: Store, *,
             against_baseline: bool = True) -> dict[str, Any]:
    """The batch's workflow run in this process to its end (its debates too), each run printed as it finishes;
    its report. With ``against_baseline``, a batch whose baseline was scored by another metric suite or embedding
    model is refused first (``--allow-version-change`` turns it off). Ctrl+C cancels the batch: the debates under
    way stop at their next token."""
    from ..errors import JobFailed
    from ..quality import workflow as batches

    if against_baseline:
        batches.check_versions(store, suite, provider, settings)  # before anything is queued or any model call
    with here.hosting(store.url):
        batch_id = batches.enqueue_regress(suite, provider, settings, here=True, store_url=store.url)
        with FinishedRuns(batch_id, len(suite.cases) * settings.runs, store.url):
            state = here.follow(batch_id, None, store_url=store.url,
                                cancel=lambda: batches.cancel_batch(batch_id, store.url))
    report = (state.result or {}).get("report")
    if report is None:  # the batch itself failed
        raise JobFailed.of(state)
    return report


def enqueue_regress(args: argparse.Namespace, suite: Suite, provider: Provider, settings: RegressSettings) -> int:
    """``regress --enqueue``: queue the batch for the workers (a suite file's cases travel with it), print its id,
    exit at once."""
    from ..quality import workflow as batches

    if args.bless:
        raise InputError("--bless needs the finished batch: queue it, then `python -m clearside bless BATCH` "
                         "once `python -m clearside status BATCH --wait` says it passed.")
    batch_id = batches.enqueue_regress(suite, provider, settings, lend=False)
    print(batch_id)
    print(f"Queued {len(suite.cases) * args.runs} debate(s) of {args.suite} on {provider.spec} as batch {batch_id}: "
          f"`python -m clearside worker` (any number of them, or the dashboard) runs them; "
          f"`python -m clearside status {batch_id} --wait` follows it.", file=sys.stderr)
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    from ..quality.batch import age, batches, suite_names
    from ..quality.versions import batch_versions, versions_text
    from ..runtime import status
    from ..store import open_store

    store = open_store()
    suites = [args.suite] if args.suite else suite_names(store)
    found = [b for suite in suites for b in batches(store, suite)]
    jobs = status.jobs_of((b.id for b in found if b.state() == "interrupted"), store.url)  # running rows: ask
    listed = [{"batch": b.id, "kind": _batch_mode(b.suite).kind,
               "link": _batch_mode(b.suite).share_link(b.id), "suite": b.suite, "provider": b.spec,
               "created_at": b.created_at, "age": age(b.created_at),
               "runs": len(b.rows), "done": sum(r["status"] == "done" for r in b.rows), "baseline": b.baseline,
               "state": b.state(jobs.get(b.id)), "versions": batch_versions(b),
               "means": {k: v.get("mean") for k, v in b.aggregate().items()}}
              for b in found]
    if args.format == "json":
        sys.stdout.write(report_json(listed))
    elif not listed:
        print("No runs yet: `python -m clearside regress --suite flagship` makes some.")
    else:
        for b in listed:
            flag = " (baseline)" if b["baseline"] else ""
            means = b["means"]
            print(f"{b['batch']}  {b['created_at'][:16]}  {b['suite']:<9}  {b['provider']:<30}  "
                  f"{b['done']}/{b['runs']} done  {b['state']:<11}  coverage {means.get('coverage', '—')}  "
                  f"neutrality {means.get('neutrality_violations', '—')}{flag}")
            if b["baseline"]:
                print(f"    baseline made {b['age']} ago with {versions_text(b['versions'])}")
    return 0


def _batch_mode(suite: str) -> modes.BatchMode:
    """The batch kind of a suite's runs: a suite of the user's own is a regression suite."""
    from .. import modes
    from ..quality import compare
    from ..quality.batch import SUITES as BUILTIN

    if suite in (*BUILTIN, compare.SUITE):
        return modes.batch_mode_of_suite(suite)
    return modes.BATCH_MODES["regression"]


def cmd_bless(args: argparse.Namespace) -> int:
    from ..quality.baseline import bless, history, history_markdown
    from ..store import open_store

    if args.history:
        if args.id or args.note:
            raise InputError("bless --history lists the bless history: give it no batch and no --note "
                             "(--suite NAME for one suite).")
        rows = history(open_store(), args.suite)
        sys.stdout.write(report_json(rows) if args.format == "json" else history_markdown(rows))
        return 0
    if not args.id:
        raise InputError("bless needs the batch (or one of its runs' ids) to make its suite's baseline, or "
                         "--history to list the bless history: `python -m clearside runs` lists the batches.")
    if args.suite:
        raise InputError("--suite goes with --history; a batch's suite is its own.")
    blessed = bless(open_store(), args.id, note=args.note or "")
    batch = blessed.batch
    print(f"Batch {batch.id} ({batch.spec}, {len(batch.rows)} runs) is now the {batch.suite} baseline"
          + (f", replacing {blessed.previous}." if blessed.previous else "."))
    for warning in blessed.warnings:
        print(f"warning (recorded in the bless history): {warning}", file=sys.stderr)
    return 0


def add_parsers(sub: Any, model_options: Any) -> None:
    r = sub.add_parser("regress", help="run a benchmark suite n times and compare with the blessed baseline "
                                       "(exit 1 on a regression)")
    r.add_argument("--suite", metavar="NAME|FILE", default="flagship",
                   help=f"a built-in suite ({', '.join(SUITES)}; default flagship) or a suite file of your "
                        "own (.yaml, .yml or .jsonl; `python -m clearside suite validate FILE` checks it)")
    r.add_argument("--runs", type=int, default=3, help="debates per proposition (default 3)")
    r.add_argument("--thresholds", metavar="FILE", help="JSON overriding gates and tolerances per metric")
    r.add_argument("--bless", action="store_true", help="make this batch the suite's baseline")
    r.add_argument("--note", metavar="TEXT", help="with --bless: why this batch is the new baseline (required on the "
                                                  "flagship suite), kept in the bless history")
    r.add_argument("--allow-version-change", action="store_true",
                   help="run even when the baseline was scored by another metric suite or embedding model (its "
                        "comparison is then shown with a warning); refused otherwise")
    r.add_argument("--format", choices=("md", "json"), default="md", help="what goes to stdout")
    share_options(r)
    r.add_argument("--enqueue", action="store_true",
                   help="queue the batch for `python -m clearside worker` processes, print its id and exit")
    r.add_argument("--swap-check", action="store_true",
                   help="also swap-check each debate (flip_rate; one more moderator call per debate)")
    r.add_argument("--strategy", choices=STRATEGIES,
                   help="how the agents write, as for `debate` (single: the one-call control; default: the "
                        "provider's)")
    model_options(r)
    r.set_defaults(func=cmd_regress)

    runs = sub.add_parser("runs", help="list regression and comparison batches")
    runs.add_argument("--suite", metavar="NAME", help=f"one suite: {', '.join(SUITES)}, {COMPARE_SUITE} or "
                                                      "the name of a suite of your own (default: every suite)")
    runs.add_argument("--format", choices=("table", "json"), default="table")
    runs.set_defaults(func=cmd_runs)

    bless = sub.add_parser("bless", help="make a batch its suite's baseline (the only way a baseline moves); "
                                         "--history lists every bless with its note and warnings")
    bless.add_argument("id", metavar="BATCH|RUN", nargs="?")
    bless.add_argument("--note", metavar="TEXT", help="why this batch is the new baseline: required on the flagship "
                                                      "suite, optional elsewhere; kept in the history")
    bless.add_argument("--history", action="store_true", help="list the bless history, newest first")
    bless.add_argument("--suite", metavar="NAME", help="with --history: one suite's history")
    bless.add_argument("--format", choices=("table", "json"), default="table", help="with --history")
    bless.set_defaults(func=cmd_bless)
