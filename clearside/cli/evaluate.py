"""Quality commands: ``metrics``, ``regress``, ``runs``, ``bless`` and ``compare``.

``regress`` exits 0 when the batch passes and 1 on a regression, so CI can gate on it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ClearSideError, InputError
from ..inputs import question, read_json
from ..providers import DEFAULT_PROVIDER, get_provider
from . import here
from .common import COMPARE_SUITE, SUITES, log_violations, progress, share, share_options, write

if TYPE_CHECKING:  # the rest is imported by the command that runs (see common.py)
    from .. import modes


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _load_debate(source: str) -> tuple[Any, dict[str, Any] | None]:
    """A document from a file, or a saved debate's document and recorded usage by its id."""
    from ..static.exchange import document_of
    from ..store import open_store

    if not Path(source).exists() and re.fullmatch(r"[0-9a-f]{32}", source):
        record = open_store().get(source)
        if record.document is None:
            raise InputError(f"Debate {source} has no finished document yet (status {record.status}).")
        return record.document, (record.data or {}).get("usage")
    data = document_of(read_json(source, "debate"))  # an export's versions set aside
    if isinstance(data, dict) and ("key_points" in data or "turns" in data) and isinstance(data.get("document"), dict):
        return data["document"], None  # a reference file or a live transcript: score its v1 document
    return data, None


def cmd_metrics(args: argparse.Namespace) -> int:
    from ..quality import metrics, references
    from ..quality.metrics.report import markdown as metrics_markdown

    if args.control and not args.swap_check:
        raise InputError("--control goes with --swap-check: it is the swap check's unswapped rerun.")
    if args.swap_check:
        return cmd_swap_check(args)
    if len(args.debate) != 1:
        raise InputError("metrics scores one debate: give one DEBATE.json or ID (several only with --swap-check).")
    args.debate = args.debate[0]
    document, usage = _load_debate(args.debate)
    reference = references.load(args.reference) if args.reference else None
    result = metrics.compute(document, reference=reference, usage=usage, semantic_metrics=not args.no_embeddings)
    write(_json(result) if args.format == "json" else metrics_markdown(result, args.debate), args.out)
    return 0


SWAP_REFERENCES = "flagship, argkp-dev (its four topics) or argkp-dev:1..4"


def _reference_debates(names: str) -> list[tuple[str, dict[str, Any]]]:
    """``--reference`` of a swap check: the flagship's hand-structured document; for an ArgKP dev topic (the
    references hold key points, not debates) its newest debate saved by ``regress --suite argkp-dev``."""
    from ..quality import references
    from ..store import open_store

    out: list[tuple[str, dict[str, Any]]] = []
    for name in [n.strip() for n in names.split(",") if n.strip()]:
        if name == "argkp-dev":
            out += _reference_debates(",".join(r.name for r in references.argkp_dev()))
            continue
        if name != "flagship" and not name.startswith("argkp-dev:"):
            raise InputError(f"Unknown reference {name!r} for --swap-check: use {SWAP_REFERENCES} "
                             "(pass a debate of your own as a file or an id).")
        ref = references.load(name)  # argkp-dev:9 is refused here, naming the range
        if ref.document is not None:
            out.append((ref.name, ref.document))
            continue
        rows = [r for r in open_store().runs("argkp-dev") if r["status"] == "done"
                and (r.get("data") or {}).get("item") == ref.name and r.get("debate_id")]
        record = next((rec for r in reversed(rows) if (rec := _saved(r["debate_id"])) is not None), None)
        if record is None:
            raise InputError(f"No saved debate of {ref.name} ({ref.proposition!r}) to swap-check: "
                             "`python -m clearside regress --suite argkp-dev --runs 1` debates each topic once; "
                             "or pass a debate file.")
        out.append((ref.name, record))
    return out


def _saved(debate_id: str) -> dict[str, Any] | None:
    from ..store import open_store

    try:
        return open_store().get(debate_id).document
    except ClearSideError:
        return None


