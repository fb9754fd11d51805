"""The six-phase live protocol (docs/design/live-protocol.md): phases, turn order, time budgets and visibility.

Everything here is data and pure functions. A :class:`Step` is one planned turn;
``PLAN`` lists them in the order the protocol fixes (docs/design/live-protocol.md#phases). Time allocations
become token budgets through :class:`LiveConfig` (the words-per-minute assumption lives there).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, fields

PHASES = ("opening", "constructive", "cross_examination", "rebuttal", "closing", "synthesis")
PHASE_LABELS = {"opening": "Opening statements", "constructive": "Constructive rounds",
                "cross_examination": "Cross-examination", "rebuttal": "Rebuttals",
                "closing": "Closing statements", "synthesis": "Moderator synthesis",
                "clarification": "Clarification"}
SPEAKERS = ("pro", "con", "moderator")
SPEAKER_LABELS = {"pro": "Pro", "con": "Con", "moderator": "Moderator"}
ROUNDS = {1: ("economic", "technical"), 2: ("ethical", "social"), 3: ("political", "environmental", "economic",
                                                                      "social", "technical")}
ROUND_TOPICS = {1: "economic and technical arguments", 2: "ethical and social arguments",
                3: "practical implications: feasibility, benefits, risks and obstacles"}


@dataclass(frozen=True)
class Step:
    """One planned turn. ``kind`` picks the wire schema and the instructions."""

    index: int
    phase: str
    kind: str  # opening, constructive, question, answer, rebuttal, closing, synthesis
    speaker: str
    minutes: float
    label: str
    round: int = 0  # constructive round (1-3) or cross-examination exchange (1 = first ask, 2 = follow-up)
    opponent: str = ""  # the side being questioned, answered to or rebutted

    @property
    def advocate(self) -> bool:
        return self.speaker in ("pro", "con")


def _plan() -> tuple[Step, ...]:
    steps: list[tuple] = [("opening", "opening", "pro", 2, "Pro opening statement", 0, ""),
                          ("opening", "opening", "con", 2, "Con opening statement", 0, "")]
    for number, topic in ROUND_TOPICS.items():
        for side in ("pro", "con"):
            steps.append(("constructive", "constructive", side, 2,
                          f"Round {number} ({topic.split(':')[0]}): {SPEAKER_LABELS[side]}", number, ""))
    for asker, answerer in (("pro", "con"), ("con", "pro")):
        a, b = SPEAKER_LABELS[asker], SPEAKER_LABELS[answerer]
        steps += [("cross_examination", "question", asker, 0.5, f"{a} questions {b}", 1, answerer),
                  ("cross_examination", "answer", answerer, 1.0, f"{b} answers {a}", 1, asker),
                  ("cross_examination", "question", asker, 0.5, f"{a} follows up", 2, answerer),
                  ("cross_examination", "answer", answerer, 1.0, f"{b} answers the follow-up", 2, asker)]
    steps += [("rebuttal", "rebuttal", "con", 2, "Con rebuts Pro", 0, "pro"),
              ("rebuttal", "rebuttal", "pro", 2, "Pro rebuts Con", 0, "con"),
              ("closing", "closing", "con", 2, "Con closing statement", 0, ""),
              ("closing", "closing", "pro", 2, "Pro closing statement", 0, ""),
              ("synthesis", "synthesis", "moderator", 3, "Moderator synthesis", 0, "")]
    return tuple(Step(i, phase, kind, speaker, float(minutes), label, rnd, opp)
                 for i, (phase, kind, speaker, minutes, label, rnd, opp) in enumerate(steps))


PLAN: tuple[Step, ...] = _plan()


def phase_break_after(index: int) -> bool:
    """True when step ``index`` is the last of its phase (clarifications are answered there)."""
    return index == len(PLAN) - 1 or PLAN[index + 1].phase != PLAN[index].phase


@dataclass(frozen=True)
class LiveConfig:
    """Pace and limits. Speech budgets: minutes x words_per_minute x tokens_per_word tokens.

    The soft limit is what agents are told (wrap up by ``soft_limit`` of the
    budget); at ``hard_limit`` of the budget the speech is cut and the turn is
    marked truncated. ``CLEARSIDE_WPM`` sets the default pace.
    """

    words_per_minute: int = 150
    tokens_per_word: float = 1.3
    soft_limit: float = 0.8
    hard_limit: float = 1.2
    guardrail_retries: int = 1
    schema_retries: int = 2
    temperature: float = 0.4
    context_chars: int = 11000  # an agent's conversation longer than this restarts from compact digests

    @classmethod
    def from_env(cls, **overrides) -> LiveConfig:
        values = {k: v for k, v in overrides.items() if v is not None}
        if "words_per_minute" not in values and os.environ.get("CLEARSIDE_WPM"):
            values["words_per_minute"] = int(os.environ["CLEARSIDE_WPM"])
        config = cls(**values)
        config.check()
        return config

    @classmethod
    def from_saved(cls, saved: dict, **overrides) -> LiveConfig:
        """The config a saved transcript recorded (keys this version does not know are left out), with
        ``overrides`` (e.g. the temperature of a re-run)."""
        known = {f.name for f in fields(cls)}
        return cls(**{**{k: v for k, v in saved.items() if k in known}, **overrides})

    def check(self) -> None:
        from ..errors import ConfigError

        if not 10 <= self.words_per_minute <= 400:
            raise ConfigError(f"words_per_minute is {self.words_per_minute}; use a pace from 10 to 400.")
        if not 0 < self.soft_limit <= 1 <= self.hard_limit <= 3:
            raise ConfigError("Limits need 0 < soft_limit <= 1 <= hard_limit <= 3.")
        if not 0 <= self.guardrail_retries <= 3 or not 0 <= self.schema_retries <= 5:
            raise ConfigError("guardrail_retries must be 0-3 and schema_retries 0-5.")

    def budget_words(self, step: Step) -> int:
        return max(round(step.minutes * self.words_per_minute), 10)

    def budget_tokens(self, step: Step) -> int:
        return math.ceil(self.budget_words(step) * self.tokens_per_word)

    def hard_words(self, step: Step) -> int:
        return math.floor(self.budget_words(step) * self.hard_limit)

    def estimate_tokens(self, text: str) -> int:
        return math.ceil(len(text.split()) * self.tokens_per_word)

    def as_dict(self) -> dict:
        return asdict(self)


def visible_steps(step: Step) -> list[int]:
    """Indices of earlier planned turns this step may see (docs/design/live-protocol.md#visibility).

    Openings and constructive turns are parallel construction: each side sees only
    its own earlier turns, never the other side's. Cross-examination sees the
    questioned side's case and the exchange so far; rebuttals see the opponent's
    case and the whole cross-examination; closings and the synthesis see everything.
    """
    before = PLAN[: step.index]
    if step.kind in ("opening", "constructive"):
        return [s.index for s in before if s.speaker == step.speaker]
    if step.kind in ("question", "answer"):
        asker = _asker(step)
        case_of = step.opponent if step.kind == "question" else step.speaker
        case = [s.index for s in before if s.phase in ("opening", "constructive") and s.speaker == case_of]
        exchange = [s.index for s in before if s.phase == "cross_examination" and _asker(s) == asker]
        return case + exchange
    if step.kind == "rebuttal":
        return [s.index for s in before if (s.phase in ("opening", "constructive") and s.speaker == step.opponent)
                or s.phase in ("cross_examination", "rebuttal")]
    return [s.index for s in before]  # closing and synthesis see the whole debate


def _asker(step: Step) -> str:
    return step.speaker if step.kind == "question" else step.opponent
