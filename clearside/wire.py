"""Builders for the JSON Schemas agents fill ("wire" schemas): bounded strings, enums, arrays, objects.

Wire schemas are what a provider constrains decoding with and what a reply is first
validated against; they are tighter than the contract models (lengths, counts).
``x-`` keys carry hints for providers that can use them and are stripped for others.
"""

from __future__ import annotations

from typing import Any


def string(limit: int = 150, low: int = 8, *, statement: bool = False, words: bool = False,
           neutral: bool = False) -> dict[str, Any]:
    """A bounded string; ``statement``: a claim, never a question (constrained decoders leave out "?");
    ``words``: a short label made of words, never a bare number (a topic, unlike a timeframe's "2030");
    ``neutral``: a moderator's, never opening by addressing the user or speaking for someone ("You should ...")."""
    schema = {"type": "string", "minLength": low, "maxLength": limit}
    if neutral:
        schema["x-neutral"] = True
    if statement:
        schema["x-statement"] = True
    if words:
        schema["x-words"] = True
    return schema


def one_of(values: tuple[str, ...] | list[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def array(items: dict[str, Any], low: int, high: int) -> dict[str, Any]:
    return {"type": "array", "items": items, "minItems": low, "maxItems": high}


def obj(**properties: dict[str, Any]) -> dict[str, Any]:
    """An object with exactly these properties, all required."""
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}
