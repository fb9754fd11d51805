"""Evaluation commands: ``metrics`` (a debate's quality metrics, or its swap check) and ``compare`` (one question
on 2-4 models side by side). The regression batches' commands are in :mod:`clearside.cli.regression`.

``compare`` without ``--enqueue`` runs the comparison's workflow in this process (:mod:`clearside.cli.here`).
"""

from __future__ import annotations

import argparse
import re
import sys
import threading
from pathlib import Path
from typing import Any

from ..errors import ClearSideError, InputError
from ..inputs import question, read_json
from ..providers import DEFAULT_PROVIDER, get_provider
from . import here
from .common import STRATEGIES, log_violations, progress, report_json, write


def _load_debate(source: str) -> tuple[Any, dict[str, Any] | None]:
    """A document from a file, or a saved debate's document and recorded usage by its id."""
    from ..static.exchange import document_of, finished_document
    from ..store import open_store

    if not Path(source).exists() and re.fullmatch(r"[0-9a-f]{32}", source):
        store = open_store()
        return finished_document(store, source), (store.get(source).data or {}).get("usage")
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
    write(report_json(result) if args.format == "json" else metrics_markdown(result, args.debate), args.out)
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
    write(report_json(report) if args.format == "json" else swap.markdown(report), args.out)
    return code


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
    strategies = None
    if args.strategies:
        strategies = [None if s.strip() in ("", "auto") else s.strip() for s in args.strategies.split(",")]
    providers = [get_provider(spec) for spec in specs]
    for provider in providers:
        provider.preflight()  # an unreachable server is reported before any debate starts
    store = open_store()
    job = CompareJob(question(args.question), providers, store, temperatures=temperatures,
                     temperature=args.temperature, retries=args.retries, window=args.concurrency,
                     strategies=strategies, strategy=args.strategy)
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
    write(report_json(report) if args.format == "json" else compare.markdown(report), args.out)
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


def add_parsers(sub: Any) -> None:
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
                        "(one model call per run; see docs/quality/metrics.md)")
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


def add_compare_parser(sub: Any) -> None:
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
    c.add_argument("--strategy", choices=STRATEGIES, help="every model's generation strategy, as for `debate`")
    c.add_argument("--strategies", metavar="S1,S2,...",
                   help=f"one strategy per --provider, in order ({', '.join(STRATEGIES)} or auto): the same model "
                        "may then run as a debate and as the single-pass control, e.g. --provider embedded "
                        "--provider embedded --strategies auto,single (overrides --strategy)")
    c.add_argument("--out", metavar="FILE", help="write the report here instead of stdout")
    c.add_argument("--enqueue", action="store_true",
                   help="queue the debates for `python -m clearside worker` processes, print the batch id and exit")
    c.set_defaults(func=cmd_compare)
