"""Runs the live protocol turn by turn, with interventions, guardrails, budgets and a saved transcript.

:class:`LiveDebate` is synchronous: :meth:`advance` runs the next piece of work
(pending answers to the user, then the next planned turn) and saves the
transcript after every change. A pause raises :class:`Interrupted` from inside
the stream; the speech said so far is kept and the next :meth:`advance`
continues that turn from exactly there. The CLI calls it directly; the dashboard's
durable workflow (:mod:`clearside.live_workflow`) calls :meth:`propose`, :meth:`turn`,
:meth:`answer` and :meth:`finish`, one model call per step.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

from .. import agents, inputs, prompts
from ..enforce import CallSpec, Listeners, partial_object, run_structured
from ..errors import ClearSideError, InputError, ProviderError
from ..providers import Provider, Usage
from ..runtime.events import Event, OnEvent
from ..schema import Context, Document
from ..sources import Source
from ..store import LiveWriter, Store
from . import ahead, context, conversation, guardrails
from . import evidence as files
from .assemble import side_from_turns, to_document
from .conversation import next_step_of, recipient_now
from .exchange import load_live
from .protocol import PLAN, SPEAKER_LABELS, SPEAKERS, LiveConfig, Step, phase_break_after
from .transcript import INTERVENTION_TYPES, Intervention, Partial, Transcript, Turn, now
from .wire import ANSWER_WIRE, CLARIFICATION_WIRE, Answer, Clarification, TurnFields, turn_schema

FIELD_TOKENS = {"opening": 220, "constructive": 420, "question": 140, "answer": 200, "rebuttal": 240,
                "closing": 280, "synthesis": 650}
EVIDENCE_TOKENS = 80
OVERFLOW_SHRINK = 0.6  # a refused restart from digests asks again with the digests cut to this share
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


def _evidence_line(item: Intervention) -> str:
    """Evidence as the agent is told it: the user's text, and the file it came with."""
    if item.source is None or item.source.name in item.text:
        return item.text
    return f"{item.text} (with the file {item.source.name})"


def _join(prefix: str, rest: str) -> str:
    return f"{prefix.rstrip()} {rest.lstrip()}".strip() if prefix else rest.strip()


def intervention_for(transcript: Transcript, kind: str, text: str, to: str | None = None,
                     source: Source | None = None) -> Intervention:
    """A checked intervention on the transcript as it stands, numbered after its last one (not yet added);
    InputError when it cannot be made (spec 004 "User Intervention Points"). ``source``: a file the user injects
    as evidence (read by :func:`clearside.sources.read_source`), labelled among the debate's injected files; the
    text may then be empty."""
    if kind not in INTERVENTION_TYPES:
        raise InputError(f"Unknown intervention type {kind!r}: use one of {', '.join(INTERVENTION_TYPES)}.")
    if source is not None and kind != "inject_evidence":
        raise InputError("Only evidence may be a file; ask your question as text.")
    attached = files.labelled(source, transcript) if source is not None else None
    if attached is not None and not (text or "").strip():
        text = files.note_for(attached)
    text = inputs.question(text, label="The intervention")
    to = (to or "").strip().lower() or None
    if to is not None and to not in SPEAKERS:
        raise InputError(f"Unknown recipient {to!r}: use pro, con or moderator.")
    if kind == "direct_question" and to is None:
        raise InputError("A direct question needs a recipient: pro, con or moderator.")
    upcoming = next_step_of(transcript)
    if kind == "inject_evidence":
        if to is not None:
            raise InputError("Evidence goes to both advocates; leave the recipient empty.")
        if upcoming is None:
            raise InputError("The debate has finished, so evidence can no longer reach the advocates. "
                             "Ask a direct question instead.")
    if kind == "pause_question" and to is None:
        to = upcoming.speaker if upcoming else "moderator"
    if kind == "clarification" and to is None:  # the speaker whose words prompted it, fixed now
        to = recipient_now(transcript)
    last = transcript.turns[-1].turn if transcript.turns else 0
    return Intervention(id=len(transcript.interventions) + 1, type=kind, text=text, to=to, at=now(),
                        after_turn=last, source=attached)


