"""``python -m clearside perspectives``: the clarification gate, the rounds and the synthesis from a shell.

Without answers it asks the clarification questions, prints them, saves the session and
stops (state CLARIFICATION_PENDING); ``--session ID --answers TEXT`` continues that session. ``--answer TEXT``, once
per question in order, answers them one by one, an empty one (``--answer ""``) skipping its question; ``--skip N``
skips question N (a question that makes no sense): the session goes on and the later agents are told it was skipped.
With a question and ``--answers`` it runs from the questions to the synthesis in one go. A
session that failed part-way continues with ``--session ID``. Each leg of the session runs as the workflow
``clearside.perspectives`` in this process (:mod:`clearside.cli.here`), its events printed from its progress rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..providers import get_provider
from . import here
from .common import DEFAULT_ROUNDS, write

if TYPE_CHECKING:  # the rest is imported by the command that runs (see common.py)
    from ..perspectives.runner import PerspectivesRun
    from ..runtime.events import Event


def _printer(quiet: bool):
    lock = threading.Lock()

    def on_event(event: Event) -> None:
        with lock:
            if event.kind == "state":
                print(f"[{event.text}]", file=sys.stderr, flush=True)
            elif event.kind == "agent_output" and not quiet:
                print(f"\n== Round {event.data.get('round')}, perspective {event.agent} ==\n{event.text}", flush=True)
            elif event.kind == "synthesis":
                print(f"\n== Synthesis ==\n{event.text}", flush=True)
            elif event.kind == "retrying":
                print(f"[{event.agent}] {event.text}", file=sys.stderr, flush=True)
            elif event.kind == "error":
                print(f"[{event.agent}] failed: {event.text}", file=sys.stderr, flush=True)

    return on_event


def _write(run: PerspectivesRun, out: str | None) -> None:
    if out:
        write(json.dumps(run.session.file(), indent=2, ensure_ascii=False) + "\n", out)


def cmd_perspectives(args: argparse.Namespace) -> int:
    from ..perspectives.job import PerspectivesJob
    from ..perspectives.runner import PerspectivesRun
    from ..store import open_store

    store = open_store()
    provider = get_provider(args.provider, concurrency=args.concurrency)
    options = {"retries": args.retries, "temperature": args.temperature}
    if args.session and args.question:
        raise InputError("Give either a QUESTION or --session ID, not both.")
    if not args.session and not args.question:
        raise InputError("Give a QUESTION, or --session ID to continue a saved session.")
    answers, skipped = _given(args)
    printer = _printer(args.quiet_rounds)
    with here.hosting(store.url):
        if args.session:
            job = PerspectivesJob(PerspectivesRun.resume(args.session, provider, store, **options), here=True)
        else:
            run = PerspectivesRun.create(args.question, provider, rounds=args.rounds, store=store,
                                         observability=not args.quiet_rounds, **options)
            print(f"Session {run.session.session_id} saved in the store", file=sys.stderr)
            job = PerspectivesJob(run, here=True)
            _follow(job.ask(), printer)
        try:
            _continue(job, answers, skipped, printer)
        finally:
            job.run.session = job.snapshot().session
            _write(job.run, args.out)
    return 0


def _given(args: argparse.Namespace) -> tuple[str | list[str] | None, list[int]]:
    """The answers and the skipped questions' numbers the options give (None: no answers given)."""
    if args.answers is not None and args.answer:
        raise InputError("Give either --answers TEXT (all the answers in one text) or --answer TEXT once per "
                         "question, not both.")
    answers = args.answer if args.answer else args.answers
    return answers, sorted(set(args.skip or []))


def _answers(session: Any, answers: str | list[str] | None,
             skipped: list[int]) -> tuple[str | list[str], list[int]]:
    """The answers to merge and the questions skipped: one --answer per question (an empty one skips it), or
    --answers' text; only --skip given: every other question unanswered (the gate then says which need one)."""
    count = len(session.clarification_questions)
    if isinstance(answers, list):
        if len(answers) != count:
            raise InputError(f"This session has {count} clarifying questions and {len(answers)} --answer given: "
                             'give one --answer per question, in order (--answer "" skips that question).')
        empty = [n for n, text in enumerate(answers, 1) if not text.strip()]
        return answers, sorted({*skipped, *empty})
    return (answers if answers is not None else [""] * count), skipped


def _continue(job: Any, answers: str | list[str] | None, skipped: list[int], printer: Any) -> None:
    """Past the clarification gate (printing its questions when there are no answers yet), to the synthesis."""
    session = job.snapshot().session
    if session.state == "CLARIFICATION_PENDING":
        if answers is None and not skipped:
            print("Clarification questions:")
            print("\n".join(f"{i}. {q}" for i, q in enumerate(session.clarification_questions, 1)))
            print(f"\nAnswer them to continue: python -m clearside perspectives --session {session.session_id} "
                  '--answers "..." (or --answer "..." once per question; --skip N skips a question that makes no '
                  "sense)", file=sys.stderr)
            return
        _follow(job.answer(*_answers(session, answers, skipped)), printer)
    elif answers is not None or skipped:
        raise InputError(f"Session {session.session_id} is past its clarification ({session.state}); "
                         "its answers are fixed.")
    elif not session.finished:
        _follow(job.retry(), printer)


def _follow(job: Any, printer: Any) -> None:
    """Follow the session's leg in flight, its events printed; its failure raised with its message and exit code."""
    from ..runtime.events import Event

    def on_entry(entry: dict[str, Any]) -> None:
        printer(Event.of(entry))

    if job.job_id is not None:
        here.finished(here.follow(job.job_id, on_entry, store_url=job.store.url, cancel=job.cancel))


def add_parser(sub, model_options) -> None:
    p = sub.add_parser("perspectives", help="clarify a personal, ambiguous question, then rounds of two "
                                            "perspectives and a synthesis")
    p.add_argument("question", nargs="?")
    p.add_argument("--answers", help="answers to the clarification questions (without them, the questions are "
                                     "printed and the session waits)")
    p.add_argument("--answer", action="append", metavar="TEXT",
                   help="the answer to the next clarification question, once per question in order; an empty one "
                        '(--answer "") skips that question')
    p.add_argument("--skip", action="append", type=int, metavar="N",
                   help="skip clarification question N (one that makes no sense); the session goes on and the "
                        "perspectives are told it was skipped (repeatable)")
    p.add_argument("--session", metavar="ID", help="continue a saved session")
    p.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help="rounds of A then B, 1 to 5 (default 4)")
    p.add_argument("--quiet-rounds", action="store_true", help="print only the synthesis, not each round")
    model_options(p)
    p.set_defaults(func=cmd_perspectives, temperature=0.7)
