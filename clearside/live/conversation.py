"""The rules of the live conversation, as pure functions over the transcript
(docs/design/live-protocol.md#speaker-rules).

Each agent keeps one growing conversation (:func:`clearside.live.context.conversation`). What it may see at a
step is fixed by the protocol (:func:`visible_to`); what it has already been shown is in its own saved turns
(:func:`shown_to`); its next message shows the difference. An agent whose conversation has grown past the
model's context restarts it from digests of all it has seen (:meth:`Outlook.restarted`; the rule:
:meth:`Outlook.overflows`). The turn runner (:mod:`clearside.live.turn`), the answers to the user
(:mod:`clearside.live.interventions`) and the prefill ahead (:mod:`clearside.live.ahead`) all build their
messages from these, so an agent's context never holds a turn its step may not see.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..schema import Proposition
from . import context
from .protocol import PLAN, Step, visible_steps
from .transcript import Intervention, Transcript, Turn


def next_step_of(transcript: Transcript) -> Step | None:
    """The next planned step, or None once every planned turn is done."""
    return PLAN[transcript.cursor] if transcript.cursor < len(PLAN) else None


def recipient_now(transcript: Transcript) -> str:
    """Who answers a clarification asked now: whoever spoke last (before any turn: the next speaker)."""
    spoken = [t for t in transcript.turns if t.step is not None]
    upcoming = next_step_of(transcript)
    return spoken[-1].speaker if spoken else (upcoming.speaker if upcoming else "moderator")


def proposition_now(transcript: Transcript) -> Proposition | None:
    """The normalized proposition, once the orchestrator has made it."""
    return context.proposition_of(transcript.proposition)


def has_spoken(transcript: Transcript, speaker: str) -> bool:
    """Whether the agent has a conversation yet: a planned turn of its own with the message it got."""
    return any(t.speaker == speaker and t.prompt for t in transcript.turns)


def shown_to(transcript: Transcript, speaker: str) -> set[int]:
    """Turn numbers already in this agent's conversation: its own turns and what they were shown."""
    shown: set[int] = set()
    for turn in transcript.turns:
        if turn.speaker == speaker and turn.prompt:
            if turn.fresh:
                shown = set()
            shown.update(turn.sees)
            shown.add(turn.turn)
    return shown


def visible_to(transcript: Transcript, step: Step) -> list[Turn]:
    """The turns ``step`` may see (:func:`clearside.live.protocol.visible_steps`); closings and the synthesis see
    every turn, the clarifications included."""
    if step.kind in ("closing", "synthesis"):
        return list(transcript.turns)
    return [t for i in visible_steps(step) if (t := transcript.planned(i)) is not None]


def seen_by(transcript: Transcript, speaker: str) -> list[Turn]:
    """What an agent may see right now: the moderator everything, an advocate what its next turn sees."""
    upcoming = next((s for s in PLAN[transcript.cursor:] if s.speaker == speaker), None)
    if speaker == "moderator" or upcoming is None:
        return list(transcript.turns)
    return visible_to(transcript, upcoming)


def queued(transcript: Transcript, *kinds: str) -> list[Intervention]:
    """The interventions of these kinds still waiting for their point."""
    return [i for i in transcript.interventions if i.type in kinds and i.status == "queued"]


def evidence_for(transcript: Transcript, step: Step) -> list[Intervention]:
    """The queued evidence ``step`` delivers: to the moderator all of it, to an advocate what it has not had."""
    items = queued(transcript, "inject_evidence")
    if step.speaker == "moderator":
        return items
    speakers = {n: transcript.turn(n).speaker for i in items for n in i.delivered_to}
    return [i for i in items if step.speaker not in {speakers[n] for n in i.delivered_to}]


@dataclass(frozen=True)
class Receipt:
    """One turn that took an injected piece of evidence: its number, its speaker, and whether it acknowledged the
    evidence (said what it makes of it: the turn's ``evidence_response``)."""

    turn: int
    speaker: str
    acknowledged: bool


def receipts(transcript: Transcript, item: Intervention) -> list[Receipt]:
    """Who received ``item`` (injected evidence), in the order they did, and who acknowledged it."""
    out = []
    for number in item.delivered_to:
        turn = transcript.turn(number)
        said = turn.fields.get("evidence_response")
        out.append(Receipt(number, turn.speaker, isinstance(said, str) and bool(said.strip())))
    return out


def still_to_receive(transcript: Transcript, item: Intervention) -> list[str]:
    """The advocates queued evidence has not reached yet (:func:`evidence_for`: each advocate takes it at its next
    turn; the moderator, at its turn, takes whatever is still queued); none once it is delivered."""
    if item.status != "queued":
        return []
    reached = {receipt.speaker for receipt in receipts(transcript, item)}
    return [speaker for speaker in ("pro", "con") if speaker not in reached]


@dataclass(frozen=True)
class Outlook:
    """What one agent's next message is built on: its conversation so far (``history``), the turns it may see
    and has not been shown (``unseen``), and whether the message opens with the header (``first``). ``seen``:
    all it has been shown or may see now, what a restart from digests shows; ``fresh``: restarted."""

    history: list[dict[str, str]]
    unseen: list[Turn]
    seen: list[Turn]
    first: bool
    fresh: bool = False

    def overflows(self, message_chars: int, context_chars: int) -> bool:
        """The restart rule: an agent that has spoken restarts its conversation from digests when the conversation
        and a new message of ``message_chars`` characters would pass ``context_chars``."""
        return not self.first and context.size(self.history) + message_chars > context_chars

    def restarted(self) -> Outlook:
        """The conversation restarted from digests of all the agent has seen."""
        return replace(self, history=[context.system_message()], unseen=self.seen, first=True, fresh=True)


def outlook(transcript: Transcript, speaker: str, visible: list[Turn]) -> Outlook:
    """The agent's outlook when its next message may show ``visible``."""
    shown = shown_to(transcript, speaker)
    return Outlook(history=context.conversation(speaker, transcript.turns),
                   unseen=[t for t in visible if t.turn not in shown],
                   seen=[t for t in transcript.turns if t.turn in shown or t in visible],
                   first=not has_spoken(transcript, speaker))
