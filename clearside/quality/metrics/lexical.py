"""Metrics that need no embeddings: schema validity, moderator neutrality, balance, usage (M1, M9, M10:
docs/design/requirements.md#quality-measures)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ... import neutrality
from ...contract import jsonschema_errors
from ...schema import Document

EVIDENCE = ("fact", "projection", "analogy", "value_judgment")
CONFIDENCE = {"low": 0, "medium": 1, "high": 2}


def validity(data: Any) -> dict[str, Any]:
    """M1: the document against the exported JSON Schema and the pydantic contract."""
    if not isinstance(data, dict):
        return {"valid": False, "errors": ["(root): not a JSON object"]}
    errors = jsonschema_errors(data)
    if not errors:
        try:
            Document.model_validate(data)
        except ValueError as exc:
            errors = [str(exc)]
    return {"valid": not errors, "errors": errors}


def moderator_texts(moderator: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Every string the moderator wrote, with its field path, e.g. ``core_disagreements[1].description``.
    ``cruxes`` are not the moderator's: ClearSide composes them from the sides' own claims (:mod:`clearside.cruxes`)."""
    for key, value in moderator.items():
        if key == "cruxes":
            continue
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(item, str):
                yield f"{key}[{i}]", item
            elif isinstance(item, dict):
                for sub, text in item.items():
                    if isinstance(text, str):
                        yield f"{key}[{i}].{sub}", text


def words(text: str) -> int:
    return len(text.split())


def neutrality_metric(moderator: dict[str, Any]) -> dict[str, Any]:
    """M9: hard hits (verdict, recommendation) are violations, soft hits (certainty, dismissal) warnings.

    Speech attributed to a side and open questions are exempt (see ``clearside.neutrality``).
    """
    violations, warnings, total = [], [], 0
    for path, text in moderator_texts(moderator):
        total += words(text)
        for hit in neutrality.scan(text):
            (violations if hit.severity == "hard" else warnings).append({"field": path, **hit.as_dict()})
    certainty = sum(1 for w in warnings if w["kind"] == "certainty")
    return {
        "passed": not violations,
        "violations": violations,
        "warnings": warnings,
        "false_certainty": certainty,
        "words": total,
        "warnings_per_100_words": round(100 * len(warnings) / total, 2) if total else 0.0,
    }


def _ratio(a: float, b: float) -> float:
    return round(min(a, b) / max(a, b), 3) if max(a, b) > 0 else 1.0


def _js_divergence(p: dict[str, float], q: dict[str, float]) -> float:
    """Jensen-Shannon divergence in bits (0 = same mix, 1 = disjoint)."""
    def kl(a, b):
        return sum(a[k] * math.log2(a[k] / b[k]) for k in a if a[k] > 0)
    m = {k: (p[k] + q[k]) / 2 for k in p}
    return round(0.5 * kl(p, m) + 0.5 * kl(q, m), 3)


def _side_stats(side: dict[str, Any]) -> dict[str, Any]:
    args = side.get("arguments", [])
    counts = Counter(a.get("evidence_type") for a in args)
    n = len(args) or 1
    return {
        "arguments": len(args),
        "mean_words": round(sum(words(a["claim"]) + words(a["explanation"]) for a in args) / n, 1),
        "evidence_mix": {kind: round(counts.get(kind, 0) / n, 3) for kind in EVIDENCE},
        "mean_confidence": round(sum(CONFIDENCE.get(a.get("confidence"), 1) for a in args) / n, 3),
        "assumptions": len(side.get("assumptions", [])),
        "uncertainties": len(side.get("uncertainties", [])),
    }


def balance(pro: dict[str, Any], con: dict[str, Any]) -> dict[str, Any]:
    """M10: how evenly the two cases were made. Ratios are min/max (1 = even); divergences 0 = even."""
    p, c = _side_stats(pro), _side_stats(con)
    return {
        "pro": p,
        "con": c,
        "count_ratio": _ratio(p["arguments"], c["arguments"]),
        "length_ratio": _ratio(p["mean_words"], c["mean_words"]),
        "evidence_divergence": _js_divergence(p["evidence_mix"], c["evidence_mix"]),
        "confidence_gap": round(abs(p["mean_confidence"] - c["mean_confidence"]), 3),
        "assumption_ratio": _ratio(p["assumptions"], c["assumptions"]),
        "uncertainty_ratio": _ratio(p["uncertainties"], c["uncertainties"]),
    }


def usage(recorded: dict[str, Any] | None) -> dict[str, Any]:
    """Latency and tokens per agent, as the store records them for a generated debate."""
    if not recorded:
        return {"available": False, "reason": "no usage recorded: metrics of a saved debate (by id) include it"}
    agents = {name: {k: recorded[name].get(k, 0) for k in ("calls", "prompt_tokens", "completion_tokens", "seconds",
                                                            "first_token_seconds", "cached_prompt_tokens")}
              for name in recorded}  # a record saved before cached_prompt_tokens has 0 of them
    calls = sum(a["calls"] for a in agents.values())
    first = sum(a["first_token_seconds"] for a in agents.values())
    prompt = sum(a["prompt_tokens"] for a in agents.values())
    cached = sum(a["cached_prompt_tokens"] for a in agents.values())
    return {
        "available": True,
        "agents": agents,
        "seconds": round(sum(a["seconds"] for a in agents.values()), 2),
        "completion_tokens": sum(a["completion_tokens"] for a in agents.values()),
        "prompt_tokens": prompt,
        # of the prompt tokens, those the server reported taking from its prefix cache, and those it evaluated
        "cached_prompt_tokens": cached,
        "evaluated_prompt_tokens": prompt - cached,
        "calls": calls,
        # the mean wait for a call's first text (prompt evaluation, queueing; the server providers measure it)
        **({"first_token_seconds": round(first / calls, 3)} if first > 0 and calls else {}),
    }
