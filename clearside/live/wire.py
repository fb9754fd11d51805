"""Wire schemas for live turns: the structured fields each phase needs, then the speech.

``speech`` always comes last, so a hard cut at the token limit only shortens the
speech and the fields before it stay whole. The speech pattern keeps JSON
punctuation out of the text (small models otherwise leak braces into it).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..agents import ARGUMENT_WIRE, CLAIM, LONG, MODERATOR_WIRE, SENTENCE
from ..schema import CATEGORY_VALUES
from ..wire import array, obj, one_of, string
from .protocol import ROUNDS, Step

# The pattern repeats minLength: grammar backends (llama.cpp, Ollama) compile a pattern and ignore minLength.
SPEECH = {"type": "string", "minLength": 20, "pattern": r'^[A-Z0-9][^"\\{}\[\]<>\x00-\x1f]{19,}$'}
EVIDENCE_RESPONSE = string(LONG, 10)
ANSWER_WIRE = obj(answer=string(300, 10))
CLARIFICATION_WIRE = obj(clarification=string(300, 10))


class TurnFields(BaseModel):
    """A validated turn reply: its speech plus whatever fields its wire schema demanded."""

    model_config = ConfigDict(extra="allow")
    speech: str = Field(min_length=1, pattern=r"[^ \t\n\r\f\v]")


class Answer(BaseModel):
    answer: str = Field(min_length=1, pattern=r"[^ \t\n\r\f\v]")


class Clarification(BaseModel):
    clarification: str = Field(min_length=1, pattern=r"[^ \t\n\r\f\v]")


def _argument(round_number: int) -> dict[str, Any]:
    categories = ROUNDS.get(round_number, CATEGORY_VALUES)
    properties = dict(ARGUMENT_WIRE["properties"])
    properties["category"] = one_of(categories)
    properties["assumptions"] = array(string(), 1, 2)
    return obj(**properties)


def turn_schema(step: Step, *, evidence: bool = False, questions: int = 2,
                moderator: dict[str, Any] | None = None, quote: dict[str, Any] | None = None) -> dict[str, Any]:
    """The wire schema for one planned turn; ``evidence`` adds the acknowledgement field, ``quote`` (a citation's
    schema: ``clearside.live.evidence.Quoting``) the quote of the user's source file before it.

    ``moderator``: the synthesis fields' schema (``agents.moderator_wire``: conflicts chosen by assumption id)."""
    if step.kind == "opening":
        fields = {"position": string(LONG), "previews": array(string(CLAIM), 2, 3),
                  "assumptions": array(string(), 2, 3)}
    elif step.kind == "constructive":
        fields = {"arguments": array(_argument(step.round), 1, 2), "uncertainties": array(string(), 1, 2)}
    elif step.kind == "question":
        count = 1 if step.round == 2 else 2
        fields = {"questions": array(string(LONG, 10), count, count)}
    elif step.kind == "answer":
        fields = {"answers": array(string(LONG, 10), questions, questions)}
    elif step.kind == "rebuttal":
        fields = {"rebuttals": array(obj(target=string(CLAIM), response=string(LONG)), 1, 2)}
    elif step.kind == "closing":
        fields = {"summary": array(string(), 2, 3), "disagreements": array(string(), 1, 2),
                  "decision_hinges": array(string(SENTENCE), 1, 3)}
    elif step.kind == "synthesis":
        fields = dict((moderator or MODERATOR_WIRE)["properties"])
    else:
        raise ValueError(f"unknown turn kind {step.kind!r}")
    if quote is not None:
        fields["evidence_quote"] = quote
    if evidence:
        fields["evidence_response"] = EVIDENCE_RESPONSE
    return obj(**fields, speech=SPEECH)