class LiveDebate:
    def __init__(self, transcript: Transcript, provider: Provider, *, config: LiveConfig | None = None,
                 writer: LiveWriter | None = None, on_event: OnEvent | None = None) -> None:
        self.transcript = transcript
        self.provider = provider
        self.config = config or (LiveConfig(**transcript.config) if transcript.config else LiveConfig())
        self.writer = writer  # None: kept in memory only
        self.on_event = on_event or (lambda event: None)
        self.lock = threading.RLock()
        self.violations: list[dict[str, Any]] = []  # schema re-asks, as in the static engine

    # -- creation and persistence -------------------------------------------------------------

    @classmethod
    def create(cls, question: str, provider: Provider, *, store: Store, config: LiveConfig | None = None,
               context_fields: dict[str, str | None] | None = None, document: Document | None = None,
               source_debate: str | None = None, parent_id: str | None = None,
               on_event: OnEvent | None = None, owner: str | None = None) -> LiveDebate:
        """A new live debate from a question (input rules apply) or from an existing v1 document, saved in
        ``store``; ``owner``: the starting browser's token (only that browser may steer it from the dashboard)."""
        config = config or LiveConfig()
        config.check()
        if document is not None:
            question = question or document.proposition.raw_input
        question = inputs.question(question)
        fields = inputs.context_fields(context_fields or {})
        stamp = now()
        transcript = Transcript(
            id=uuid.uuid4().hex, created_at=stamp, updated_at=stamp, question=question,
            context=Context(**fields).dump() if fields else {},
            proposition=document.proposition.dump() if document is not None else None,
            source_debate=source_debate, provider=provider.name, model=provider.model, config=config.as_dict(),
            prompt_versions=prompts.versions("live", "orchestrator"))
        writer = LiveWriter(store, transcript.id, parent_id=parent_id,  # parent: a re-run's original
                            owner=owner)
        debate = cls(transcript, provider, config=config, writer=writer, on_event=on_event)
        debate.save()
        return debate

    @classmethod
    def resume(cls, debate_id: str, provider: Provider, *, store: Store,
               on_event: OnEvent | None = None) -> LiveDebate:
        """Continue a debate saved in ``store`` from its cursor; a turn that was in flight when it stopped is rerun."""
        transcript = load_live(store, debate_id)
        if transcript.state in ("running", "failed", "paused") and not cls._done(transcript):
            transcript.state, transcript.error = "running", ""
        debate = cls(transcript, provider, writer=LiveWriter(store, transcript.id), on_event=on_event)
        debate.save()
        return debate

    def save(self) -> None:
        """Write what changed to the store (one transaction), after every turn, intervention and pause."""
        if self.writer is not None:
            with self.lock:
                self.transcript.updated_at = now()
                self.writer.save(self.transcript)

    def snapshot(self) -> Transcript:
        with self.lock:
            return self.transcript.model_copy(deep=True)

    @staticmethod
    def _done(transcript: Transcript) -> bool:
        return transcript.cursor >= len(PLAN) and transcript.document is not None

    @property
    def finished(self) -> bool:
        return self._done(self.transcript)

    @property
    def next_step(self) -> Step | None:
        return next_step_of(self.transcript)

    # -- interventions ------------------------------------------------------------------------

    def submit(self, kind: str, text: str, to: str | None = None, source: Source | None = None) -> Intervention:
        """Record an intervention (spec 004 "User Intervention Points"); it is handled at its point. ``source``:
        a file injected as evidence, saved with the intervention and linked to the saved debate."""
        with self.lock:
            item = intervention_for(self.transcript, kind, text, to, source)
            self.transcript.interventions.append(item)
            self.save()
            if item.source is not None and self.writer is not None:
                files.sync_store(self.writer.store, self.transcript)
        self.on_event(Event("intervention", item.to or "", text=item.text,
                                data={"id": item.id, "type": kind,
                                      **({"file": item.source.name} if item.source is not None else {})}))
        return item

    def pending(self, *kinds: str) -> list[Intervention]:
        with self.lock:
            return [i for i in self.transcript.interventions if i.type in kinds and i.status == "queued"]

    def answer_questions(self) -> None:
        """Answer every queued pause question and direct question now, in order."""
        for item in self.pending("pause_question", "direct_question"):
            self._reply(item, "user_answer", ANSWER_WIRE, Answer, "answer")

    def answer_clarifications(self) -> None:
        """At a phase break: each queued clarification is answered inline, as a turn of its own."""
        for item in self.pending("clarification"):
            self._reply(item, "clarification", CLARIFICATION_WIRE, Clarification, "clarification")

    def _recipient(self, item: Intervention) -> str:
        return item.to or self._recipient_now()

    def _recipient_now(self) -> str:
        return recipient_now(self.transcript)

    def _seen_by(self, speaker: str) -> list[Turn]:
        return conversation.seen_by(self.transcript, speaker)

    def _reply(self, item: Intervention, task: str, schema: dict, model: type, key: str) -> None:
        self._ensure_proposition()
        speaker = self._recipient(item)
        shown = self.shown_to(speaker)
        unseen = [t for t in self._seen_by(speaker) if t.turn not in shown]
        history = context.conversation(speaker, self.transcript.turns)
        first = not self.has_spoken(speaker)
        if not first and context.size(history) > self.config.context_chars:
            history, first = [context.system_message()], True
            unseen = [t for t in self.transcript.turns if t.turn in shown or t in self._seen_by(speaker)]
        message = context.question_message(task, speaker, self.proposition_now(), unseen, item.text, first=first)
        messages = [*history, {"role": "user", "content": message}]
        self.on_event(Event("turn_start", speaker, data={"intervention": item.id, "label": "Answering the user"}))
        try:
            reply = run_structured(self.provider, CallSpec(speaker, model, schema, max_tokens=200,
                                                           retries=self.config.schema_retries,
                                                           temperature=self.config.temperature),
                                   messages, violations=self.violations,
                                   listeners=Listeners(on_retrying=self._retrying(speaker)))
        except ClearSideError as exc:
            with self.lock:
                item.status, item.error = "failed", str(exc)
                self.save()
            self.on_event(Event("error", speaker, text=str(exc), data={"intervention": item.id}))
            return
        text = getattr(reply, key)
        with self.lock:
            item.status, item.response, item.answered_by = "answered", text, speaker
            if task == "clarification":
                turn = Turn(turn=len(self.transcript.turns) + 1, phase="clarification", kind="clarification",
                            speaker=speaker, label=f"{SPEAKER_LABELS[speaker]} clarifies for the user", text=text,
                            fields={"request": item.text}, started_at=now(), finished_at=now())
                self.transcript.turns.append(turn)
                item.answered_in_turn = turn.turn
            self.save()
        self.on_event(Event("answered", speaker, text=text, data={"id": item.id, "type": item.type}))

    def _evidence_for(self, step: Step) -> list[Intervention]:
        return conversation.evidence_for(self.transcript, step)

    # -- the protocol -------------------------------------------------------------------------

    def proposition_now(self):
        return conversation.proposition_now(self.transcript)

    def _ensure_proposition(self) -> None:
        """The orchestrator normalizes the question once, before the first turn."""
        if self.transcript.proposition is not None:
            return
        user_context = context.context_of(self.transcript.context)
        self.on_event(Event("turn_start", "orchestrator", data={"label": "Normalizing the proposition"}))
        proposition = run_structured(
            self.provider, CallSpec("orchestrator", agents.ORCHESTRATOR.model, agents.ORCHESTRATOR.schema,
                                    max_tokens=agents.ORCHESTRATOR.max_tokens, retries=self.config.schema_retries,
                                    temperature=self.config.temperature,
                                    prepare=agents.proposition_from_reply(self.transcript.question, user_context)),
            agents.orchestrator_messages(self.transcript.question, user_context), violations=self.violations,
            listeners=Listeners(on_retrying=self._retrying("orchestrator")))
        with self.lock:
            self.transcript.proposition = proposition.dump()
            self.save()
        self.on_event(Event("proposition", "orchestrator", text=proposition.normalized_question))

    def _retrying(self, agent: str) -> Callable[[dict[str, Any]], None]:
        """A provider retry of a call outside the turns (the proposition, an answer), told as a live event."""
        return lambda data: self.on_event(Event("retrying", agent, data=dict(data)))

    def has_spoken(self, speaker: str) -> bool:
        return conversation.has_spoken(self.transcript, speaker)

    def shown_to(self, speaker: str) -> set[int]:
        return conversation.shown_to(self.transcript, speaker)

    def visible_to(self, step: Step) -> list[Turn]:
        return conversation.visible_to(self.transcript, step)

    def advance(self, should_stop: Callable[[], bool] | None = None) -> Turn | None:
        """Answer pending questions, then run the next planned turn. None when paused or finished."""
        with self._failing():
            self.answer_questions()
            if self.finished:
                self.answer_clarifications()
                return None
            self._ensure_proposition()
            step = PLAN[self.transcript.cursor]
            turn = self._run_step(step, should_stop)
            if turn is None:
                return None
            if phase_break_after(step.index):
                self.answer_clarifications()
            if self.transcript.cursor >= len(PLAN):
                self._finish()
            return turn

    # -- one model call at a time (the durable workflow, clearside.live_workflow, runs each as a step) ----------

    def propose(self) -> bool:
        """Normalize the proposition if it is still missing; whether that took a model call."""
        if self.transcript.proposition is not None:
            return False
        with self._failing():
            self._ensure_proposition()
        return True

    def answer(self, item_id: int) -> bool:
        """Answer the queued question or clarification ``item_id``; False if it is no longer queued."""
        item = next((i for i in self.pending("pause_question", "direct_question", "clarification")
                     if i.id == item_id), None)
        if item is None:
            return False
        if item.type == "clarification":
            self._reply(item, "clarification", CLARIFICATION_WIRE, Clarification, "clarification")
        else:
            self._reply(item, "user_answer", ANSWER_WIRE, Answer, "answer")
        return True

    def turn(self, should_stop: Callable[[], bool] | None = None) -> Turn | None:
        """Run only the next planned turn (the proposition must be there); None when a pause halted it."""
        with self._failing():
            return self._run_step(PLAN[self.transcript.cursor], should_stop)

    def finish(self) -> None:
        """Assemble and save the document once the last planned turn is done."""
        with self._failing():
            self._finish()

    @contextmanager
    def _failing(self):
        """Save the transcript as failed, and say so, when a model call fails; the error goes on."""
        try:
            yield
        except ClearSideError as exc:
            with self.lock:
                self.transcript.state, self.transcript.error = "failed", str(exc)
                self.save()
            self.on_event(Event("error", text=str(exc)))
            raise

    def run(self, should_stop: Callable[[], bool] | None = None,
            before_turn: Callable[[LiveDebate], None] | None = None) -> Transcript:
        """Run to the end (or until paused); ``before_turn`` may submit interventions between turns."""
        while not self.finished:
            if before_turn:
                before_turn(self)
            if self.advance(should_stop) is None and self.transcript.state == "paused":
                return self.transcript
        if before_turn:
            before_turn(self)
        self.answer_questions()
        self.answer_clarifications()
        return self.transcript

    def _run_step(self, step: Step, should_stop: Callable[[], bool] | None) -> Turn | None:
        config, transcript = self.config, self.transcript
        visible = self.visible_to(step)
        shown = self.shown_to(step.speaker)
        unseen = [t for t in visible if t.turn not in shown]
        evidence = self._evidence_for(step)
        partial = transcript.partial if transcript.partial and transcript.partial.step == step.index else None
        prefix = partial.speech if partial else ""
        asked = [t for t in visible if t.kind == "question"]
        questions = asked[-1].fields.get("questions", []) if asked and step.kind == "answer" else []
        quoting = files.Quoting.prepare(evidence, self.proposition_now().normalized_question, step.speaker,
                                        small=bool(getattr(self.provider, "small", False))) if evidence else None
        quote_wire, quote_decode = (quoting.wire, quoting.decode) if quoting else (None, None)
        schema = turn_schema(step, evidence=bool(evidence), questions=max(len(questions), 1), quote=quote_wire)
        decode = turn_schema(step, evidence=bool(evidence), questions=max(len(questions), 1), quote=quote_decode) \
            if quoting else None
        prepare, listed, sides = None, "", None
        if step.kind == "synthesis":
            # assumption conflicts are traceable by construction: chosen by id among what the sides listed
            pro, con = side_from_turns(transcript, "pro"), side_from_turns(transcript, "con")
            wire, tight = agents.moderator_wire(pro, con)
            schema = turn_schema(step, evidence=bool(evidence), moderator=wire, quote=quote_wire)
            decode = turn_schema(step, evidence=bool(evidence), moderator=tight, quote=quote_decode)
            prepare, listed = agents.conflicts_from_ids(pro, con), agents.listed_assumptions(pro, con)
            sides = {"pro": pro.assumptions, "con": con.assumptions}
        history = context.conversation(step.speaker, transcript.turns)
        first, fresh = not self.has_spoken(step.speaker), False
        told = [_evidence_line(i) for i in evidence]
        passages = quoting.block() if quoting else ""
        brief = context.TurnBrief(evidence=tuple(told), prefix=prefix, questions=max(len(questions), 1),
                                  assumptions=listed, passages=passages)

        def message(turns: list[Any], first: bool, digest_chars: int | None = None) -> str:
            return context.turn_message(step, self.proposition_now(), turns, config, brief, first=first,
                                        digest_chars=digest_chars)

        prompt = message(unseen, first)
        seen = [t for t in transcript.turns if t.turn in shown or t in visible]

        def restart(digest_chars: int | None = None) -> tuple[list[dict[str, str]], str]:
            """The conversation restarted from digests of all the agent has seen, and its new prompt."""
            return [context.system_message()], message(seen, True, digest_chars)

        # the characters the digests may fill once the model refused them as too many tokens; not cut before: the
        # synthesis's digests of all twenty turns can pass 11,000 characters and still fit, and the moderator has
        # been prefilling them all along (cutting them made its time to first token 3.1 -> 6.1 s)
        digest_chars: int | None = None
        if not first and context.size(history) + len(prompt) > config.context_chars:
            # too long for the model's context: restart the conversation from digests of all it has seen
            fresh, (history, prompt) = True, restart()
        messages = [*history, {"role": "user", "content": prompt}]
        sees = sorted(shown | {t.turn for t in visible})
        budget = config.budget_tokens(step)
        max_tokens = FIELD_TOKENS[step.kind] + (EVIDENCE_TOKENS if evidence else 0) + (
            files.QUOTE_TOKENS if quoting else 0) + math.ceil(budget * config.hard_limit)
        with self.lock:
            transcript.state = "running"
        self.on_event(Event("turn_start", step.speaker, data={"label": step.label, "step": step.index}))
        started, clock = now(), time.perf_counter()
        state: dict[str, Any] = {"raw": "", "speech": "", "cut": False, "first": 0.0}

        def on_delta(text: str) -> None:
            state["first"] = state["first"] or time.perf_counter() - clock
            state["raw"] += text
            self.on_event(Event("delta", step.speaker, text, {"step": step.index}))
            speech = speech_of(state["raw"])
            if len(speech) > len(state["speech"]):
                self.on_event(Event("speech", step.speaker, speech[len(state["speech"]):], {"step": step.index}))
                state["speech"] = speech
            if should_stop is not None and should_stop():
                raise Interrupted

        def on_retry(attempt: int, errors: list[str]) -> None:
            state["raw"], state["speech"], state["cut"] = "", "", False
            self.on_event(Event("retry", step.speaker, data={"attempt": attempt, "errors": errors, "step": step.index}))

        def on_retrying(data: dict[str, Any]) -> None:  # a provider retry: the call is made again from the start
            state["raw"], state["speech"], state["cut"] = "", "", False
            self.on_event(Event("retrying", step.speaker, data={**data, "step": step.index}))

        def salvage(raw: str) -> str | None:
            repaired = close_cut_reply(raw)
            state["cut"] = state["cut"] or repaired is not None
            return repaired

        usage, flags, regenerated, rejected = Usage(), [], 0, []
        opponent_claims = self._claims(step.opponent) if step.kind == "rebuttal" else []
        own_earlier = [text for t in transcript.turns if t.speaker == step.speaker
                       for text in [t.text, *guardrails.texts_of(t.fields)]] if step.kind == "closing" else []

        def shorter(asked: list[dict[str, str]],
                    rejected: list[dict[str, str]]) -> tuple[list[dict[str, str]], str] | None:
            """The conversation restarted from digests of all the agent has seen, as a long one does, then from
            digests cut shorter each time, until it is shorter than ``asked``; None when nothing is left to cut."""
            nonlocal digest_chars

            def smaller(restarted: tuple[list[dict[str, str]], str]) -> bool:
                head, new = restarted
                return context.size([*head, {"role": "user", "content": new}, *rejected]) < context.size(asked)

            if not fresh and smaller(restarted := restart(digest_chars)):
                return restarted
            digest_chars = len(context.visible_block(seen, digest_chars))
            while digest_chars > 0:
                digest_chars = int(digest_chars * OVERFLOW_SHRINK)
                if smaller(restarted := restart(digest_chars)):
                    return restarted
            return None

        def ask(rejected: list[dict[str, str]]) -> TurnFields:
            """The reply to the conversation followed by ``rejected`` (a guardrail's re-ask), asked again shorter
            while the model's context cannot hold it (dense text is more tokens than its characters suggest)."""
            nonlocal fresh, history, prompt, messages
            while True:
                state.update(raw="", speech="", cut=False)
                asked = [*messages, *rejected]
                try:
                    return run_structured(
                        self.provider, CallSpec(step.speaker, TurnFields, schema, decode=decode, max_tokens=max_tokens,
                                                retries=config.schema_retries, temperature=config.temperature,
                                                prepare=prepare, salvage=salvage),
                        asked, usage=usage, violations=self.violations,
                        listeners=Listeners(on_delta=on_delta, on_retry=on_retry, on_retrying=on_retrying))
                except ProviderError as exc:
                    restarted = shorter(asked, rejected) if exc.context_overflow else None
                    if restarted is None:
                        raise  # not a matter of length, or nothing left to shorten: it fails as it is, naming the fix
                    fresh, (history, prompt) = True, restarted
                    messages = [*history, {"role": "user", "content": prompt}]
                    self.on_event(Event("retry", step.speaker,
                                            data={"attempt": 1, "errors": [str(exc)], "step": step.index}))

        try:
            for attempt in range(config.guardrail_retries + 1):
                reply = ask(rejected)
                fields = reply.model_dump()
                quote = fields.pop("evidence_quote", None)  # the user's words: no rule of the debate applies to them
                flags = guardrails.check_turn(step, fields, opponent_claims=opponent_claims, own_earlier=own_earlier,
                                              assumptions=sides)
                if not flags or attempt == config.guardrail_retries:
                    break
                regenerated += 1
                self.on_event(Event("guardrail", step.speaker, data={"violations": flags, "step": step.index}))
                complaint = prompts.render(prompts.load("live").tasks["guardrail"],
                                           violations=guardrails.describe(flags))
                rejected = [{"role": "assistant", "content": state["raw"] or json.dumps(fields)},
                            {"role": "user", "content": complaint}]
        except Interrupted:
            kept = _join(prefix, state["speech"])
            with self.lock:
                transcript.partial = Partial(step=step.index, speech=kept, raw=state["raw"], at=now())
                transcript.state = "paused"
                self.save()
            self.on_event(Event("paused", step.speaker, kept, {"step": step.index}))
            return None
        notes: list[str] = []
        if quoting is not None:  # verified against its passage, asked for again once, or removed
            kept_quote, quote_flags, notes = files.settle(
                self.provider, step.speaker, quoting, quote, [*messages, *rejected], state["raw"] or json.dumps(fields),
                temperature=config.temperature, violations=self.violations)
            if kept_quote is not None:
                fields["evidence_quote"] = kept_quote
            flags = [*flags, *quote_flags]
        return self._accept(step, fields, prefix, flags, regenerated, usage, state, sees, evidence,
                            started, budget, max_tokens, questions, prompt, fresh, rejected, notes)

    def _accept(self, step: Step, fields: dict[str, Any], prefix: str, flags: list, regenerated: int,
                usage: Usage, state: dict[str, Any], sees: list[int], evidence: list[Intervention],
                started: str, budget: int, max_tokens: int, questions: list[str], prompt: str,
                fresh: bool, rejected: list[dict[str, str]], quote_notes: list[str] | None = None) -> Turn:
        config = self.config
        text, notes, truncated = _join(prefix, fields.pop("speech")), list(quote_notes or []), False
        if state["cut"]:
            truncated = True
            notes.append(f"Generation stopped at the {max_tokens}-token limit of this turn (hard limit).")
        hard = config.hard_words(step)
        if len(text.split()) > hard:
            text, truncated = cut_words(text, hard), True
            notes.append(f"Speech cut at {math.floor(budget * config.hard_limit)} tokens ({hard} words), 120% of "
                         f"its {budget}-token budget for {step.minutes:g} min at {config.words_per_minute} "
                         f"words/min (hard limit).")
        if prefix:
            notes.append(f"Paused mid-speech after {len(prefix)} characters; resumed from that point.")
        if step.kind == "answer":
            answers = fields.get("answers", [])
            fields["pairs"] = [{"question": q, "answer": a} for q, a in zip(questions, answers, strict=False)]
        with self.lock:
            transcript = self.transcript
            turn = Turn(turn=len(transcript.turns) + 1, step=step.index, phase=step.phase, kind=step.kind,
                        speaker=step.speaker, label=step.label, text=text, fields=fields, budget_tokens=budget,
                        used_tokens=config.estimate_tokens(text), truncated=truncated, flags=flags,
                        regenerated=regenerated, notes=notes, sees=sees, prompt=prompt, reply=state["raw"],
                        fresh=fresh, rejected=rejected if regenerated else [],
                        evidence=[i.id for i in evidence], paused_at=len(prefix) if prefix else None,
                        started_at=started, finished_at=now(), seconds=round(usage.seconds, 3),
                        first_token_seconds=round(state["first"], 3), completion_tokens=usage.completion_tokens)
            transcript.turns.append(turn)
            transcript.cursor, transcript.partial = step.index + 1, None
            for item in evidence:
                item.delivered_to.append(turn.turn)
                reached = {transcript.turn(n).speaker for n in item.delivered_to}
                if {"pro", "con"} <= reached or "moderator" in reached:
                    item.status = "delivered"
            self.save()
        self.on_event(Event("turn_done", step.speaker, text,
                            data={"turn": turn.turn, "step": step.index, "flags": flags, "truncated": truncated,
                                  **({"quote": fields["evidence_quote"]} if "evidence_quote" in fields else {})}))
        # the agents who speak later start reading this turn while the next one is written
        ahead.warm(self.transcript, self.provider, self.config.context_chars)
        return turn

    def _claims(self, speaker: str) -> list[str]:
        claims = []
        for turn in self.transcript.turns:
            if turn.speaker == speaker and turn.kind in ("opening", "constructive"):
                claims += turn.fields.get("previews", [])
                claims += [f"{a.get('claim', '')} {a.get('explanation', '')}" for a in turn.fields.get("arguments", [])]
        return claims

    def _finish(self) -> None:
        document = to_document(self.transcript)
        with self.lock:
            for item in self.transcript.interventions:
                if item.type == "inject_evidence" and item.status == "queued":
                    item.status = "failed"
                    item.error = "The debate ended before another turn could take this evidence into account."
            self.transcript.document = document.dump()
            self.transcript.state = "done"
            self.save()
        self.on_event(Event("done"))

