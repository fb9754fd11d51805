"""``python -m clearside``: debates, live debates, challenges and the schema from the command line.

Exit codes: 0 ok, 2 bad input (an unknown debate id or a refused import
included), 3 provider unreachable or failing, 4 schema failure after retries,
5 the debate store cannot be opened or written.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
from pathlib import Path
from typing import Any

from . import jobs_cli, schema
from .engine import SECTIONS, STRATEGIES, DebateRun, Engine, Event, validate_document
from .errors import ClearSideError, DebateFailed, InputError
from .inputs import read_json
from .live import cli as live_cli
from .live.exchange import adopt_live_files, legacy_live_files
from .providers import DEFAULT_PROVIDER, get_provider
from .render import FORMATS, render
from .schema import ACTIONS
from .scored import run_recorded
from .static.recorder import StaticRecorder, load_run
from .store import cli as store_cli
from .store import open_store, safe_url

LABELS = {"orchestrator": "normalizing the proposition", "pro": "writing the case FOR",
          "con": "writing the case AGAINST", "moderator": "mapping the disagreement",
          "challenge": "answering the challenge"}


def _progress(stream=None):
    """Progress lines on ``stream`` (default: whatever ``sys.stderr`` is when a line is printed)."""
    lock = threading.Lock()

    def on_event(event: Event) -> None:
        if event.kind == "delta":
            return
        out = stream or sys.stderr
        with lock:
            if event.kind == "start":
                print(f"[{event.agent}] {LABELS.get(event.agent, 'working')}…", file=out, flush=True)
            elif event.kind == "done":
                print(f"[{event.agent}] done in {event.data['seconds']:.1f} s, {event.data['tokens']} tokens",
                      file=out, flush=True)
            elif event.kind == "retry":
                first = event.data["errors"][0] if event.data["errors"] else "invalid output"
                print(f"[{event.agent}] output rejected ({first}); re-asking, attempt {event.data['attempt']}",
                      file=out, flush=True)
            elif event.kind == "error":
                print(f"[{event.agent}] failed", file=out, flush=True)

    return on_event


def _write(text: str, out: str | None) -> None:
    if out:
        try:
            Path(out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise InputError(f"Cannot write {out}: {exc.strerror}") from exc
        print(f"Wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def log_violations(path: str | None) -> None:
    """--violations-log: every rejected model output, as a JSON line."""
    if path:
        handler = logging.FileHandler(path, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(message)s"))
        logging.getLogger("clearside.violations").addHandler(handler)


def _engine(args: argparse.Namespace) -> Engine:
    log_violations(args.violations_log)
    provider = get_provider(args.provider, small=True if getattr(args, "small", False) else None,
                            concurrency=args.concurrency)
    return Engine(provider, retries=args.retries, temperature=args.temperature, on_event=_progress(),
                  strategy=getattr(args, "strategy", None))


def _save_partial(run: DebateRun, out: str | None) -> None:
    """Keep the sections that did succeed, so a failure loses nothing the models already wrote."""
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
    if not (args.save or args.resume):
        return None
    store = open_store()
    recorder = StaticRecorder(store, run, engine.provider, debate_id=args.resume or None)
    engine.on_section = recorder.on_section
    verb = "Resuming" if args.resume else "Saving as"
    print(f"{verb} debate {recorder.id} in {safe_url(store.url)}", file=sys.stderr)
    return recorder


def cmd_debate(args: argparse.Namespace) -> int:
    if args.resume:
        if args.question:
            raise InputError("Give either a QUESTION or --resume ID, not both.")
        run = load_run(open_store(), args.resume)
        if not run.missing:
            print(f"Debate {args.resume} is already complete; rendering it.", file=sys.stderr)
    elif not args.question:
        raise InputError("Give a QUESTION to debate, or --resume ID to finish a saved one.")
    else:
        run = DebateRun.from_input(args.question, geography=args.geography, timeframe=args.timeframe,
                                   domain=args.domain)
    if args.enqueue:
        provider = get_provider(args.provider, small=True if args.small else None)
        return jobs_cli.enqueue_debate(run, provider, resume=args.resume, temperature=args.temperature,
                                       retries=args.retries, strategy=args.strategy)
    engine = _engine(args)
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
    _write(render(document, args.format), args.out)
    return 0


def _read_document(path: str) -> dict[str, Any]:
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(f"{path} does not hold a ClearSide document (expected a JSON object).")
    validate_document(data)
    return data


def cmd_challenge(args: argparse.Namespace) -> int:
    document = _read_document(args.debate)
    updated = _engine(args).challenge(document, args.action, args.target)
    _write(render(updated, "json"), args.out)
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    _write(render(validate_document(_read_document(args.debate)), args.format), args.out)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    if args.write:
        schema.SCHEMA_FILE.write_text(schema.schema_file_text(), encoding="utf-8")
        print(f"Wrote {schema.SCHEMA_FILE}", file=sys.stderr)
    else:
        sys.stdout.write(schema.schema_file_text())
    return 0


def _model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", default=DEFAULT_PROVIDER,
                        help="provider:model, e.g. embedded, embedded:/path/model.gguf, ollama:llama3.2, "
                             "openai:gpt-4o-mini (default: embedded)")
    parser.add_argument("--retries", type=int, default=2, help="re-asks after an invalid output (default 2)")
    parser.add_argument("--concurrency", type=int,
                        help="requests sent to the model endpoint at once, and the debates a regression batch "
                             "runs at once (default: embedded 1, ollama and openai 4)")
    parser.add_argument("--temperature", type=float, default=0.4)
    parser.add_argument("--violations-log", metavar="FILE", help="append schema violations as JSON lines")
    parser.add_argument("--out", metavar="FILE", help="write here instead of stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m clearside",
                                     description="ClearSide: think both sides, decide with clarity.")
    sub = parser.add_subparsers(dest="command", required=True)

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
    debate.add_argument("--format", choices=FORMATS, default="json")
    debate.add_argument("--strategy", choices=STRATEGIES,
                        help="whole: one call per agent; focused: each agent in smaller calls (default: the "
                             "provider's, see README 'Substance checks')")
    debate.add_argument("--small", action="store_true",
                        help="treat the provider's model as small (the embedded default already is)")
    _model_options(debate)
    debate.set_defaults(func=cmd_debate)

    challenge = sub.add_parser("challenge", help="challenge one element of a saved debate")
    challenge.add_argument("debate", metavar="DEBATE.json")
    challenge.add_argument("--action", choices=ACTIONS, required=True)
    challenge.add_argument("--target", required=True, help="an assumption, claim, hinge, or free text")
    _model_options(challenge)
    challenge.set_defaults(func=cmd_challenge)

    rend = sub.add_parser("render", help="render a saved debate as Markdown, Quick View, script or JSON")
    rend.add_argument("debate", metavar="DEBATE.json")
    rend.add_argument("--format", choices=FORMATS, default="md")
    rend.add_argument("--out", metavar="FILE")
    rend.set_defaults(func=cmd_render)

    live_cli.add_parser(sub, _model_options)
    store_cli.add_parsers(sub)
    jobs_cli.add_parsers(sub)
    from . import eval_cli  # imported here: it uses this module's helpers
    from .perspectives import cli as perspectives_cli

    eval_cli.add_parsers(sub, _model_options)
    perspectives_cli.add_parser(sub, _model_options)

    sch = sub.add_parser("schema", help="print the schema v1 JSON Schema, or --write it to schemas/")
    sch.add_argument("--write", action="store_true")
    sch.set_defaults(func=cmd_schema)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed the problem; usage errors are bad input
        return 2 if exc.code else 0
    try:
        if legacy_live_files():  # an earlier ClearSide kept live debates as JSON files: the store takes them in
            adopt_live_files(open_store())
        return args.func(args)
    except ClearSideError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
