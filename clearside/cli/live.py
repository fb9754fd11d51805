"""``python -m clearside live``: run a live debate in the terminal, streaming each turn as it is spoken.

The debate runs as the workflow ``clearside.live`` in this process (:mod:`clearside.cli.here`), followed from its
progress rows; interventions from ``--interventions`` and ``--evidence-file`` are submitted between turns, as the
dashboard's user submits them, the debate going step by step until the last one is in."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, JobFailed
from ..inputs import read_json
from ..providers import get_provider
from . import here

if TYPE_CHECKING:  # the rest is imported by the command that runs (see common.py)
    from ..live.transcript import Transcript
    from ..runtime.events import Event
    from ..sources import Source


def read_evidence_file(path: str | Path, where: str = "") -> Source:
    """A file injected as evidence, read within the sources' limits (the Debate page's); an InputError naming the
    file and why it cannot be used (missing, empty, unreadable, too big, unsupported type)."""
    from ..sources import read_source

    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{where}{path}: cannot be read ({exc.strerror or exc}).") from exc
    try:
        return read_source(path.name, data)
    except InputError as exc:
        raise InputError(f"{where}{exc}") from None


def read_interventions(path: str) -> list[dict[str, Any]]:
    """A JSON list of ``{"after_turn", "type", "text", "to"?, "file"?}``; refused whole if any item is wrong.
    ``file`` (evidence only; relative to the interventions file's folder): a source file injected as evidence,
    read now, so a refusal stops the command before the debate starts; ``text`` is then optional."""
    from ..live.transcript import INTERVENTION_TYPES

    items = read_json(path, "the interventions file")
    if not isinstance(items, list):
        raise InputError(f"The interventions file {path} must hold a JSON list of interventions.")
    for number, item in enumerate(items, 1):
        where = f"Intervention {number} in {path}"
        if not isinstance(item, dict):
            raise InputError(f"{where} is not an object.")
        unknown = set(item) - {"after_turn", "type", "text", "to", "file"}
        if unknown:
            raise InputError(f"{where} has unknown keys: {', '.join(sorted(unknown))}.")
        if not isinstance(item.get("after_turn"), int) or isinstance(item.get("after_turn"), bool) \
                or item["after_turn"] < 0:
            raise InputError(f"{where} needs after_turn, a turn number of 0 or more.")
        if item.get("type") not in INTERVENTION_TYPES:
            raise InputError(f"{where} has type {item.get('type')!r}; use one of {', '.join(INTERVENTION_TYPES)}.")
        if "file" in item:
            if item.get("type") != "inject_evidence" or not isinstance(item["file"], str) or not item["file"]:
                raise InputError(f"{where}: only inject_evidence takes a file (a path to a .txt, .md, .html, "
                                 ".pdf or .csv file).")
            item["source"] = read_evidence_file(Path(path).parent / item.pop("file"), f"{where}: ")
            item.setdefault("text", "")
            if not isinstance(item["text"], str):
                raise InputError(f"{where} has a text that is not a string.")
        elif not isinstance(item.get("text"), str) or not item["text"].strip():
            raise InputError(f"{where} needs a non-empty text.")
        if item.get("to") not in (None, "pro", "con", "moderator"):
            raise InputError(f"{where} has to={item.get('to')!r}; use pro, con or moderator.")
        if item["type"] == "direct_question" and not item.get("to"):
            raise InputError(f"{where} is a direct question and needs \"to\": pro, con or moderator.")
    return sorted(items, key=lambda item: item["after_turn"])


class Printer:
    """Streams speech to stdout and everything else (turn headers, flags, answers) around it."""

    def __init__(self, out=None) -> None:
        self._out = out
        self.streamed = ""  # the speech of the turn in flight, as it streamed

    @property
    def out(self):
        return self._out or sys.stdout

    def __call__(self, event: Event) -> None:
        from ..live.protocol import SPEAKER_LABELS

        write = self.out.write
        if event.kind == "turn_start":
            who = SPEAKER_LABELS.get(event.agent, event.agent.capitalize())
            write(f"\n== {event.data.get('label', '')} ({who}) ==\n")
            self.streamed = ""
        elif event.kind == "speech":
            write(event.text)
            self.streamed += event.text
        elif event.kind == "proposition":
            write(f"Proposition: {event.text}\n")
        elif event.kind in ("retry", "retrying", "guardrail"):  # the speech is written again from its start
            self.streamed = ""
            self._asked_again(event)
        elif event.kind == "turn_done":
            self._done(event)
        elif event.kind == "intervention":
            write(f"\n[user {event.data['type'].replace('_', ' ')}"
                  + (f" to {event.agent}" if event.agent else "") + f"] {event.text}"
                  + (f" [file: {event.data['file']}]" if event.data.get("file") else "") + "\n")
        elif event.kind == "answered":
            write(f"[{SPEAKER_LABELS.get(event.agent, event.agent)} answers the user] {event.text}\n")
        elif event.kind == "paused":
            write("\n[paused]\n")
        self.out.flush()

    def _asked_again(self, event: Event) -> None:
        from ..providers.retry import retrying_text

        if event.kind == "retry":
            self.out.write(f"\n[output rejected, re-asking: {(event.data.get('errors') or ['invalid'])[0]}]\n")
        elif event.kind == "retrying":  # a provider fault asked again: the speech so far is dropped
            self.out.write(f"\n[{retrying_text(event.data)}]\n")
        else:
            self.out.write("\n[guardrail: " + "; ".join(v["detail"] for v in event.data["violations"])
                           + " Regenerating.]\n")

    def _done(self, event: Event) -> None:
        """A turn accepted: its flags and quote, and the text kept when it is not what streamed (a sentence left
        unfinished ended at the last whole one, a speech cut at the hard limit)."""
        from ..live.export import quote_label

        write = self.out.write
        for flag in event.data.get("flags", []):
            write(f"\n[flag kept after regeneration: {flag['detail']}]")
        if event.data.get("quote"):
            quote = event.data["quote"]
            write(f"\n[quotes {quote_label(quote)}, verified: \"{quote['quote']}\"]")
        if event.data.get("truncated"):
            write("\n[cut at the hard time limit]")
        if self.streamed.strip() and not event.text.rstrip().endswith(self.streamed.strip()):
            write(f"\n[kept as: {event.text}]")
        write("\n")


class Rows:
    """A live job's progress rows as the printer's events: the speech of the turn in flight is derived from its raw
    reply as the turn streamed it (what the runtime keeps of a turn in flight)."""

    def __init__(self, printer: Printer) -> None:
        self.printer, self.raw, self.spoken = printer, "", ""

    def __call__(self, entry: dict[str, Any]) -> None:
        from ..live.turn import speech_of
        from ..runtime.events import Event

        kind, speaker, text = entry["kind"], entry.get("agent") or "", entry.get("text") or ""
        if kind == "delta":
            self.raw += text
            speech = speech_of(self.raw)
            if len(speech) > len(self.spoken):
                self.printer(Event("speech", speaker, speech[len(self.spoken):]))
                self.spoken = speech
            return
        if kind in ("turn_start", "retry", "retrying", "guardrail", "turn_done", "answered", "paused", "proposition"):
            self.raw, self.spoken = "", ""  # a new call, or one made again: its speech starts afresh
        self.printer(Event.of(entry))


POLL_SECONDS = 0.1


def _drive(job: Any, items: list[dict[str, Any]], rows: Rows) -> Any:
    """Run the live job here to its end: step by step while interventions are scheduled (each submitted once the
    turns before it are done, as the dashboard's user would), freely after the last; its final snapshot."""
    from ..runtime import progress

    seen: dict[str, int] = {}
    stepped = -1  # the turns done when the latest step was asked for
    while True:
        for job_id in filter(None, [job.job_id]):
            entries, seen[job_id] = progress.read(job_id, seen.get(job_id, 0), job.store.url)
            for entry in entries:
                rows(entry)
        snap = job.snapshot()
        if snap.status == "failed":
            return snap
        done = len(snap.transcript.turns)
        while items and (items[0]["after_turn"] <= done or snap.status == "done"):
            _submit(job, items.pop(0))
        if snap.status == "waiting" and done > stepped:
            if items:
                job.step()  # exactly one more turn, then the next intervention's turn comes round again
                stepped = done
            else:
                job.set_step_mode(False)
        if snap.status == "done" and not items and not job.alive():
            return job.snapshot()
        time.sleep(POLL_SECONDS)


def _submit(job: Any, item: dict[str, Any]) -> None:
    try:
        job.submit(item["type"], item["text"], item.get("to"), item.get("source"))
    except InputError as exc:
        print(f"warning: intervention after turn {item['after_turn']} skipped: {exc}", file=sys.stderr)


def _write_transcript(transcript: Transcript, out: str | None) -> None:
    if not out:
        return
    try:
        Path(out).write_text(transcript.model_dump_json(indent=2), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"Cannot write {out}: {exc.strerror}") from exc
    print(f"Wrote {out}", file=sys.stderr)


def cmd_live(args: argparse.Namespace) -> int:
    from ..live import costs
    from ..live.debate import LiveDebate
    from ..live.exchange import import_transcript_file
    from ..live.job import LiveJob
    from ..live.protocol import LiveConfig
    from ..runtime import steps
    from ..store import open_store, safe_url

    items = read_interventions(args.interventions) if args.interventions else []
    if args.evidence_after is not None and args.evidence_after < 0:
        raise InputError("--evidence-after needs a turn number of 0 or more.")
    items += [{"after_turn": args.evidence_after or 0, "type": "inject_evidence", "text": "",
               "source": read_evidence_file(name, "--evidence-file ")} for name in args.evidence_file or []]
    items.sort(key=lambda item: item["after_turn"])
    provider = get_provider(args.provider, concurrency=args.concurrency)
    store = open_store()
    with here.hosting(store.url):
        if args.resume:
            debate_id = args.resume
            if args.resume.endswith(".json"):  # a transcript file: import it, then continue the imported copy
                debate_id = import_transcript_file(store, args.resume).id
                print(f"Imported {args.resume} as live debate {debate_id}", file=sys.stderr)
            debate = LiveDebate.resume(debate_id, provider, store=store)
        else:
            if not args.question:
                raise InputError("Give a QUESTION to debate, or --resume ID to continue a saved live debate.")
            config = LiveConfig.from_env(words_per_minute=args.words_per_minute, temperature=args.temperature,
                                         schema_retries=args.retries)
            debate = LiveDebate.create(args.question, provider, config=config, store=store,
                                       context_fields={"geography": args.geography, "timeframe": args.timeframe,
                                                       "domain": args.domain})
        print(f"Live debate {debate.transcript.id}: saved after every turn to {safe_url(store.url)}", file=sys.stderr)
        job = LiveJob(debate, step_mode=bool(items), store=store, here=True).start()
        try:
            snapshot = _drive(job, items, Rows(Printer()))
        except KeyboardInterrupt:
            job.cancel()  # the turn in flight halts within half a second, its speech so far kept
            steps.wait_stopped(job.job_id or "")
            raise
    if snapshot.status == "failed":
        _write_transcript(snapshot.transcript, args.out)
        print(f"Finished turns are kept. Resume with: python -m clearside live --resume {debate.transcript.id}",
              file=sys.stderr)
        state = job.state()
        if state is not None and state.status != "done":
            here.finished(state)
        raise JobFailed(snapshot.error or "The live debate failed.")
    _write_transcript(snapshot.transcript, args.out)
    facts = costs.summary(snapshot.transcript)
    if facts["timed_turns"]:  # the same figures the Timeline charts per turn
        print(costs.sentence(facts), file=sys.stderr)
    return 0


def add_parser(sub: Any, model_options) -> None:
    live = sub.add_parser("live", help="run the six-phase live debate, streaming each turn")
    live.add_argument("question", nargs="?")
    live.add_argument("--interventions", metavar="FILE",
                      help='JSON list, e.g. [{"after_turn": 2, "type": "inject_evidence", "text": "..."}]')
    live.add_argument("--evidence-file", metavar="FILE", action="append",
                      help="inject a source file as evidence (.txt, .md, .html, .pdf or .csv; at most 5 MB): the "
                           "advocates who acknowledge it quote it, each quote checked word for word; repeatable")
    live.add_argument("--evidence-after", metavar="TURN", type=int,
                      help="inject the --evidence-file files after this turn (default 0: before the first; with "
                           "--resume, at once)")
    live.add_argument("--words-per-minute", type=int, help="pace that turns time into token budgets (default 150)")
    live.add_argument("--resume", metavar="ID|FILE", help="continue a saved live debate from its last finished turn")
    live.add_argument("--geography")
    live.add_argument("--timeframe")
    live.add_argument("--domain")
    model_options(live)
    live.set_defaults(func=cmd_live)