def cmd_swap_check(args: argparse.Namespace) -> int:
    """``metrics --swap-check``: each debate's moderator rerun with FOR and AGAINST exchanged, and the flip rate."""
    from .. import checks
    from ..contract import validate_document
    from ..static import swap
    from ..static.engine import Engine

    debates = [(source, _load_debate(source)[0]) for source in args.debate]
    if args.reference:
        debates += _reference_debates(args.reference)
    if not debates:
        raise InputError(f"--swap-check needs a debate: DEBATE.json, a saved debate's id or --reference "
                         f"({SWAP_REFERENCES}).")
    documents = []
    for name, data in debates:  # every input is checked before the first model call
        if not isinstance(data, dict):
            raise InputError(f"{name} is not a debate to swap-check: expected a ClearSide v1 document, a JSON "
                             "object with proposition, pro, con and moderator.")
        try:
            documents.append((name, validate_document(data)))
        except InputError as exc:
            raise InputError(f"{name} is not a debate to swap-check: {exc}") from None
    log_violations(args.violations_log)
    provider = get_provider(args.provider)
    engine = Engine(provider, retries=args.retries, temperature=args.temperature, on_event=progress(),
                    embeddings=checks.LEXICAL_ONLY if args.no_embeddings else None)  # lexical matching, lexical checks
    results, failures, code = [], [], 0
    for name, document in documents:
        print(f"Swap check of {name}: {args.runs} swapped moderator run(s) on {provider.spec}", file=sys.stderr)
        try:
            results.append(swap.swap_check(document, engine, runs=args.runs, name=name, control=args.control))
        except ClearSideError as exc:
            failures.append({"debate": name, "error": str(exc)})
            code = code or exc.exit_code
            print(f"error: swap check of {name} failed: {exc}", file=sys.stderr)
    report = swap.batch(results, failures)
    write(_json(report) if args.format == "json" else swap.markdown(report), args.out)
    return code


def _progress(total: int):
    lock, count = threading.Lock(), [0]

    def on_run(result: dict[str, Any]) -> None:
        with lock:
            count[0] += 1
            tail = f"failed: {result['error']}" if result["status"] == "failed" else (
                f"valid, {result['metrics'].get('neutrality_violations', 0):g} neutrality violations, "
                f"coverage {result['metrics'].get('coverage', 0):g}")
            print(f"[{count[0]}/{total}] {result['item']} #{result['index'] + 1} in {result['wall_seconds']} s: "
                  f"{tail} (debate {result['debate_id']})", file=sys.stderr, flush=True)

    return on_run


