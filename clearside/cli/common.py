"""What the command groups share: the progress printer, writing a result, the model options, an engine from them.

Start-up: every command builds the whole parser, ``--help`` included, so the modules of ``clearside.cli`` import
at their top only what is light (``errors``, ``inputs``, ``providers``, ``status``); a command's handler imports
the rest when it runs (the engine, the store, the runtime, the reports...). The values the parsers show that the
core owns are written out below, each checked against its source by tests/cli/test_startup.py, which also checks
that ``--help`` imports none of the heavy packages.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..providers import DEFAULT_PROVIDER, Provider, get_provider

if TYPE_CHECKING:
    from ..runtime.events import Event
    from ..static.engine import Engine

# What the parsers show from modules that are slow to import (tests/cli/test_startup.py checks each against its source)
FORMATS = ("json", "md", "quick", "script", "argdown", "aif", "kialo")  # clearside.render.FORMATS
STRATEGIES = ("whole", "focused", "single")  # clearside.static.run.STRATEGIES
ALL_ACTIONS = ("question_assumption", "stronger_counterargument", "evidence_that_changes_outcome",
               "question_source")  # clearside.schema.ALL_ACTIONS
PERSONAS = ("economist", "ethicist", "environmentalist", "technologist", "public-health expert",
            "local resident")  # clearside.static.personas.BUILTINS
SOURCE_LIMITS = {"files": 10, "mb": 5, "pages": 100}  # clearside.sources.MAX_FILES, MAX_BYTES // 2**20, MAX_PAGES
SUITES = ("flagship", "argkp-dev")  # clearside.quality.batch.SUITES
COMPARE_SUITE = "compare"  # clearside.compare.SUITE
SERVER_CONCURRENCY = 4  # clearside.runtime.SERVER_CONCURRENCY
DEFAULT_ROUNDS = 4  # clearside.perspectives.DEFAULT_ROUNDS

LABELS = {"orchestrator": "normalizing the proposition", "pro": "writing the case FOR",
          "con": "writing the case AGAINST", "moderator": "mapping the disagreement",
          "challenge": "answering the challenge"}


def progress(stream=None, prefix: str = "", lock: threading.Lock | None = None):
    """Progress lines on ``stream`` (default: whatever ``sys.stderr`` is when a line is printed), each after
    ``prefix`` (``compare`` names the model); ``lock``: one shared by the callbacks that write together."""
    lock = lock or threading.Lock()

    def say(out, line: str) -> None:
        # one write per line: print() writes the text and its newline apart, and sys.stderr writes through, so
        # another writer of the file descriptor (a thread, llama.cpp, a child process) could land between them
        out.write(f"{line}\n")
        out.flush()

    def on_event(event: Event) -> None:
        from ..runtime.events import agent_line

        line = agent_line(event, LABELS)
        if line is not None:
            with lock:
                say(stream or sys.stderr, f"{prefix}{line}")

    return on_event


def report_json(data: Any) -> str:
    """A report or document as the commands print it: indented JSON, non-ASCII kept, one final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write(text: str, out: str | None) -> None:
    """``text`` into the file ``out`` (saying so on stderr), or on stdout when there is none."""
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


def provider_from_args(args: argparse.Namespace) -> Provider:
    """The provider the model options ask for (``--provider``, ``--concurrency``, ``--small`` where there is one)."""
    return get_provider(args.provider, small=True if getattr(args, "small", False) else None,
                        concurrency=args.concurrency)


def engine_from_args(args: argparse.Namespace) -> Engine:
    """The engine the model options ask for, printing its progress on stderr."""
    from ..static.engine import Engine

    log_violations(args.violations_log)
    return Engine(provider_from_args(args), retries=args.retries, temperature=args.temperature, on_event=progress(),
                  strategy=getattr(args, "strategy", None))


def model_options(parser: argparse.ArgumentParser) -> None:
    """The options of every command that calls a model: provider, retries, concurrency, temperature, logs, --out."""
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


def share(report: dict[str, Any], store: Any, args: argparse.Namespace) -> None:
    """``--report FILE.html`` (self-contained, with the flipped cases' debates) and ``--junit FILE.xml``."""
    from ..quality import reports

    if getattr(args, "report", None):
        write(reports.render_html(reports.attach_debates(report, store)), args.report)
    if getattr(args, "junit", None):
        write(reports.junit_xml(report), args.junit)


def share_options(parser: Any) -> None:
    parser.add_argument("--report", metavar="FILE.html", help="also write a self-contained HTML report (tables, "
                                                              "charts, flipped cases side by side; opens offline)")
    parser.add_argument("--junit", metavar="FILE.xml", help="also write JUnit XML for CI: one test case per gate")
