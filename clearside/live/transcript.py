"""The live transcript: turns, interventions and flags, saved to the store after every change.

A transcript is the whole truth about a live debate. The store saves it turn by
turn (``clearside.store.LiveWriter``), so a crash loses at most the turn in flight
and ``LiveDebate.resume`` continues from ``cursor``. :func:`load` reads a transcript
exported as a JSON file.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError
from ..inputs import read_json

TRANSCRIPT_VERSION = "1.1.0"  # 1.1: evidence may carry a source file (optional fields only)
INTERVENTION_TYPES = ("pause_question", "clarification", "inject_evidence", "direct_question")
InterventionType = Literal["pause_question", "clarification", "inject_evidence", "direct_question"]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class Turn(_Model):
    turn: int  # 1-based; interventions refer to these numbers
    step: int | None = None  # index in the protocol plan; None for an inline clarification
    phase: str
    kind: str
    speaker: str
    label: str
    text: str
    fields: dict[str, Any] = Field(default_factory=dict)
    budget_tokens: int = 0
    used_tokens: int = 0
    truncated: bool = False
    flags: list[dict[str, Any]] = Field(default_factory=list)
    regenerated: int = 0
    notes: list[str] = Field(default_factory=list)
    sees: list[int] = Field(default_factory=list)  # every turn number the agent had been shown by then
    prompt: str = ""  # the message this turn's agent got (its conversation is rebuilt from these)
    reply: str = ""  # the agent's accepted reply, verbatim
    rejected: list[dict[str, str]] = Field(default_factory=list)  # a guardrail-rejected reply and the complaint
    fresh: bool = False  # the agent's conversation was restarted here from digests (it had grown too long)
    evidence: list[int] = Field(default_factory=list)  # intervention ids delivered in this turn
    paused_at: int | None = None  # characters of speech kept from before a pause
    started_at: str = ""
    finished_at: str = ""
    seconds: float = 0.0
    first_token_seconds: float = 0.0
    completion_tokens: int = 0


class EvidenceSource(_Model):
    """A file the user injected as evidence, read within the limits of :mod:`clearside.sources`: what the turns
    that acknowledge it are offered passages of, and quote. ``text`` is the text read from the file (a PDF's
    pages separated by a form feed); ``ref`` its label among the debate's injected files (S1, S2, ...)."""

    ref: str
    name: str
    sha256: str  # of the file's bytes as attached
    kind: Literal["text", "markdown", "html", "pdf", "csv"]
    pages: int | None = None
    size: int
    text: str


class Intervention(_Model):
    id: int
    type: InterventionType
    text: str
    to: Literal["pro", "con", "moderator"] | None = None
    at: str
    after_turn: int  # the last finished turn when it was made (0: before the first turn)
    status: Literal["queued", "answered", "delivered", "failed"] = "queued"
    response: str | None = None
    answered_by: str | None = None
    answered_in_turn: int | None = None
    delivered_to: list[int] = Field(default_factory=list)
    error: str | None = None
    source: EvidenceSource | None = None  # inject_evidence only: a file whose passages the agents quote


class Partial(_Model):
    """A turn halted by a pause: the speech said so far, kept verbatim for the resume."""

    step: int
    speech: str
    raw: str
    at: str


class Transcript(_Model):
    version: str = TRANSCRIPT_VERSION
    id: str
    created_at: str
    updated_at: str
    question: str
    context: dict[str, str] = Field(default_factory=dict)
    proposition: dict[str, Any] | None = None
    source_debate: str | None = None
    provider: str
    model: str
    config: dict[str, Any] = Field(default_factory=dict)
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    state: Literal["running", "paused", "done", "failed"] = "running"
    cursor: int = 0  # the next planned step
    partial: Partial | None = None
    turns: list[Turn] = Field(default_factory=list)
    interventions: list[Intervention] = Field(default_factory=list)
    document: dict[str, Any] | None = None
    error: str = ""

    def turn(self, number: int) -> Turn:
        return self.turns[number - 1]

    def planned(self, step: int) -> Turn | None:
        return next((t for t in self.turns if t.step == step), None)


def parse(data: Any, source: str = "the transcript") -> Transcript:
    try:
        return Transcript.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'/'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:6])
        raise InputError(f"{source} is not a ClearSide live transcript: {problems}") from None


def load(path: str | Path) -> Transcript:
    """A transcript from a JSON file (an export, or an older ClearSide's saved file)."""
    return parse(read_json(str(path), "the live transcript"), str(path))