def cmd_regress(args: argparse.Namespace) -> int:
    from ..quality import regress
    from ..store import open_store

    thresholds = read_json(args.thresholds, "thresholds") if args.thresholds else None
    if thresholds is not None and not isinstance(thresholds, dict):
        raise InputError(f"{args.thresholds} must hold an object such as {{\"coverage\": {{\"tolerance\": 0.2}}}}.")
    suite = regress.load_suite(args.suite)  # a malformed suite file is refused here, before any model call
    items = suite.cases
    if args.bless and suite.name in regress.NOTE_REQUIRED and not (args.note or "").strip():
        raise InputError(f"--bless on the {suite.name} suite needs --note \"why\": a new {suite.name} baseline is "
                         "blessed only with a note of why (spec 000: only if reasoning quality improves).")
    if args.enqueue and (args.report or args.junit):
        raise InputError("--report and --junit write the finished batch's report, which --enqueue does not wait "
                         "for: run without --enqueue, or compare the batch when it is done with `compare-runs "
                         "BASELINE BATCH --report FILE.html --junit FILE.xml`.")
    if args.enqueue and not suite.builtin:
        raise InputError(f"--enqueue takes a built-in suite ({', '.join(regress.SUITES)}): the workers cannot read "
                         f"{suite.source}. Run the batch without --enqueue.")
    log_violations(args.violations_log)
    provider = get_provider(args.provider, concurrency=args.concurrency)
    provider.preflight()  # an unreachable server is reported (exit 3) before any run is saved as failed
    if args.enqueue:
        return enqueue_regress(args, provider, thresholds, len(items))
    store = open_store()
    print(f"Running {suite.name} ({len(items)} case(s)) {args.runs} time(s) on {provider.spec}; "
          f"each run is saved as it finishes.", file=sys.stderr)
    report = regress.run_batch(suite, provider, store, runs=args.runs, concurrency=args.concurrency,
                               retries=args.retries, temperature=args.temperature, thresholds=thresholds,
                               on_run=_progress(len(items) * args.runs), swap_check=args.swap_check,
                               allow_version_change=args.allow_version_change)
    for warning in report["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    if args.bless:
        blessed = regress.bless(store, report["batch"], note=args.note or "")
        print(f"Blessed batch {report['batch']} as the {suite.name} baseline.", file=sys.stderr)
        for warning in blessed.warnings:
            print(f"warning (recorded in the bless history): {warning}", file=sys.stderr)
    text = regress.markdown(report)
    if args.out:
        write(_json(report), args.out)
        write(text, str(Path(args.out).with_suffix(".md")))
    share(report, store, args)
    sys.stdout.write(_json(report) if args.format == "json" else text)
    return 0 if report["passed"] else 1


def enqueue_regress(args: argparse.Namespace, provider: Any, thresholds: dict | None, items: int) -> int:
    """``regress --enqueue``: queue the batch for the workers, print its id, exit at once."""
    from ..quality import workflow as batches

    if args.bless:
        raise InputError("--bless needs the finished batch: queue it, then `python -m clearside bless BATCH` "
                         "once `python -m clearside status BATCH --wait` says it passed.")
    settings = batches.RegressSettings(runs=args.runs, retries=args.retries, temperature=args.temperature,
                                       thresholds=thresholds, window=args.concurrency, swap_check=args.swap_check)
    batch_id = batches.enqueue_regress(args.suite, provider, settings, lend=False)
    print(batch_id)
    print(f"Queued {items * args.runs} debate(s) of {args.suite} on {provider.spec} as batch {batch_id}: "
          f"`python -m clearside worker` (any number of them, or the dashboard) runs them; "
          f"`python -m clearside status {batch_id} --wait` follows it.", file=sys.stderr)
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    from ..quality import regress
    from ..runtime import status
    from ..store import open_store

    store = open_store()
    suites = [args.suite] if args.suite else regress.suite_names(store)
    found = [b for suite in suites for b in regress.batches(store, suite)]
    jobs = status.jobs_of((b.id for b in found if b.state() == "interrupted"), store.url)  # running rows: ask
    listed = [{"batch": b.id, "kind": _batch_mode(b.suite).kind,
               "link": _batch_mode(b.suite).share_link(b.id), "suite": b.suite, "provider": b.spec,
               "created_at": b.created_at, "age": regress.age(b.created_at),
               "runs": len(b.rows), "done": sum(r["status"] == "done" for r in b.rows), "baseline": b.baseline,
               "state": b.state(jobs.get(b.id)), "versions": regress.batch_versions(b),
               "means": {k: v.get("mean") for k, v in b.aggregate().items()}}
              for b in found]
    if args.format == "json":
        sys.stdout.write(_json(listed))
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
                print(f"    baseline made {b['age']} ago with {regress.versions_text(b['versions'])}")
    return 0


def _batch_mode(suite: str) -> modes.BatchMode:
    """The batch kind of a suite's runs: a suite of the user's own is a regression suite."""
    from .. import modes
    from ..quality import compare, regress

    if suite in (*regress.SUITES, compare.SUITE):
        return modes.batch_mode_of_suite(suite)
    return modes.BATCH_MODES["regression"]


def cmd_bless(args: argparse.Namespace) -> int:
    from ..quality import regress
    from ..store import open_store

    if args.history:
        if args.id or args.note:
            raise InputError("bless --history lists the bless history: give it no batch and no --note "
                             "(--suite NAME for one suite).")
        rows = regress.history(open_store(), args.suite)
        sys.stdout.write(_json(rows) if args.format == "json" else regress.history_markdown(rows))
        return 0
    if not args.id:
        raise InputError("bless needs the batch (or one of its runs' ids) to make its suite's baseline, or "
                         "--history to list the bless history: `python -m clearside runs` lists the batches.")
    if args.suite:
        raise InputError("--suite goes with --history; a batch's suite is its own.")
    blessed = regress.bless(open_store(), args.id, note=args.note or "")
    batch = blessed.batch
    print(f"Batch {batch.id} ({batch.spec}, {len(batch.rows)} runs) is now the {batch.suite} baseline"
          + (f", replacing {blessed.previous}." if blessed.previous else "."))
    for warning in blessed.warnings:
        print(f"warning (recorded in the bless history): {warning}", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from ..quality import compare
    from ..quality import workflow as batches
    from ..quality.job import CompareJob
    from ..store import open_store

    specs = compare.check_specs(args.provider or [])
    temperatures = None
    if args.temperatures:
        try:
            temperatures = [float(t) for t in args.temperatures.split(",")]
        except ValueError:
            raise InputError(f"--temperatures takes numbers separated by commas, e.g. 0.2,0.8 "
                             f"(got {args.temperatures!r}).") from None
    providers = [get_provider(spec) for spec in specs]
    for provider in providers:
        provider.preflight()  # an unreachable server is reported before any debate starts
    store = open_store()
    job = CompareJob(question(args.question), providers, store, temperatures=temperatures,
                     temperature=args.temperature, retries=args.retries, window=args.concurrency)
    if args.enqueue:
        return enqueue_compare(job)
    with here.hosting(store.url):
        job.start(here=True)
        print(f"Comparing {', '.join(job.labels)}; batch {job.id}", file=sys.stderr)
        lock = threading.Lock()
        printers = {batches.item_id(job.id, n): _printer(progress(prefix=f"{label} ", lock=lock))
                    for n, label in enumerate(job.labels)}  # each model's progress, its label first
        here.follow(job.id, None, store_url=store.url, cancel=job.cancel, also=printers)
    report = job.report()
    for label, result in report["results"].items():
        print(f"{label}: {result['status']} {result.get('error', '')}".rstrip(), file=sys.stderr)
    write(_json(report) if args.format == "json" else compare.markdown(report), args.out)
    return 0 if all(r["status"] == "done" for r in report["results"].values()) else 3


def _printer(on_event: Any) -> here.OnEntry:
    """A progress printer of the engine's events (``common.progress``) fed from a job's progress rows."""
    from ..runtime.events import Event

    return lambda entry: on_event(Event.of(entry))


def enqueue_compare(job: Any) -> int:
    """``compare --enqueue``: queue one debate per model for the workers, print the batch id, exit at once."""
    from ..quality import workflow as batches

    batch_id = batches.enqueue_compare(job.question, job.providers, job.settings, lend=False,
                                       store_url=job.store.url)
    print(batch_id)
    print(f"Queued a comparison of {', '.join(p.spec for p in job.providers)} as batch {batch_id}: "
          f"`python -m clearside worker` (any number of them, or the dashboard) runs it; "
          f"`python -m clearside status {batch_id} --wait` follows it; the Compare page opens it with "
          f"?compare={batch_id}.", file=sys.stderr)
    return 0


def add_parsers(sub, model_options) -> None:
    m = sub.add_parser("metrics", help="quality metrics of a debate (a JSON file or a saved debate's id); "
                                       "--swap-check reruns its moderator with the sides exchanged")
    m.add_argument("debate", metavar="DEBATE.json|ID", nargs="*",
                   help="one debate; with --swap-check any number (or none with --reference)")
    m.add_argument("--reference", metavar="NAME|FILE",
                   help="score coverage, stance and hinges against flagship, argkp-dev:1..4 or a reference file; "
                        f"with --swap-check, also swap-check {SWAP_REFERENCES} (comma-separated)")
    m.add_argument("--format", choices=("json", "md"), default="json")
    m.add_argument("--no-embeddings", action="store_true", help="only the metrics that need no embedding model "
                                                                "(with --swap-check: lexical matching and checks)")
    m.add_argument("--out", metavar="FILE")
    m.add_argument("--swap-check", action="store_true",
                   help="rerun only the moderator with FOR and AGAINST exchanged and report the flip rate "
                        "(one model call per run; see clearside/swap.py)")
    m.add_argument("--runs", type=int, default=1, help="swapped moderator runs per debate, averaged (default 1)")
    m.add_argument("--control", action="store_true",
                   help="with --swap-check: also rerun the moderator --runs times on the original order; its flip "
                        "rate is the moderator's own run-to-run variation, and the swap effect what is left")
    m.add_argument("--provider", default=DEFAULT_PROVIDER,
                   help="the model the swap check runs on, as for debate (default: embedded)")
    m.add_argument("--retries", type=int, default=2, help="re-asks after an invalid output (default 2)")
    m.add_argument("--temperature", type=float, default=0.4)
    m.add_argument("--violations-log", metavar="FILE", help="append schema violations as JSON lines")
    m.set_defaults(func=cmd_metrics)

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
                                                      "suite (spec 000), optional elsewhere; kept in the history")
    bless.add_argument("--history", action="store_true", help="list the bless history, newest first")
    bless.add_argument("--suite", metavar="NAME", help="with --history: one suite's history")
    bless.add_argument("--format", choices=("table", "json"), default="table", help="with --history")
    bless.set_defaults(func=cmd_bless)

    c = sub.add_parser("compare", help="debate one question on 2-4 provider:model choices side by side")
    c.add_argument("question")
    c.add_argument("--concurrency", type=int, help="debates at once (default: all)")
    c.add_argument("--format", choices=("md", "json"), default="md")
    c.add_argument("--provider", action="append", metavar="PROVIDER:MODEL", required=True,
                   help="give it 2 to 4 times, e.g. --provider embedded --provider ollama:llama3.2")
    c.add_argument("--retries", type=int, default=2, help="re-asks after an invalid output (default 2)")
    c.add_argument("--temperature", type=float, default=0.4, help="every model's temperature (default 0.4)")
    c.add_argument("--temperatures", metavar="T1,T2,...",
                   help="one temperature per --provider, in order: the same model may then be compared at two "
                        "temperatures (overrides --temperature)")
    c.add_argument("--out", metavar="FILE", help="write the report here instead of stdout")
    c.add_argument("--enqueue", action="store_true",
                   help="queue the debates for `python -m clearside worker` processes, print the batch id and exit")
    c.set_defaults(func=cmd_compare)
