"""The debate commands: ``debate`` (with ``--save``, ``--resume`` and ``--enqueue``), ``challenge``, ``render``
and ``schema``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..inputs import read_json
from ..providers import get_provider
from . import here, jobs
from .common import (
    ALL_ACTIONS,
    FORMATS,
    PERSONAS,
    SOURCE_LIMITS,
    STRATEGIES,
    engine_from_args,
    log_violations,
    model_options,
    progress,
    write,
)

if TYPE_CHECKING:  # the rest is imported by the command that runs (see common.py)
    from .. import sources
    from ..schema import Document
    from ..static.run import DebateRun


def _save_partial(run: DebateRun, out: str | None) -> None:
    """Say what the stopped debate lacks, and keep the sections that did succeed, so a failure loses nothing the
    models already wrote (``missing``: what it lacks, :func:`clearside.store.records.missing_parts`)."""
    from ..static.run import SECTIONS
    from ..store.records import missing_parts, partial_notice

    gone = missing_parts(run.sections())
    if run.proposition is not None:
        print(partial_notice(gone), file=sys.stderr)
    if not out:
        return
    sections: dict[str, Any] = {name: getattr(run, name).dump() for name in SECTIONS
                                if getattr(run, name) is not None}
    partial = Path(f"{out}.partial.json")
    partial.write_text(json.dumps({"raw_input": run.raw_input, "sections": sections, "missing": gone,
                                   "violations": run.violations}, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"Kept the finished sections in {partial}", file=sys.stderr)


def _sources(paths: list[str] | None) -> list[sources.Source] | None:
    """The files of ``--sources`` read and checked, all or nothing (each refusal names its file and the fix)."""
    from .. import sources

    if not paths:
        return None
    files = []
    for path in paths:
        try:
            files.append((Path(path).name, Path(path).read_bytes()))
        except OSError as exc:
            raise InputError(f"Cannot read the source {path}: {exc.strerror or exc}. Check the path.") from None
    return sources.read_sources(files)


def cmd_debate(args: argparse.Namespace) -> int:
    from ..render import render
    from ..static import personas, remap
    from ..static.recorder import load_run
    from ..static.run import DebateRun
    from ..store import open_store
    from ..store.records import missing_parts, partial_notice

    if args.no_citations and not args.sources:
        raise InputError("--no-citations goes with --sources: it shows your sources to the advocates without "
                         "asking them to quote.")
    if args.resume:
        if args.question:
            raise InputError("Give either a QUESTION or --resume ID, not both.")
        if args.personas or args.persona or args.sources:
            raise InputError("--resume keeps the saved debate's personas and sources: give --personas, --persona "
                             "or --sources with a QUESTION only.")
        run = load_run(open_store(), args.resume)
        if not run.missing:
            print(f"Debate {args.resume} is already complete; rendering it.", file=sys.stderr)
    elif not args.question:
        raise InputError("Give a QUESTION to debate, or --resume ID to finish a saved one.")
    else:
        run = DebateRun.from_input(args.question, geography=args.geography, timeframe=args.timeframe,
                                   domain=args.domain, personas=personas.choose(args.personas, args.persona),
                                   sources=_sources(args.sources), cite=not args.no_citations)
    weights = remap.parse_weights(args.weights) if args.weights is not None else None  # checked before any call
    if weights is not None and set(weights.dump().values()) == {1}:
        raise InputError("--weights sets every category it names to 1, the default: raise or lower one (0 to 3).")
    if weights is not None and args.enqueue:
        raise InputError("--weights re-maps a finished debate: without --enqueue, or later with `python -m "
                         "clearside remap ID --weights ...`.")
    provider = get_provider(args.provider, small=True if args.small else None, concurrency=args.concurrency)
    options = {"temperature": args.temperature, "retries": args.retries, "strategy": args.strategy}
    if args.enqueue:
        return jobs.enqueue_debate(run, provider, resume=args.resume, **options)
    log_violations(args.violations_log)
    document = _run_here(args, run, provider, options, weights)
    if notice := partial_notice(missing_parts(document.dump())):  # a persona dropped: said here and in the output
        print(notice, file=sys.stderr)
    write(render(document, args.format), args.out)
    return 0


def _run_here(args: argparse.Namespace, run: DebateRun, provider: Any, options: dict[str, Any],
              weights: Any) -> Document:
    """The debate's workflow run in this process and followed to its end (:mod:`clearside.cli.here`), its progress
    on stderr; the document. Saved as it goes; without --save or --resume it is deleted from the store once it
    ends (its sections, on a failure, in ``--out``'s ``.partial.json``)."""
    from ..schema import Document
    from ..static import workflow
    from ..static.recorder import StaticRecorder, load_run
    from ..store import open_store, safe_url

    store = open_store()
    keep = bool(args.save or args.resume)
    with here.hosting(store.url):
        if args.resume:
            debate_id = args.resume
            print(f"Resuming debate {debate_id} in {safe_url(store.url)}", file=sys.stderr)
            job_id = workflow.continue_static(debate_id, provider, store=store, here=True, **options)
        else:
            debate_id = StaticRecorder(store, run, provider).id
            if keep:
                print(f"Saving as debate {debate_id} in {safe_url(store.url)}", file=sys.stderr)
            job_id = workflow.enqueue_static(debate_id, provider, store=store, here=True, **options)
        try:
            try:
                state = _follow(job_id, debate_id, store)
            except KeyboardInterrupt:
                _say_resume(debate_id, keep)
                raise
            if state.status != "done":
                _save_partial(load_run(store, debate_id), args.out)
                _say_resume(debate_id, keep)
            here.finished(state)
            if keep:
                print(f"Saved debate {debate_id}", file=sys.stderr)
            document = Document.model_validate(store.get(debate_id).document)
            if weights is not None:  # then the synthesis re-mapped under them (a version of the saved debate)
                document = _remapped(store, debate_id, weights, provider, options)
        finally:
            if not keep:
                store.delete(debate_id)
    return document


def _say_resume(debate_id: str, keep: bool) -> None:
    if keep:
        print(f"The finished sections are saved. Resume with: python -m clearside debate --resume {debate_id}",
              file=sys.stderr)


def _follow(job_id: str, debate_id: str, store: Any) -> Any:
    """Follow the debate's job, its agents' progress on stderr; Ctrl+C cancels it as the dashboard's Cancel does."""
    from ..runtime.events import Event
    from ..static import workflow

    printer = progress()
    return here.follow(job_id, lambda entry: printer(Event.of(entry)), store_url=store.url,
                       cancel=lambda: workflow.cancel_static(debate_id, store=store))


def _remapped(store: Any, debate_id: str, weights: Any, provider: Any, options: dict[str, Any]) -> Document:
    """The finished debate re-mapped under ``weights`` on the runtime here, saved as its next version."""
    from ..schema import Document
    from ..static import remap, workflow

    job = workflow.remap_job(debate_id, remap.Conditions(weights), provider, temperature=options["temperature"],
                             retries=options["retries"])
    job_id = workflow.enqueue_remap(job, provider, store_url=store.url, here=True)
    state = _follow(job_id, debate_id, store)
    here.finished(state)
    body = store.version(debate_id, int(state.result["number"])).body or {}
    return Document.model_validate(body["document"])


def _read_document(path: str) -> dict[str, Any]:
    from ..contract import validate_document
    from ..static.exchange import document_of

    data = document_of(read_json(path))  # an export's versions set aside
    if not isinstance(data, dict):
        raise InputError(f"{path} does not hold a ClearSide document (expected a JSON object).")
    validate_document(data)
    return data


def cmd_challenge(args: argparse.Namespace) -> int:
    from ..render import render

    document = _read_document(args.debate)
    updated = engine_from_args(args).challenge(document, args.action, args.target)
    write(render(updated, "json"), args.out)
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from ..contract import validate_document
    from ..render import render

    write(render(validate_document(_read_document(args.debate)), args.format), args.out)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from .. import contract

    if args.write:
        contract.SCHEMA_FILE.write_text(contract.schema_file_text(), encoding="utf-8")
        print(f"Wrote {contract.SCHEMA_FILE}", file=sys.stderr)
    else:
        sys.stdout.write(contract.schema_file_text())
    return 0


def add_parsers(sub: Any) -> None:
    """``debate``, ``challenge`` and ``render``."""
    debate = sub.add_parser("debate", help="generate a pro/con debate with a neutral synthesis")
    debate.add_argument("question", nargs="?")
    debate.add_argument("--save", action="store_true",
                        help="also save it in the store, section by section as the agents finish")
    debate.add_argument("--resume", metavar="ID", help="finish a saved debate: only its missing sections run")
    debate.add_argument("--enqueue", action="store_true",
                        help="save it and queue it for a worker (or the dashboard); print its id and exit at once")
    debate.add_argument("--geography")
    debate.add_argument("--timeframe")
    debate.add_argument("--domain")
    debate.add_argument("--personas", metavar="NAMES", help="a persona debate: 2 to 4 of "
                        f"{', '.join(PERSONAS)}, comma-separated (with --persona: 2 to 4 in all)")
    debate.add_argument("--persona", action="append", metavar='"NAME: LENS"',
                        help="your own persona, a name and a one-line lens (repeatable)")
    debate.add_argument("--sources", nargs="+", metavar="FILE",
                        help=f"your own sources (.txt, .md, .html, .pdf, .csv; at most {SOURCE_LIMITS['files']} files "
                             f"of {SOURCE_LIMITS['mb']} MB, {SOURCE_LIMITS['pages']} PDF pages each): the advocates "
                             "draw on them and quote them, every quote checked against its passage")
    debate.add_argument("--no-citations", action="store_true",
                        help="with --sources: show them to the advocates without asking for quotes")
    debate.add_argument("--weights", metavar="CATEGORY=N,...", help="then re-map the synthesis under your value "
                        "weights, 0 to 3 per category, e.g. economic=3,ethical=1 (see the remap command)")
    debate.add_argument("--format", choices=FORMATS, default="json")
    debate.add_argument("--strategy", choices=STRATEGIES,
                        help="whole: one call per agent; focused: each agent in smaller calls; single: no separate "
                             "agents, one call writes both cases and the synthesis (the control `value` compares "
                             "a debate with) (default: the provider's, see docs/tools/checks.md)")
    debate.add_argument("--small", action="store_true",
                        help="treat the provider's model as small (the embedded default already is)")
    model_options(debate)
    debate.set_defaults(func=cmd_debate)

    challenge = sub.add_parser("challenge", help="challenge one element of a saved debate")
    challenge.add_argument("debate", metavar="DEBATE.json")
    challenge.add_argument("--action", choices=ALL_ACTIONS, required=True)
    challenge.add_argument("--target", required=True,
                           help="an assumption, claim, hinge, a citation (its passage id, e.g. S1.3), or free text")
    model_options(challenge)
    challenge.set_defaults(func=cmd_challenge)

    rend = sub.add_parser("render", help="render a saved debate as Markdown, Quick View, script or JSON, or its "
                                         "argument map as Argdown, AIF JSON or a Kialo outline")
    rend.add_argument("debate", metavar="DEBATE.json")
    rend.add_argument("--format", choices=FORMATS, default="md")
    rend.add_argument("--out", metavar="FILE")
    rend.set_defaults(func=cmd_render)


def add_schema_parser(sub: Any) -> None:
    sch = sub.add_parser("schema", help="print the schema v1 JSON Schema, or --write it to clearside/data/schemas/")
    sch.add_argument("--write", action="store_true")
    sch.set_defaults(func=cmd_schema)
