"""The perspectives session and its state machine (docs/design/perspectives.md#states).

INIT → CLARIFICATION_PENDING → CLARIFICATION_COMPLETE → ROUND_1_A → ROUND_1_B → … → ROUND_N_B →
SYNTHESIS → COMPLETE. ``enter`` refuses any other move, so the clarification gate cannot be
skipped, and ``merge`` fixes the merged prompt once: it can never change afterwards. Every state
entered is appended to ``state_history``. A failed step leaves the state where it was (with
``error`` set), so resuming reruns exactly that step; so does a cancelled one (``cancelled`` set).
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_serializer

from ..errors import InputError
from ..inputs import clean
from ..schema import AgentQuality, QualityItem

MIN_ROUNDS, MAX_ROUNDS, DEFAULT_ROUNDS = 1, 5, 4
MAX_ANSWERS = 4000
MAX_SITUATION = 2000  # a personal situation takes more words than a debate question
_ROUND = re.compile(r"ROUND_(\d+)_([AB])")
# What the later agents read in place of an answer the person chose not to give (never an empty answer)
SKIPPED = "(skipped: the person chose not to answer this question; do not assume an answer)"


def blank_answers(answers: list[str | None]) -> list[int]:
    """The 1-based numbers of the answers that are empty or only spaces."""
    return [i for i, answer in enumerate(answers, 1) if not clean(answer or "")]


class InvalidTransition(InputError):
    """A move the state machine does not allow (exit 2: the message says what must happen first)."""


def round_state(n: int, agent: str) -> str:
    return f"ROUND_{n}_{agent}"


def allowed_next(state: str, max_rounds: int) -> list[str]:
    """The states ``state`` may move to (docs/design/perspectives.md#states)."""
    if state == "INIT":
        return ["CLARIFICATION_PENDING"]
    if state == "CLARIFICATION_PENDING":
        return ["CLARIFICATION_COMPLETE"]
    if state == "CLARIFICATION_COMPLETE":
        return [round_state(1, "A")]
    if state == "SYNTHESIS":
        return ["COMPLETE"]
    match = _ROUND.fullmatch(state)
    if match:
        n, agent = int(match.group(1)), match.group(2)
        if agent == "A":
            return [round_state(n, "B")]
        return [round_state(n + 1, "A")] if n < max_rounds else ["SYNTHESIS"]
    return []


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class RoundOutput(BaseModel):
    round: int
    agent: Literal["A", "B"]
    output: dict[str, Any]  # the agent's structured output
    text: str  # the same, as the text the next step is shown


class Summary(BaseModel):
    """Earlier output condensed because an assembled prompt would not fit the model's context."""

    step: str  # the state whose prompt needed it, e.g. SYNTHESIS
    covers: list[str]  # what it replaces, e.g. ["A1", "B1"]
    text: str
    reason: str


class Session(BaseModel):
    """The session record (docs/design/perspectives.md#session), plus the history, summaries and what ran it."""

    session_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    original_user_prompt: str
    clarification_questions: list[str] = Field(default_factory=list)
    clarification_answers: str = ""
    skipped_questions: list[int] = Field(default_factory=list)  # the 1-based numbers of the questions skipped
    merged_user_prompt: str = ""
    round_outputs: list[RoundOutput] = Field(default_factory=list)
    current_round: int = 0
    current_system_prompt: str = ""  # "A", "B", "SYNTHESIS" or "" between steps
    max_rounds: int = DEFAULT_ROUNDS
    state: str = "INIT"
    state_history: list[str] = Field(default_factory=lambda: ["INIT"])
    synthesis: dict[str, Any] | None = None
    summaries: list[Summary] = Field(default_factory=list)
    observability: bool = True
    calls: list[dict[str, Any]] = Field(default_factory=list)  # per model call: step, tokens, seconds
    # per step (INIT for the clarifier, ROUND_1_A..., SYNTHESIS): what its substance checks dropped, re-asked or
    # flagged (kept but marked for the reader), and how many calls it took
    quality: dict[str, AgentQuality] = Field(default_factory=dict)
    provider: str = ""
    error: str = ""
    cancelled: bool = False  # the user stopped the step in flight; resuming runs that step again
    created_at: str = Field(default_factory=_now)

    @field_serializer("quality")
    def _quality(self, quality: dict[str, AgentQuality]) -> dict[str, Any]:
        """Saved as the debates' quality record is: an item without text has no ``text`` key (never null)."""
        return {step: record.model_dump(mode="json", exclude_none=True) for step, record in quality.items()}

    def enter(self, state: str) -> None:
        allowed = allowed_next(self.state, self.max_rounds)
        if state not in allowed or (state == "CLARIFICATION_COMPLETE" and not self.merged_user_prompt):
            if self.state == "CLARIFICATION_PENDING":
                raise InvalidTransition("The clarification questions must be answered before the perspectives "
                                        "can start: the gate cannot be skipped.")
            raise InvalidTransition(f"A session in {self.state} cannot move to {state} "
                                    f"(next: {', '.join(allowed) or 'nothing, it is complete'}).")
        self.state = state
        self.state_history.append(state)
        match = _ROUND.fullmatch(state)
        if match:
            self.current_round, self.current_system_prompt = int(match.group(1)), match.group(2)
        else:
            self.current_system_prompt = "SYNTHESIS" if state == "SYNTHESIS" else ""

    def merge(self, answers: str | list[str], skipped: list[int] | tuple[int, ...] = ()) -> str:
        """Fix the merged prompt from the answers; refuses empty answers and a second merge. ``skipped``: the
        1-based numbers of the questions the person chose to skip (each is merged as skipped, never as an empty
        answer, so the later agents are told; with every question skipped the session goes on all the same)."""
        if self.merged_user_prompt:
            raise InvalidTransition("The merged prompt is fixed once the clarification is complete.")
        if self.state != "CLARIFICATION_PENDING":
            raise InvalidTransition(f"There are no clarification questions waiting for answers ({self.state}).")
        skips = self._skips(skipped)
        if isinstance(answers, list):
            text = self._listed(answers, skips)
        else:  # one text (the command line's --answers): its lines kept, control and bidi characters dropped
            text = "\n".join(line for line in map(clean, (answers or "").splitlines()) if line)
            if text and skips:
                text += "\n" + "\n".join(f"{n}. {SKIPPED}" for n in skips)
        if not text and skips:  # nothing typed, and questions skipped: the person passed the gate on purpose
            text = "\n".join(f"{n}. {SKIPPED}" for n in skips)
        if not text:
            raise InvalidTransition("Answer the clarification questions first: the perspectives start only once "
                                    "they are answered or skipped (the gate cannot be skipped).")
        if len(text) > MAX_ANSWERS:
            raise InputError(f"The answers are {len(text)} characters long; the limit is {MAX_ANSWERS}.")
        questions = "\n".join(f"{i}. {q}" for i, q in enumerate(self.clarification_questions, 1))
        self.clarification_answers, self.skipped_questions = text, skips
        self.merged_user_prompt = (f"{self.original_user_prompt}\n\nClarifying questions:\n{questions}\n\n"
                                   f"Answers:\n{text}")
        self.enter("CLARIFICATION_COMPLETE")
        return self.merged_user_prompt

    def _skips(self, skipped: list[int] | tuple[int, ...]) -> list[int]:
        count = len(self.clarification_questions)
        wrong = [n for n in skipped if not 1 <= n <= count]
        if wrong:
            raise InputError(f"There is no question {wrong[0]} to skip: this session has {count} clarifying "
                             f"question{'s' if count != 1 else ''}.")
        return sorted(set(skipped))

    @staticmethod
    def _listed(answers: list[str], skips: list[int]) -> str:
        """One line per question: its answer, or the note that it was skipped; a blank answer to a question not
        skipped is refused (unless all are blank and none skipped: the gate's own message)."""
        missing = [n for n in blank_answers(answers) if n not in skips]
        if missing and (skips or len(missing) < len(answers)):
            listed = ", ".join(map(str, missing))
            plural = len(missing) > 1
            raise InputError(f"Question{'s' if plural else ''} {listed} ha{'ve' if plural else 's'} no answer: "
                             "answer every question (“not sure” is an answer too) or skip it, so that none is "
                             "dropped from the merged prompt.")
        if missing:
            return ""
        return "\n".join(f"{i}. {SKIPPED if i in skips else clean(a)}" for i, a in enumerate(answers, 1))

    def checked(self, action: str) -> list[tuple[str, QualityItem]]:
        """``(step, item)`` for what the checks did with ``action`` ("flagged", "dropped"...), in step order."""
        return [(step, item) for step, record in self.quality.items() for item in record.items
                if item.action == action]

    def output(self, round_: int, agent: str) -> RoundOutput | None:
        return next((o for o in self.round_outputs if o.round == round_ and o.agent == agent), None)

    @property
    def finished(self) -> bool:
        return self.state == "COMPLETE"

    def status(self) -> str:
        """The store's status: paused while it waits for answers or after a cancel, failed, done or running."""
        if self.state == "COMPLETE":
            return "done"
        if self.error:
            return "failed"
        return "paused" if self.cancelled or self.state in ("INIT", "CLARIFICATION_PENDING") else "running"

    def file(self) -> dict[str, Any]:
        """What ``perspectives --out FILE`` writes."""
        data = self.model_dump(mode="json")
        keys = ("session_id", "state", "state_history", "original_user_prompt", "clarification_questions",
                "clarification_answers", "skipped_questions", "merged_user_prompt", "max_rounds", "round_outputs",
                "summaries", "synthesis", "quality", "provider", "error")
        # skipped_questions and quality only where there are some: a session saved before them exports as it did
        return {key: data[key] for key in keys if data[key] or key not in ("skipped_questions", "quality")}


def check_rounds(rounds: int) -> int:
    if not MIN_ROUNDS <= rounds <= MAX_ROUNDS:
        raise InputError(f"Rounds must be between {MIN_ROUNDS} and {MAX_ROUNDS} (got {rounds}).")
    return rounds
