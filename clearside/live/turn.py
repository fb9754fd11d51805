"""One planned turn of the live debate, run: asked, streamed, checked, and joined to the transcript.

:class:`TurnRunner` runs the next planned step for a live debate's :class:`~clearside.live.session.Session`:
:meth:`TurnRunner.run` plans the turn (:func:`clearside.live.prompting.plan_turn`), streams the reply (every
delta told as a live event; a pause raises :class:`Interrupted` from inside the stream, and the speech said so
far is kept for the resume), re-asks once a guardrail flags it, asks again from shorter digests while the
model's context cannot hold the conversation, ends the sentences the model left unfinished
(:func:`clearside.live.guardrails.end_cuts`) and settles a quote of the user's files. What it produced is a
:class:`TurnResult`; :meth:`TurnRunner.accept` turns that into the transcript's next turn, with its notes (a
cut at the hard limit, a resumed pause), and hands what the agents who speak later will read to the provider
early (:mod:`clearside.live.ahead`).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import prompts
from ..enforce import CallSpec, Listeners, partial_object, run_structured
from ..errors import ProviderError
from ..providers import Usage
from ..runtime.events import Event, OnEvent
from . import ahead, guardrails
from . import evidence as files
from .prompting import Messages, TurnPlan, plan_turn
from .protocol import Step
from .session import Session
from .transcript import Intervention, Partial, Transcript, Turn, now
from .wire import TurnFields

_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


class Interrupted(Exception):  # noqa: N818 - a control signal, not an error
    """Raised from a stream callback when the user pauses mid-turn."""


def speech_of(raw: str) -> str:
    """The speech in a possibly unfinished JSON reply ("" until it starts)."""
    speech = partial_object(raw).get("speech")
    return speech if isinstance(speech, str) else ""


def close_cut_reply(raw: str) -> str | None:
    """A reply cut at the token limit, closed after its last complete value (the speech is last)."""
    data = partial_object(raw)
    return json.dumps(data) if data else None


def cut_words(text: str, limit: int) -> str:
    """At most ``limit`` words, ending at the last full sentence when one ends in the second half."""
    words = text.split()
    if len(words) <= limit:
        return text
    kept = " ".join(words[:limit])
    ends = [m.end() for m in _SENTENCE_END.finditer(kept)]
    if ends and ends[-1] >= len(kept) // 2:
        return kept[: ends[-1]]
    return kept + "…"


def _join(prefix: str, rest: str) -> str:
    return f"{prefix.rstrip()} {rest.lstrip()}".strip() if prefix else rest.strip()


class Stream:
    """The reply streaming in: the raw text, the speech so far, whether a reply cut at the token limit was closed
    (``cut``) and the time to its first token; each delta told as live events, a pause noticed at once."""

    def __init__(self, step: Step, on_event: OnEvent, should_stop: Callable[[], bool] | None) -> None:
        self.step, self.on_event, self.should_stop = step, on_event, should_stop
        self.clock, self.first = time.perf_counter(), 0.0
        self.reset()

    def reset(self) -> None:
        """A new call (asked again, or retried): nothing streamed yet."""
        self.raw, self.speech, self.cut = "", "", False

    def emit(self, kind: str, text: str = "", data: dict[str, Any] | None = None) -> None:
        """An event of the turn in flight: its speaker, and its planned step in ``data["step"]``."""
        self.on_event(Event(kind, self.step.speaker, text, {**(data or {}), "step": self.step.index}))

    def on_delta(self, text: str) -> None:
        self.first = self.first or time.perf_counter() - self.clock
        self.raw += text
        self.emit("delta", text)
        speech = speech_of(self.raw)
        if len(speech) > len(self.speech):
            self.emit("speech", speech[len(self.speech):])
            self.speech = speech
        if self.should_stop is not None and self.should_stop():
            raise Interrupted

    def on_retry(self, attempt: int, errors: list[str]) -> None:
        self.reset()
        self.emit("retry", data={"attempt": attempt, "errors": errors})

    def on_retrying(self, data: dict[str, Any]) -> None:  # a provider retry: the call is made again from the start
        self.reset()
        self.emit("retrying", data=data)

    def salvage(self, raw: str) -> str | None:
        repaired = close_cut_reply(raw)
        self.cut = self.cut or repaired is not None
        return repaired

    def listeners(self) -> Listeners:
        return Listeners(on_delta=self.on_delta, on_retry=self.on_retry, on_retrying=self.on_retrying)


class _Call:
    """One planned turn's model calls: asked, re-asked after a guardrail's complaint (``rejected``: the rejected
    reply and the complaint), and asked again shorter while the model's context cannot hold it."""

    def __init__(self, session: Session, plan: TurnPlan, messages: Messages, stream: Stream) -> None:
        self.session, self.plan, self.messages, self.stream = session, plan, messages, stream
        self.usage = Usage()
        self.rejected: list[dict[str, str]] = []
        self.flags: list[dict[str, Any]] = []
        self.regenerated = 0

    def guarded(self) -> tuple[dict[str, Any], Any]:
        """The reply's fields the guardrails accept (or the last one, flagged), and its quote of the user's files
        (taken out: the user's words, to which no rule of the debate applies)."""
        config, plan = self.session.config, self.plan
        for attempt in range(config.guardrail_retries + 1):
            fields = self.ask().model_dump()
            quote = fields.pop("evidence_quote", None)
            self.flags = guardrails.check_turn(plan.step, fields, opponent_claims=plan.opponent_claims,
                                               own_earlier=plan.own_earlier, assumptions=plan.wires.sides)
            if not self.flags or attempt == config.guardrail_retries:
                break
            self.regenerated += 1
            self.stream.emit("guardrail", data={"violations": self.flags})
            complaint = prompts.render(prompts.load("live").tasks["guardrail"],
                                       violations=guardrails.describe(self.flags))
            self.rejected = [{"role": "assistant", "content": self.stream.raw or json.dumps(fields)},
                             {"role": "user", "content": complaint}]
        return fields, quote

    def ask(self) -> TurnFields:
        """The reply to the conversation followed by ``rejected`` (a guardrail's re-ask), asked again shorter
        while the model's context cannot hold it (dense text is more tokens than its characters suggest)."""
        config, plan, stream = self.session.config, self.plan, self.stream
        while True:
            stream.reset()
            asked = [*self.messages.sent, *self.rejected]
            try:
                return run_structured(
                    self.session.provider,
                    CallSpec(plan.step.speaker, TurnFields, plan.wires.schema, decode=plan.wires.decode,
                             max_tokens=plan.max_tokens, retries=config.schema_retries,
                             temperature=config.temperature, prepare=plan.wires.prepare, salvage=stream.salvage),
                    asked, usage=self.usage, violations=self.session.violations, listeners=stream.listeners())
            except ProviderError as exc:
                if not (exc.context_overflow and self.messages.shorten(asked, self.rejected)):
                    raise  # not a matter of length, or nothing left to shorten: it fails as it is, naming the fix
                stream.emit("retry", data={"attempt": 1, "errors": [str(exc)]})

    def settle_quote(self, fields: dict[str, Any], quote: Any) -> list[str]:
        """The quote of the user's files verified against its passage, asked for again once, or removed; its
        notes."""
        session, quoting = self.session, self.plan.quoting
        if quoting is None:
            return []
        kept, quote_flags, notes = files.settle(
            session.provider, self.plan.step.speaker, quoting, quote, [*self.messages.sent, *self.rejected],
            self.stream.raw or json.dumps(fields), temperature=session.config.temperature,
            violations=session.violations)
        if kept is not None:
            fields["evidence_quote"] = kept
        self.flags = [*self.flags, *quote_flags]
        return notes


