"""The live debate (docs/design/live-protocol.md) as one object: its saved transcript, and the work that moves it on.

:class:`LiveDebate` coordinates; the rules and the calls live beside it: what each agent may see
(:mod:`~clearside.live.conversation`), one planned turn (:class:`~clearside.live.turn.TurnRunner`), the
proposition and the answers to the user (:mod:`~clearside.live.replies`). It is synchronous and saves the
transcript after every change. A pause raises :class:`~clearside.live.turn.Interrupted` from inside the stream;
the speech said so far is kept and the next run of that turn continues from exactly there.

The dashboard's durable workflow (:mod:`clearside.live.workflow`) calls :meth:`LiveDebate.propose`,
:meth:`~LiveDebate.turn`, :meth:`~LiveDebate.answer` and :meth:`~LiveDebate.finish`, one model call per step;
scripts, benchmarks and tests drive it in process with :meth:`~LiveDebate.advance` and :meth:`~LiveDebate.run`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

from .. import inputs, prompts
from ..errors import ClearSideError, InputError
from ..providers import Provider
from ..runtime.events import Event, OnEvent
from ..schema import Context, Document
from ..sources import Source
from ..store import LiveWriter, Store
from . import evidence as files
from . import replies
from .assemble import to_document
from .conversation import next_step_of, queued, recipient_now
from .exchange import load_live
from .protocol import PLAN, SPEAKERS, LiveConfig, Step, phase_break_after
from .session import Session
from .transcript import INTERVENTION_TYPES, Intervention, Transcript, Turn, now
from .turn import TurnRunner

QUESTIONS = ("pause_question", "direct_question")  # answered before the next turn; clarifications at a phase break


@dataclass(frozen=True)
class Origin:
    """Where a new live debate comes from: an existing v1 ``document`` (its proposition is reused) and that
    debate's id (``source_debate``), the original of a re-run (``parent_id``), and the browser that started it
    (``owner``: only that browser may steer it from the dashboard)."""

    document: Document | None = None
    source_debate: str | None = None
    parent_id: str | None = None
    owner: str | None = None


def _done(transcript: Transcript) -> bool:
    return transcript.cursor >= len(PLAN) and transcript.document is not None


def intervention_for(transcript: Transcript, kind: str, text: str, to: str | None = None,
                     source: Source | None = None) -> Intervention:
    """A checked intervention on the transcript as it stands, numbered after its last one (not yet added);
    InputError when it cannot be made (docs/design/live-protocol.md#interventions). ``source``: a file the user injects
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


class LiveDebate(Session):
    """A live debate: its transcript, saved after every change, and the work that moves it on, one model call at
    a time. Make one with :meth:`create` (or :meth:`resume` a saved one); :meth:`submit` records the user's
    interventions, each handled at its point.

    The entry points: :meth:`propose` (the proposition), :meth:`answer` (one queued question or clarification),
    :meth:`turn` (the next planned turn) and :meth:`finish` (the document), which the durable workflow calls
    one per step; :meth:`advance` (the next piece of work: pending answers, then the next turn) and :meth:`run`
    (to the end), for a debate driven in process. A failed model call marks the transcript failed, says so, and
    is raised."""

    @classmethod
    def create(cls, question: str, provider: Provider, *, store: Store, config: LiveConfig | None = None,
               context_fields: dict[str, str | None] | None = None, origin: Origin | None = None,
               on_event: OnEvent | None = None) -> LiveDebate:
        """A new live debate from a question (input rules apply) or from an existing v1 document
        (``origin.document``), saved in ``store``."""
        config, origin = config or LiveConfig(), origin or Origin()
        config.check()
        document = origin.document
        if document is not None:
            question = question or document.proposition.raw_input
        question = inputs.question(question)
        fields = inputs.context_fields(context_fields or {})
        stamp = now()
        transcript = Transcript(
            id=uuid.uuid4().hex, created_at=stamp, updated_at=stamp, question=question,
            context=Context(**fields).dump() if fields else {},
            proposition=document.proposition.dump() if document is not None else None,
            source_debate=origin.source_debate, provider=provider.name, model=provider.model,
            config=config.as_dict(), prompt_versions=prompts.versions("live", "orchestrator"))
        writer = LiveWriter(store, transcript.id, parent_id=origin.parent_id, owner=origin.owner)
        debate = cls(transcript, provider, config=config, writer=writer, on_event=on_event)
        debate.save()
        return debate

    @classmethod
    def resume(cls, debate_id: str, provider: Provider, *, store: Store,
               on_event: OnEvent | None = None) -> LiveDebate:
        """Continue a debate saved in ``store`` from its cursor; a turn that was in flight when it stopped is rerun."""
        transcript = load_live(store, debate_id)
        if transcript.state in ("running", "failed", "paused") and not _done(transcript):
            transcript.state, transcript.error = "running", ""
        debate = cls(transcript, provider, writer=LiveWriter(store, transcript.id), on_event=on_event)
        debate.save()
        return debate

    def snapshot(self) -> Transcript:
        with self.lock:
            return self.transcript.model_copy(deep=True)

    @property
    def finished(self) -> bool:
        return _done(self.transcript)

    def submit(self, kind: str, text: str, to: str | None = None, source: Source | None = None) -> Intervention:
        """Record an intervention (docs/design/live-protocol.md#interventions); it is handled at its point. ``source``:
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

    # -- one model call at a time (the durable workflow, clearside.live.workflow, runs each as a step) ----------

    def propose(self) -> bool:
        """Normalize the proposition if it is still missing; whether that took a model call."""
        if self.transcript.proposition is not None:
            return False
        with self._failing():
            replies.ensure_proposition(self)
        return True

    def answer(self, item_id: int) -> bool:
        """Answer the queued question or clarification ``item_id``; False if it is no longer queued."""
        item = next((i for i in self._queued(*QUESTIONS, "clarification") if i.id == item_id), None)
        if item is None:
            return False
        replies.answer(self, item)
        return True

    def turn(self, should_stop: Callable[[], bool] | None = None) -> Turn | None:
        """Run only the next planned turn (the proposition must be there); None when a pause halted it."""
        with self._failing():
            return self._turn(PLAN[self.transcript.cursor], should_stop)

    def finish(self) -> None:
        """Assemble and save the document once the last planned turn is done."""
        with self._failing():
            self._finish()

    # -- in process: the next piece of work, or all of it --------------------------------------------------------

    def advance(self, should_stop: Callable[[], bool] | None = None) -> Turn | None:
        """Answer pending questions, then run the next planned turn. None when paused or finished."""
        with self._failing():
            self._answer_all(*QUESTIONS)
            if self.finished:
                self._answer_all("clarification")
                return None
            replies.ensure_proposition(self)
            step = PLAN[self.transcript.cursor]
            turn = self._turn(step, should_stop)
            if turn is None:
                return None
            if phase_break_after(step.index):
                self._answer_all("clarification")  # at a phase break: each inline, as a turn of its own
            if self.transcript.cursor >= len(PLAN):
                self._finish()
            return turn

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
        self._answer_all(*QUESTIONS)
        self._answer_all("clarification")
        return self.transcript

    # -- the work --------------------------------------------------------------------------------------------------

    def _queued(self, *kinds: str) -> list[Intervention]:
        with self.lock:
            return queued(self.transcript, *kinds)

    def _answer_all(self, *kinds: str) -> None:
        """Answer every queued intervention of these kinds now, in order."""
        for item in self._queued(*kinds):
            replies.answer(self, item)

    def _turn(self, step: Step, should_stop: Callable[[], bool] | None) -> Turn | None:
        runner = TurnRunner(self, should_stop)
        result = runner.run(step)
        return None if result is None else runner.accept(result)

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
