"""The debate commands: ``debate`` (with ``--save``, ``--resume`` and ``--enqueue``), ``challenge``, ``render``
and ``schema``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DebateFailed, InputError
from ..inputs import read_json
from ..providers import get_provider
from . import jobs
from .common import ALL_ACTIONS, FORMATS, PERSONAS, SOURCE_LIMITS, STRATEGIES, engine_from_args, model_options, write

if TYPE_CHECKING:  # the rest is imported by the command that runs (see common.py)
    from .. import sources
    from ..static.engine import DebateRun, Engine
    from ..static.recorder import StaticRecorder


def _save_partial(run: DebateRun, out: str | None) -> None:
    """Keep the sections that did succeed, so a failure loses nothing the models already wrote."""
    from ..static.engine import SECTIONS

    if not out:
        return
    sections: dict[str, Any] = {name: getattr(run, name).dump() for name in SECTIONS
                                if getattr(run, name) is not None}
    partial = Path(f"{out}.partial.json")
    partial.write_text(json.dumps({"raw_input": run.raw_input, "sections": sections,
                                   "violations": run.violations}, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"Kept the finished sections in {partial}", file=sys.stderr)


def _recorder(args: argparse.Namespace, engine: Engine, run: DebateRun) -> StaticRecorder | None:
    """With --save or --resume: the debate goes into the store section by section as the agents finish."""
    from ..static.recorder import StaticRecorder
    from ..store import open_store, safe_url

    if not (args.save or args.resume):
        return None
    store = open_store()
    recorder = StaticRecorder(store, run, engine.provider, debate_id=args.resume or None)
    engine.on_section = recorder.on_section
    verb = "Resuming" if args.resume else "Saving as"
    print(f"{verb} debate {recorder.id} in {safe_url(store.url)}", file=sys.stderr)
    return recorder


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
    from ..quality.scored import run_recorded
    from ..render import render
    from ..static import personas, remap
    from ..static.engine import DebateRun
    from ..static.recorder import load_run
    from ..store import open_store

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
    if args.enqueue:
        provider = get_provider(args.provider, small=True if args.small else None)
        return jobs.enqueue_debate(run, provider, resume=args.resume, temperature=args.temperature,
                                       retries=args.retries, strategy=args.strategy)
    engine = engine_from_args(args)
    recorder = _recorder(args, engine, run)
    try:  # saved as it goes; run_recorded marks the saved debate done or failed
        document = run_recorded(engine, run, recorder)
    except DebateFailed as exc:
        _save_partial(exc.run, args.out)
        if recorder is not None:
            print(f"The finished sections are saved. Resume with: python -m clearside debate --resume {recorder.id}",
                  file=sys.stderr)
        raise exc.cause from None
    if recorder is not None:
        print(f"Saved debate {recorder.id}", file=sys.stderr)
    if weights is not None:  # then the synthesis re-mapped under them (saved as a version of a saved debate)
        document = remap.remap(document, engine, weights=weights)
        if recorder is not None:
            remap.save_version(open_store(), recorder.id, document, engine.provider)
    write(render(document, args.format), args.out)
    return 0


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
                        help="whole: one call per agent; focused: each agent in smaller calls (default: the "
                             "provider's, see README 'Substance checks')")
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

    rend = sub.add_parser("render", help="render a saved debate as Markdown, Quick View, script or JSON")
    rend.add_argument("debate", metavar="DEBATE.json")
    rend.add_argument("--format", choices=FORMATS, default="md")
    rend.add_argument("--out", metavar="FILE")
    rend.set_defaults(func=cmd_render)


def add_schema_parser(sub: Any) -> None:
    sch = sub.add_parser("schema", help="print the schema v1 JSON Schema, or --write it to clearside/data/schemas/")
    sch.add_argument("--write", action="store_true")
    sch.set_defaults(func=cmd_schema)