@dataclass(frozen=True)
class TurnResult:
    """One planned turn as generated, before it joins the transcript: its plan, the accepted reply's fields (the
    speech included) and flags, how it was asked (``prompt``, ``fresh``, a guardrail's ``rejected`` reply and
    the ``regenerated`` count), the quote's notes, the reply verbatim (``raw``; ``cut``: closed at the token
    limit), the call's figures and when the turn started."""

    plan: TurnPlan
    fields: dict[str, Any]
    flags: list[dict[str, Any]]
    regenerated: int
    rejected: list[dict[str, str]]
    prompt: str
    fresh: bool
    notes: list[str]
    raw: str
    cut: bool
    first_token: float
    usage: Usage
    started: str


class TurnRunner:
    """Runs the planned turns of one live debate's session, one :meth:`run` at a time; ``should_stop`` is polled
    at every token (True: the user paused)."""

    def __init__(self, session: Session, should_stop: Callable[[], bool] | None = None) -> None:
        self.session, self.should_stop = session, should_stop

    def run(self, step: Step) -> TurnResult | None:
        """Generate planned turn ``step`` (the next one; the proposition made). None when a pause halted it: the
        speech said so far is saved with the transcript, and the next run of the step continues from there."""
        session, transcript = self.session, self.session.transcript
        plan = plan_turn(transcript, step, session.provider, session.config)
        messages = Messages(plan, session.config)
        with session.lock:
            transcript.state = "running"
        session.on_event(Event("turn_start", step.speaker, data={"label": step.label, "step": step.index}))
        started = now()
        call = _Call(session, plan, messages, Stream(step, session.on_event, self.should_stop))
        try:
            fields, quote = call.guarded()
        except Interrupted:
            self._pause(plan, call.stream)
            return None
        fields, ended = guardrails.end_cuts(fields)  # before the quote goes back in: the user's words stay whole
        notes = call.settle_quote(fields, quote)
        if ended:
            notes.insert(0, f"{ended} sentence{'s' if ended > 1 else ''} the model left unfinished: ended at the "
                            "last whole sentence, or marked as cut (…).")
        return TurnResult(plan=plan, fields=fields, flags=call.flags, regenerated=call.regenerated,
                          rejected=call.rejected, prompt=call.messages.prompt, fresh=call.messages.fresh,
                          notes=notes, raw=call.stream.raw, cut=call.stream.cut, first_token=call.stream.first,
                          usage=call.usage, started=started)

    def _pause(self, plan: TurnPlan, stream: Stream) -> None:
        kept = _join(plan.prefix, stream.speech)
        session = self.session
        with session.lock:
            session.transcript.partial = Partial(step=plan.step.index, speech=kept, raw=stream.raw, at=now())
            session.transcript.state = "paused"
            session.save()
        stream.emit("paused", kept)

    def accept(self, result: TurnResult) -> Turn:
        """``result`` as the transcript's next turn, saved and told; then the agents who speak later start reading
        it while the next turn is written."""
        session, plan = self.session, result.plan
        step = plan.step
        text, notes, truncated = self._speech(result)
        fields = {k: v for k, v in result.fields.items() if k != "speech"}
        if step.kind == "answer":
            answers = fields.get("answers", [])
            fields["pairs"] = [{"question": q, "answer": a} for q, a in zip(plan.questions, answers, strict=False)]
        with session.lock:
            transcript = session.transcript
            turn = Turn(turn=len(transcript.turns) + 1, step=step.index, phase=step.phase, kind=step.kind,
                        speaker=step.speaker, label=step.label, text=text, fields=fields, budget_tokens=plan.budget,
                        used_tokens=session.config.estimate_tokens(text), truncated=truncated, flags=result.flags,
                        regenerated=result.regenerated, notes=notes, sees=plan.sees, prompt=result.prompt,
                        reply=result.raw, fresh=result.fresh, rejected=result.rejected if result.regenerated else [],
                        evidence=[i.id for i in plan.evidence], paused_at=len(plan.prefix) if plan.prefix else None,
                        started_at=result.started, finished_at=now(), seconds=round(result.usage.seconds, 3),
                        first_token_seconds=round(result.first_token, 3),
                        completion_tokens=result.usage.completion_tokens)
            transcript.turns.append(turn)
            transcript.cursor, transcript.partial = step.index + 1, None
            _deliver(transcript, plan.evidence, turn)
            session.save()
        session.on_event(Event("turn_done", step.speaker, text,
                               data={"turn": turn.turn, "step": step.index, "flags": result.flags,
                                     "truncated": truncated,
                                     **({"quote": fields["evidence_quote"]} if "evidence_quote" in fields else {})}))
        # the agents who speak later start reading this turn while the next one is written
        ahead.warm(transcript, session.provider, session.config.context_chars)
        return turn

    def _speech(self, result: TurnResult) -> tuple[str, list[str], bool]:
        """The turn's speech (continuing a paused one, cut at the hard limit), its notes, and whether it was cut."""
        config, plan = self.session.config, result.plan
        step, prefix = plan.step, plan.prefix
        text, notes, truncated = _join(prefix, result.fields["speech"]), list(result.notes), False
        if result.cut:
            truncated = True
            notes.append(f"Generation stopped at the {plan.max_tokens}-token limit of this turn (hard limit).")
        hard = config.hard_words(step)
        if len(text.split()) > hard:
            text, truncated = cut_words(text, hard), True
            notes.append(f"Speech cut at {math.floor(plan.budget * config.hard_limit)} tokens ({hard} words), 120% "
                         f"of its {plan.budget}-token budget for {step.minutes:g} min at {config.words_per_minute} "
                         f"words/min (hard limit).")
        if prefix:
            notes.append(f"Paused mid-speech after {len(prefix)} characters; resumed from that point.")
        return text, notes, truncated


def _deliver(transcript: Transcript, evidence: list[Intervention], turn: Turn) -> None:
    """The evidence ``turn`` took into account: delivered once both advocates, or the moderator, have had it."""
    for item in evidence:
        item.delivered_to.append(turn.turn)
        reached = {transcript.turn(n).speaker for n in item.delivered_to}
        if {"pro", "con"} <= reached or "moderator" in reached:
            item.status = "delivered"
