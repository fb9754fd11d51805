"""What one planned turn of the live debate is asked: its plan (wire schema, evidence, quoting, budgets) and its
messages (the agent's conversation and its new message, restarted or shortened when too long).

:func:`plan_turn` fixes, before the call, everything the turn's messages and checks rest on; :class:`Messages`
holds the conversation the turn sends, restarted from digests by the rule of
:class:`~clearside.live.conversation.Outlook` and asked again with ever shorter digests while the model refuses
it as too many tokens (:meth:`Messages.shorten`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import agents
from ..providers import Provider
from ..schema import Proposition
from . import context, guardrails
from . import evidence as files
from .assemble import side_from_turns
from .context import TurnBrief
from .conversation import Outlook, evidence_for, outlook, proposition_now, visible_to
from .protocol import LiveConfig, Step
from .transcript import Intervention, Transcript, Turn
from .wire import turn_schema

FIELD_TOKENS = {"opening": 220, "constructive": 420, "question": 140, "answer": 200, "rebuttal": 240,
                "closing": 280, "synthesis": 650}
EVIDENCE_TOKENS = 80
OVERFLOW_SHRINK = 0.6  # a refused restart from digests asks again with the digests cut to this share


@dataclass(frozen=True)
class Wires:
    """A turn's wire schema, the stricter one decoding is constrained to (None: the same), and for the synthesis
    how its reply is prepared (conflicts chosen by id), the sides' listed assumptions, and the sides' own."""

    schema: dict[str, Any]
    decode: dict[str, Any] | None = None
    prepare: Callable[[Any], Any] | None = None
    listed: str = ""
    sides: dict[str, list[str]] | None = None


@dataclass(frozen=True)
class TurnPlan:
    """One planned turn as fixed before its call: the step, the proposition, what the agent sees (``view``), the
    evidence it delivers and the quoting of the user's files among it, the questions an answer takes, the wires,
    the message's brief, the speech budget and the token limit, and what the guardrails compare it with."""

    step: Step
    proposition: Proposition
    view: Outlook
    evidence: list[Intervention]
    quoting: files.Quoting | None
    questions: list[str]
    wires: Wires
    brief: TurnBrief
    budget: int
    max_tokens: int
    opponent_claims: list[str]
    own_earlier: list[str]

    @property
    def prefix(self) -> str:
        """The speech kept from before a pause, which this turn continues."""
        return self.brief.prefix

    @property
    def sees(self) -> list[int]:
        """Every turn number the agent has been shown by this turn."""
        return [t.turn for t in self.view.seen]


def evidence_line(item: Intervention) -> str:
    """Evidence as the agent is told it: the user's text, and the file it came with."""
    if item.source is None or item.source.name in item.text:
        return item.text
    return f"{item.text} (with the file {item.source.name})"


def claims_of(transcript: Transcript, speaker: str) -> list[str]:
    """What ``speaker`` previewed and argued in its opening and constructive turns (a rebuttal must answer them)."""
    claims = []
    for turn in transcript.turns:
        if turn.speaker == speaker and turn.kind in ("opening", "constructive"):
            claims += turn.fields.get("previews", [])
            claims += [f"{a.get('claim', '')} {a.get('explanation', '')}" for a in turn.fields.get("arguments", [])]
    return claims


def own_words(transcript: Transcript, speaker: str) -> list[str]:
    """Every text of ``speaker``'s turns so far (a closing may bring no new argument)."""
    return [text for t in transcript.turns if t.speaker == speaker for text in [t.text, *guardrails.texts_of(t.fields)]]


def _wires(transcript: Transcript, step: Step, evidence: bool, questions: int,
           quoting: files.Quoting | None) -> Wires:
    quote_wire, quote_decode = (quoting.wire, quoting.decode) if quoting else (None, None)
    if step.kind != "synthesis":
        return Wires(turn_schema(step, evidence=evidence, questions=questions, quote=quote_wire),
                     turn_schema(step, evidence=evidence, questions=questions, quote=quote_decode) if quoting else None)
    # assumption conflicts are traceable by construction: chosen by id among what the sides listed
    pro, con = side_from_turns(transcript, "pro"), side_from_turns(transcript, "con")
    wire, tight = agents.moderator_wire(pro, con)
    return Wires(turn_schema(step, evidence=evidence, moderator=wire, quote=quote_wire),
                 turn_schema(step, evidence=evidence, moderator=tight, quote=quote_decode),
                 agents.conflicts_from_ids(pro, con), agents.listed_assumptions(pro, con),
                 {"pro": pro.assumptions, "con": con.assumptions})


