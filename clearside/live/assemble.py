"""A finished live debate as a schema-v1 document: pro/con from the constructive turns, moderator from the synthesis."""

from __future__ import annotations

from typing import Any

from .. import prompts
from ..contract import overall_confidence, utc_stamp, validate_document
from ..schema import ACTIONS, SCHEMA_VERSION, Document, Side
from .transcript import Transcript

_ARGUMENT_KEYS = ("category", "claim", "explanation", "evidence_type", "confidence")


def _unique(items: list[str], limit: int) -> list[str]:
    seen, kept = set(), []
    for item in items:
        key = " ".join(item.casefold().split())
        if item.strip() and key not in seen:
            seen.add(key)
            kept.append(item.strip())
    return kept[:limit]


def side_from_turns(transcript: Transcript, speaker: str) -> Side:
    turns = [t for t in transcript.turns if t.speaker == speaker]
    opening = next((t.fields for t in turns if t.kind == "opening"), {})
    arguments, seen = [], set()
    for turn in turns:
        if turn.kind != "constructive":
            continue
        for argument in turn.fields.get("arguments", []):
            key = " ".join(argument["claim"].casefold().split())
            if key not in seen:
                seen.add(key)
                arguments.append({k: argument[k] for k in _ARGUMENT_KEYS})
    assumptions = list(opening.get("assumptions", []))
    uncertainties: list[str] = []
    for turn in turns:
        if turn.kind == "constructive":
            for argument in turn.fields.get("arguments", []):
                assumptions += argument.get("assumptions", [])
            uncertainties += turn.fields.get("uncertainties", [])
    summary = _unique([opening.get("position", ""), *opening.get("previews", []),
                       *(a["claim"] for a in arguments)], 5)
    return Side.model_validate({"executive_summary": summary, "arguments": arguments,
                                "assumptions": _unique(assumptions, 10), "uncertainties": _unique(uncertainties, 8)})


def _citations(transcript: Transcript) -> str:
    """What the notes say of citations: none requested, or the verified quotes of injected evidence files."""
    quotes = sum(1 for t in transcript.turns if isinstance(t.fields.get("evidence_quote"), dict))
    if not quotes:
        return "No citations requested."
    return (f"{quotes} verified quote{'s' if quotes != 1 else ''} of evidence files the user injected, on the "
            "transcript's turns (not carried into these arguments).")


def to_document(transcript: Transcript) -> Document:
    """Raises InputError if a needed turn is missing; every finished debate has them all."""
    synthesis = next(t for t in transcript.turns if t.kind == "synthesis")
    moderator_keys = ("areas_of_agreement", "core_disagreements", "assumption_conflicts", "evidence_gaps",
                      "decision_hinges")
    pro, con = side_from_turns(transcript, "pro"), side_from_turns(transcript, "con")
    versions = ", ".join(f"{k} {v}" for k, v in transcript.prompt_versions.items())
    data: dict[str, Any] = {
        "meta": {"schema_version": SCHEMA_VERSION, "generated_at": utc_stamp(),
                 "model_info": {"provider": transcript.provider, "model": transcript.model},
                 "confidence_level": overall_confidence(pro, con),
                 "notes": f"Assembled from live debate {transcript.id} ({len(transcript.turns)} turns). "
                          f"Prompt versions: {versions or prompts.load('live').version}. {_citations(transcript)}"},
        "proposition": transcript.proposition,
        "pro": pro.dump(), "con": con.dump(),
        "moderator": {k: synthesis.fields[k] for k in moderator_keys},
        "challenges": {"available_actions": list(ACTIONS), "responses": []},
    }
    return validate_document(data)
