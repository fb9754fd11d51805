"""Perspectives agents: their wire schemas, output models, prompts and how one output reads to the next.

Clarifier (Prompt 0): questions only. A (expansion) and B (compression) each report their
"scanner" findings as structured flags (a pattern, where it appears, the words that show it),
never as labels about people. Information flow (docs/design/perspectives.md#information-flow): A₁ sees the merged
prompt, Bₙ sees Aₙ, Aₙ₊₁ sees Bₙ; the synthesis sees the whole exchange (or summaries where it would not fit).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .. import prompts
from ..wire import array, obj, one_of, string

A_PATTERNS = ("dominance", "control", "invalidation", "confrontational_certainty")
B_PATTERNS = ("victim_framing", "guilt", "testing", "dependence", "intuition_only")
WHERE = ("situation", "other_perspective")


def _flags(patterns: tuple[str, ...]) -> dict[str, Any]:
    return array(obj(pattern=one_of(patterns), where=one_of(WHERE), evidence=string(150)), 0, 3)


CLARIFY_WIRE = obj(questions=array(string(150), 2, 4))
EXPANSION_WIRE = obj(
    emotional_reality=string(300), interpretations=array(string(180), 3, 5), actions=array(string(150), 3, 5),
    script_brief=string(200), script_extended=string(400), boundary=string(200), flags=_flags(A_PATTERNS))
COMPRESSION_WIRE = obj(
    best_interpretation=string(300), known_facts=array(string(150), 1, 4), assumptions=array(string(150), 1, 4),
    checklist=obj(boundary=string(180), insecurity=string(180), values_mismatch=string(180)),
    boundary=string(200), script_brief=string(200), script_extended=string(400),
    next_steps=array(obj(**{"if": string(150), "then": string(150)}), 2, 4), flags=_flags(B_PATTERNS))
SYNTHESIS_WIRE = obj(
    debate_evolution=string(500), conclusions=array(string(200), 2, 4), next_steps=array(string(180), 2, 4),
    open_questions=array(string(180), 1, 3), framing=string(300))
SUMMARY_WIRE = obj(summary=string(900, 20))


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Flag(_Out):
    pattern: str
    where: Literal["situation", "other_perspective"]
    evidence: str = Field(min_length=1)


class AFlag(Flag):
    pattern: Literal["dominance", "control", "invalidation", "confrontational_certainty"]


class BFlag(Flag):
    pattern: Literal["victim_framing", "guilt", "testing", "dependence", "intuition_only"]


class Clarification(_Out):
    questions: list[str] = Field(min_length=1)


class Expansion(_Out):
    emotional_reality: str
    interpretations: list[str] = Field(min_length=1)
    actions: list[str] = Field(min_length=1)
    script_brief: str
    script_extended: str
    boundary: str
    flags: list[AFlag] = Field(default_factory=list)


class Checklist(_Out):
    boundary: str
    insecurity: str
    values_mismatch: str


class Step(_Out):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    if_: str = Field(alias="if")
    then: str


class Compression(_Out):
    best_interpretation: str
    known_facts: list[str] = Field(min_length=1)
    assumptions: list[str] = Field(min_length=1)
    checklist: Checklist
    boundary: str
    script_brief: str
    script_extended: str
    next_steps: list[Step] = Field(min_length=1)
    flags: list[BFlag] = Field(default_factory=list)


class Synthesis(_Out):
    debate_evolution: str
    conclusions: list[str] = Field(min_length=1)
    next_steps: list[str] = Field(min_length=1)
    open_questions: list[str] = Field(min_length=1)
    framing: str


class Condensed(_Out):
    summary: str


# name: (prompt task, output model, wire schema, max tokens)
AGENTS: dict[str, tuple[str, type[BaseModel], dict[str, Any], int]] = {
    "clarifier": ("clarify", Clarification, CLARIFY_WIRE, 220),
    "A": ("expansion", Expansion, EXPANSION_WIRE, 900),
    "B": ("compression", Compression, COMPRESSION_WIRE, 1200),  # its wire allows about 4,300 characters
    "synthesis": ("synthesis", Synthesis, SYNTHESIS_WIRE, 800),
    "summarizer": ("summarize", Condensed, SUMMARY_WIRE, 400),
}


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True)


def messages(agent: str, **variables: str) -> list[dict[str, str]]:
    task = AGENTS[agent][0]
    text = prompts.render(prompts.load("perspectives").tasks[task], preamble=prompts.preamble(), **variables)
    return [{"role": "user", "content": text}]


def clarify_messages(question: str) -> list[dict[str, str]]:
    return messages("clarifier", question=prompts.quote(question))


def expansion_messages(merged: str, previous_b: str | None, round_: int) -> list[dict[str, str]]:
    previous = (f"\nPERSPECTIVE B, ROUND {round_ - 1} (DATA): respond to it, keep what is valid in its critique "
                f"and say where it goes too far.\n{previous_b}\n") if previous_b else ""
    return messages("A", merged=prompts.quote(merged), previous=previous)


def compression_messages(merged: str, expansion: str, round_: int) -> list[dict[str, str]]:
    return messages("B", merged=prompts.quote(merged), expansion=expansion, round=str(round_))


def synthesis_messages(question: str, answers: str, transcript: str) -> list[dict[str, str]]:
    return messages("synthesis", question=prompts.quote(question), answers=prompts.quote(answers),
                    transcript=transcript)


def summarize_messages(label: str, text: str) -> list[dict[str, str]]:
    return messages("summarizer", label=label, text=text)


def _lines(title: str, items: list[str]) -> list[str]:
    return [f"{title}:", *[f"- {item}" for item in items]] if items else []


def _flag_lines(flags: list[dict[str, Any]]) -> list[str]:
    return _lines("Flags", [f"{f['pattern'].replace('_', ' ')} ({f['where'].replace('_', ' ')}): {f['evidence']}"
                            for f in flags])


def render(agent: str, output: dict[str, Any]) -> str:
    """One output as plain text: what the next step is shown, what the CLI prints, what gets summarized."""
    o = output
    if agent == "A":
        lines = [f"Emotional reality: {o['emotional_reality']}", *_lines("Interpretations", o["interpretations"]),
                 *_lines("Actions (gentle to firm)", o["actions"]), f"Brief script: {o['script_brief']}",
                 f"Extended script: {o['script_extended']}", f"Boundary: {o['boundary']}", *_flag_lines(o["flags"])]
    elif agent == "B":
        c = o["checklist"]
        lines = [f"Best-supported interpretation: {o['best_interpretation']}", *_lines("Known facts", o["known_facts"]),
                 *_lines("Assumptions", o["assumptions"]),
                 f"Checklist: boundary: {c['boundary']} | insecurity: {c['insecurity']} | "
                 f"values mismatch: {c['values_mismatch']}",
                 f"Boundary: {o['boundary']}", f"Brief script: {o['script_brief']}",
                 f"Extended script: {o['script_extended']}",
                 *_lines("Next steps", [f"If {s['if']}, then {s['then']}" for s in o["next_steps"]]),
                 *_flag_lines(o["flags"])]
    elif agent == "synthesis":
        lines = [f"How the perspectives evolved: {o['debate_evolution']}", *_lines("Conclusions", o["conclusions"]),
                 *_lines("Options", o["next_steps"]), *_lines("Open questions", o["open_questions"]), o["framing"]]
    else:
        lines = [str(o)]
    return "\n".join(lines)
