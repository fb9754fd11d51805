"""The API's request and response bodies (pydantic): what OpenAPI describes beside the schema's own ``Document``.

String fields carry a generous length cap here (a body is refused whole past it, 422); the exact rules (a question
of at most 500 characters after cleaning, context fields of 120, a challenge target of 500) are the core's
(:mod:`clearside.inputs`), applied when the work is made, with the command line's messages (400).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..inputs import MAX_CONTEXT_FIELD, MAX_QUESTION, MAX_TARGET
from ..schema import Weights

Text = str
Strategy = Literal["whole", "focused", "single"]
Action = Literal["question_assumption", "stronger_counterargument", "evidence_that_changes_outcome",
                 "question_source"]
Speaker = Literal["pro", "con", "moderator"]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _text(limit: int, description: str, default: Any = ...) -> Any:
    return Field(default, max_length=4 * limit, description=f"{description} (at most {limit} characters)")


class Context(Body):
    geography: str | None = _text(MAX_CONTEXT_FIELD, "where the question applies", None)
    timeframe: str | None = _text(MAX_CONTEXT_FIELD, "when it applies", None)
    domain: str | None = _text(MAX_CONTEXT_FIELD, "its field", None)


class NewDebate(Context):
    """A static debate: FOR, AGAINST and the moderator's map of the disagreement."""

    question: str = _text(MAX_QUESTION, "the question or proposition to debate")
    personas: list[str] | None = Field(None, max_length=4, description="2 to 4 personas instead of FOR and AGAINST: "
                                       "built-in names (economist, ethicist...) or your own as 'Name: lens'")
    strategy: Strategy | None = Field(None, description="whole, focused or single (default: the provider's)")
    temperature: float = Field(0.4, ge=0, le=2)
    retries: int = Field(2, ge=0, le=5, description="re-asks after an invalid output")


class NewChallenge(Body):
    action: Action
    target: str = _text(MAX_TARGET, "an assumption, claim, hinge, a citation's passage id, or free text")
    temperature: float = Field(0.4, ge=0, le=2)


class NewRemap(Body):
    """The synthesis rerun under your value weights and assumption stances, saved as the debate's next version."""

    weights: Weights | None = Field(None, description="0 to 3 per category (unset: 1)")
    accept: list[str] = Field(default_factory=list, max_length=20, description="assumptions you accept (id or text)")
    reject: list[str] = Field(default_factory=list, max_length=20, description="assumptions you reject")
    unsure: list[str] = Field(default_factory=list, max_length=20, description="assumptions you are unsure of")
    whole: bool = Field(False, description="rewrite every section of the synthesis")
    temperature: float = Field(0.4, ge=0, le=2)
    retries: int = Field(2, ge=0, le=5)


class NewLive(Context):
    """A six-phase live debate (docs/design/live-protocol.md), steered while it runs."""

    question: str = _text(MAX_QUESTION, "the question or proposition to debate")
    words_per_minute: int | None = Field(None, ge=60, le=400, description="pace that turns time into token budgets")
    step_mode: bool = Field(False, description="run one turn at a time: POST .../step for each")
    temperature: float = Field(0.4, ge=0, le=2)
    retries: int = Field(2, ge=0, le=5)


class Pause(Body):
    question: str | None = _text(MAX_QUESTION, "a question the targeted agent answers while paused", None)
    to: Speaker | None = None


class NewIntervention(Body):
    type: Literal["pause_question", "clarification", "inject_evidence", "direct_question"]
    text: str = _text(MAX_QUESTION, "what you say")
    to: Speaker | None = None


class NewSession(Body):
    """A perspectives session: clarifying questions, then rounds of two perspectives and a synthesis."""

    question: str = Field(..., max_length=8000, description="the situation (its limit is the core's)")
    rounds: int = Field(4, ge=1, le=5)
    temperature: float = Field(0.7, ge=0, le=2)
    retries: int = Field(2, ge=0, le=5)


class Answers(Body):
    answers: list[str] = Field(..., max_length=20, description="one answer per clarifying question, in order; "
                                                               "an empty one skips its question")
    skip: list[int] = Field(default_factory=list, max_length=20, description="question numbers skipped (1-based)")


class Links(BaseModel):
    self: str
    events: str
    document: str | None = None
    export: str | None = None


class Accepted(BaseModel):
    """Work queued on the runtime: follow ``links.events``, read ``links.self``."""

    id: str
    kind: str
    status: str
    job: str | None = None
    links: Links


class DebateState(BaseModel):
    """A saved debate's state: its job's while under way, else the store's."""

    id: str
    kind: str
    status: str
    title: str
    question: str
    created_at: str
    updated_at: str
    error: str = ""
    job: str | None = None
    sections: list[str] = Field(default_factory=list, description="a static debate's finished sections")
    missing: list[str] | None = Field(None, description="what a partial debate lacks")
    turns: int | None = Field(None, description="a live debate's finished turns")
    links: Links


class DebateList(BaseModel):
    items: list[DebateState]
    total: int
    limit: int
    offset: int


class JobState(BaseModel):
    """A challenge's or a re-map's job."""

    id: str
    debate: str
    kind: str
    status: str
    error: str = ""
    version: int | None = Field(None, description="a finished re-map: the version it was saved as")
    challenge: int | None = Field(None, description="a finished challenge: its number among the debate's")
    links: Links


class Version(BaseModel):
    number: int
    kind: str
    label: str
    provider: str
    model: str
    created_at: str
