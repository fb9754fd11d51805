"""The calls a live debate makes outside its planned turns: the proposition, and the answers to the user.

The orchestrator normalizes the question once, before the first turn (:func:`ensure_proposition`). A pause
question or a direct question is answered by its recipient, and a clarification inline, as a turn of its own
(:func:`answer`): the agent answers within its own conversation, shown what it may see right now
(:func:`clearside.live.conversation.seen_by`) and restarted from digests by the same rule as a turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import agents
from ..enforce import CallSpec, Listeners, run_structured
from ..errors import ClearSideError
from ..runtime.events import Event
from . import context
from .conversation import outlook, proposition_now, recipient_now, seen_by
from .protocol import SPEAKER_LABELS
from .session import Session
from .transcript import Intervention, Turn, now
from .wire import ANSWER_WIRE, CLARIFICATION_WIRE, Answer, Clarification

ANSWER_TOKENS = 200


@dataclass(frozen=True)
class _Reply:
    """How one kind of intervention is answered: the task's prompt, the wire schema, its model and field."""

    task: str
    schema: dict
    model: type
    key: str


_REPLIES = {"clarification": _Reply("clarification", CLARIFICATION_WIRE, Clarification, "clarification"),
            "question": _Reply("user_answer", ANSWER_WIRE, Answer, "answer")}


def ensure_proposition(session: Session) -> None:
    """The orchestrator normalizes the question once, before the first turn."""
    transcript, config = session.transcript, session.config
    if transcript.proposition is not None:
        return
    user_context = context.context_of(transcript.context)
    session.on_event(Event("turn_start", "orchestrator", data={"label": "Normalizing the proposition"}))
    proposition = run_structured(
        session.provider, CallSpec("orchestrator", agents.ORCHESTRATOR.model, agents.ORCHESTRATOR.schema,
                                   max_tokens=agents.ORCHESTRATOR.max_tokens, retries=config.schema_retries,
                                   temperature=config.temperature,
                                   prepare=agents.proposition_from_reply(transcript.question, user_context)),
        agents.orchestrator_messages(transcript.question, user_context), violations=session.violations,
        listeners=Listeners(on_retrying=session.retrying("orchestrator")))
    with session.lock:
        transcript.proposition = proposition.dump()
        session.save()
    session.on_event(Event("proposition", "orchestrator", text=proposition.normalized_question))


def _messages(session: Session, item: Intervention, speaker: str, task: str) -> list[dict[str, str]]:
    """The recipient's conversation and the question, with the turns it may see and has not been shown."""
    transcript = session.transcript
    view = outlook(transcript, speaker, seen_by(transcript, speaker))
    if view.overflows(0, session.config.context_chars):
        view = view.restarted()
    message = context.question_message(task, speaker, proposition_now(transcript), view.unseen, item.text,
                                       first=view.first)
    return [*view.history, {"role": "user", "content": message}]


def answer(session: Session, item: Intervention) -> None:
    """Answer the queued question or clarification ``item`` (the proposition first, if it is missing); a failed
    call marks the item failed and says so."""
    ensure_proposition(session)
    reply = _REPLIES["clarification" if item.type == "clarification" else "question"]
    speaker = item.to or recipient_now(session.transcript)
    messages = _messages(session, item, speaker, reply.task)
    session.on_event(Event("turn_start", speaker, data={"intervention": item.id, "label": "Answering the user"}))
    config = session.config
    try:
        answered = run_structured(session.provider, CallSpec(speaker, reply.model, reply.schema,
                                                             max_tokens=ANSWER_TOKENS, retries=config.schema_retries,
                                                             temperature=config.temperature),
                                  messages, violations=session.violations,
                                  listeners=Listeners(on_retrying=session.retrying(speaker)))
    except ClearSideError as exc:
        with session.lock:
            item.status, item.error = "failed", str(exc)
            session.save()
        session.on_event(Event("error", speaker, text=str(exc), data={"intervention": item.id}))
        return
    text = getattr(answered, reply.key)
    with session.lock:
        item.status, item.response, item.answered_by = "answered", text, speaker
        if item.type == "clarification":
            _clarifying_turn(session, item, speaker, text)
        session.save()
    session.on_event(Event("answered", speaker, text=text, data={"id": item.id, "type": item.type}))


def _clarifying_turn(session: Session, item: Intervention, speaker: str, text: str) -> None:
    """A clarification joins the transcript as a turn of its own (not a planned one)."""
    turns = session.transcript.turns
    turn = Turn(turn=len(turns) + 1, phase="clarification", kind="clarification", speaker=speaker,
                label=f"{SPEAKER_LABELS[speaker]} clarifies for the user", text=text,
                fields={"request": item.text}, started_at=now(), finished_at=now())
    turns.append(turn)
    item.answered_in_turn = turn.turn