def plan_turn(transcript: Transcript, step: Step, provider: Provider, config: LiveConfig) -> TurnPlan:
    """The plan of ``step``, the next planned turn of ``transcript`` (the proposition made)."""
    proposition = proposition_now(transcript)
    visible = visible_to(transcript, step)
    evidence = evidence_for(transcript, step)
    partial = transcript.partial if transcript.partial and transcript.partial.step == step.index else None
    asked = [t for t in visible if t.kind == "question"]
    questions = asked[-1].fields.get("questions", []) if asked and step.kind == "answer" else []
    quoting = files.Quoting.prepare(evidence, proposition.normalized_question, step.speaker,
                                    small=bool(getattr(provider, "small", False))) if evidence else None
    wires = _wires(transcript, step, bool(evidence), max(len(questions), 1), quoting)
    brief = TurnBrief(evidence=tuple(evidence_line(i) for i in evidence), prefix=partial.speech if partial else "",
                      questions=max(len(questions), 1), assumptions=wires.listed,
                      passages=quoting.block() if quoting else "")
    budget = config.budget_tokens(step)
    max_tokens = FIELD_TOKENS[step.kind] + (EVIDENCE_TOKENS if evidence else 0) + (
        files.QUOTE_TOKENS if quoting else 0) + math.ceil(budget * config.hard_limit)
    return TurnPlan(step=step, proposition=proposition, view=outlook(transcript, step.speaker, visible),
                    evidence=evidence, quoting=quoting, questions=questions, wires=wires, brief=brief,
                    budget=budget, max_tokens=max_tokens,
                    opponent_claims=claims_of(transcript, step.opponent) if step.kind == "rebuttal" else [],
                    own_earlier=own_words(transcript, step.speaker) if step.kind == "closing" else [])


class Messages:
    """The messages a planned turn sends: the agent's conversation and its new message (``prompt``), restarted
    from digests of all it has seen when too long for the model's context (``fresh``)."""

    def __init__(self, plan: TurnPlan, config: LiveConfig) -> None:
        self.plan, self.config = plan, config
        self.history, self.fresh = plan.view.history, False
        self.prompt = self._message(plan.view.unseen, plan.view.first)
        # the characters the digests may fill once the model refused them as too many tokens; not cut before: the
        # synthesis's digests of all twenty turns can pass 11,000 characters and still fit, and the moderator has
        # been prefilling them all along (cutting them made its time to first token 3.1 -> 6.1 s)
        self.digest_chars: int | None = None
        if plan.view.overflows(len(self.prompt), config.context_chars):
            # too long for the model's context: restart the conversation from digests of all it has seen
            self.fresh, (self.history, self.prompt) = True, self._restart()

    @property
    def sent(self) -> list[dict[str, str]]:
        return [*self.history, {"role": "user", "content": self.prompt}]

    def _message(self, turns: list[Turn], first: bool, digest_chars: int | None = None) -> str:
        return context.turn_message(self.plan.step, self.plan.proposition, turns, self.config, self.plan.brief,
                                    first=first, digest_chars=digest_chars)

    def _restart(self, digest_chars: int | None = None) -> tuple[list[dict[str, str]], str]:
        """The conversation restarted from digests of all the agent has seen, and its new prompt."""
        view = self.plan.view.restarted()
        return view.history, self._message(view.unseen, view.first, digest_chars)

    def shorten(self, asked: list[dict[str, str]], rejected: list[dict[str, str]]) -> bool:
        """Restart the conversation shorter than ``asked`` (which the model refused as too many tokens), followed
        by ``rejected`` as before; False when nothing is left to cut."""
        restarted = self._shorter(asked, rejected)
        if restarted is None:
            return False
        self.fresh, (self.history, self.prompt) = True, restarted
        return True

    def _shorter(self, asked: list[dict[str, str]],
                 rejected: list[dict[str, str]]) -> tuple[list[dict[str, str]], str] | None:
        """The conversation restarted from digests of all the agent has seen, as a long one does, then from digests
        cut shorter each time, until it is shorter than ``asked``; None when nothing is left to cut."""
        def smaller(restarted: tuple[list[dict[str, str]], str]) -> bool:
            head, new = restarted
            return context.size([*head, {"role": "user", "content": new}, *rejected]) < context.size(asked)

        if not self.fresh and smaller(restarted := self._restart(self.digest_chars)):
            return restarted
        self.digest_chars = len(context.visible_block(self.plan.view.seen, self.digest_chars))
        while self.digest_chars > 0:
            self.digest_chars = int(self.digest_chars * OVERFLOW_SHRINK)
            if smaller(restarted := self._restart(self.digest_chars)):
                return restarted
        return None
