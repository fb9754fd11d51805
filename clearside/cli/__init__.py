"""``python -m clearside`` (and the ``clearside`` command): debates, live debates, challenges and the schema.

One module per command group: ``debate`` (debate, challenge, render, schema), ``live``, ``store`` (list, export,
import, delete, rename, duplicate), ``jobs`` (worker, status, cancel, the ``--enqueue`` of ``debate`` and
``remap``), ``evaluate`` (metrics, compare), ``regression`` (regress, runs, bless), ``review`` (suite validate,
compare-runs), ``perspectives``, ``remap``, ``check`` (a provider's health check), ``dashboard`` (ui),
``value``, ``understanding`` (the understanding check: answer, show, gains); ``study`` (study mode); ``serve`` (the
HTTP API, and its tokens: token create, list, revoke); ``mcp`` (the MCP server);
``common`` holds what they share, ``here`` a command's work run on the runtime in its own process.

Exit codes: 0 ok, 2 bad input (an unknown debate id or a refused import
included), 3 provider unreachable or failing, 4 schema failure after retries,
5 the debate store cannot be opened or written.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import ClearSideError
from ..paths import legacy_live_files
from . import (
    check,
    cruxes,
    dashboard,
    debate,
    evaluate,
    jobs,
    live,
    mcp,
    perspectives,
    regression,
    remap,
    review,
    serve,
    store,
    study,
    understanding,
    value,
)
from .common import model_options


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m clearside",
                                     description="ClearSide: think both sides, decide with clarity.")
    sub = parser.add_subparsers(dest="command", required=True)
    debate.add_parsers(sub)
    live.add_parser(sub, model_options)
    store.add_parsers(sub)
    jobs.add_parsers(sub)
    evaluate.add_parsers(sub)
    regression.add_parsers(sub, model_options)
    value.add_parsers(sub, model_options)
    understanding.add_parser(sub)
    study.add_parser(sub, model_options)
    evaluate.add_compare_parser(sub)
    review.add_parsers(sub)
    perspectives.add_parser(sub, model_options)
    remap.add_parser(sub)
    cruxes.add_parser(sub)
    debate.add_schema_parser(sub)
    check.add_parser(sub)
    dashboard.add_parser(sub)
    serve.add_parsers(sub)
    mcp.add_parser(sub)
    return parser


def load_ahead(args: argparse.Namespace) -> None:
    """``debate QUESTION`` run in this process on the embedded model: its GGUF starts loading on a side thread now,
    while the command opens the store and starts the runtime on the other core, rather than at the first call
    (bench/reader.py's timeline). Anything else (another command, ``--enqueue``, another provider, a question the
    command will refuse) loads nothing ahead."""
    if getattr(args, "command", None) != "debate" or getattr(args, "enqueue", False) or not args.question:
        return
    if str(args.provider).split(":", 1)[0] != "embedded":
        return
    from ..inputs import question
    from ..providers import get_provider

    try:
        question(args.question)
        provider = get_provider(args.provider)
    except ClearSideError:  # the command says why
        return
    preload = getattr(provider, "preload", None)
    if preload is not None:
        preload()


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra and not getattr(args, dashboard.PASSTHROUGH, False):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")  # what parse_args says
        if extra:
            args.streamlit_args = extra  # clearside ui: the rest goes to streamlit run
    except SystemExit as exc:  # argparse already printed the problem; usage errors are bad input
        return 2 if exc.code else 0
    if argv is None:  # the command line itself (a caller's own argv list is a test or a script: nothing ahead)
        load_ahead(args)
    try:
        if legacy_live_files():  # an earlier ClearSide kept live debates as JSON files: the store takes them in
            from ..live.exchange import adopt_live_files
            from ..store import open_store

            adopt_live_files(open_store())
        return args.func(args)
    except ClearSideError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
