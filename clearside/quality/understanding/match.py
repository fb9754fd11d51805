"""A person's reasons matched against a debate's arguments and decision hinges, with the metrics' own matcher.

The key-point coverage of the metrics (:func:`clearside.quality.metrics.semantic.coverage`) counts a reference's key
point as made when a claim says it: centred cosine >= ``MATCH_CENTRED`` (0.105) *and* raw cosine >= ``MATCH_RAW``
(0.5) on MiniLM, calibrated on ArgKP (docs/design/requirements.md#calibration). Here the person's reasons take the
key points' place and the debate's claims the claims': a reason "for" is named when it matches a claim of the case
FOR (and likewise against). The topic direction removed before the centred cosine is the mean of the debate's
claims, both sides (a person's one or two reasons would be their own mean). A hinge is named when any reason, of
either side, sits at raw cosine >= ``HINGE`` (0.5) of it, as :func:`~clearside.quality.metrics.semantic.hinges`
decides that a debate raised a reference hinge.

The match is approximate: a reason in other words may be missed, and a near one counted. A reason that matches
nothing is not wrong, only not among this debate's arguments.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import embed
from ..metrics.semantic import HINGE, MATCH_CENTRED, MATCH_RAW
from .answers import SIDES, Answer

# raise it whenever the matching changes: answers matched under another version are matched again
MATCH_VERSION = "1"
DOC_SIDES = {"for": "pro", "against": "con"}


def arguments(document: dict[str, Any]) -> dict[str, list[str]]:
    """The debate's claims per side and its decision hinges, as the matcher reads them."""
    found = {side: [a["claim"] for a in (document.get(part) or {}).get("arguments", [])]
             for side, part in DOC_SIDES.items()}
    found["hinges"] = list((document.get("moderator") or {}).get("decision_hinges", []))
    return found


def _side(reasons: list[str], claims: list[str], vectors: dict[str, np.ndarray], mean: np.ndarray) -> list[dict]:
    if not reasons or not claims:
        return []
    r, c = np.stack([vectors[t] for t in reasons]), np.stack([vectors[t] for t in claims])
    raw = r @ c.T
    cent = embed.centred(r, mean) @ embed.centred(c, mean).T
    hit = (cent >= MATCH_CENTRED) & (raw >= MATCH_RAW)
    return [{"reason": reason, "argument": claims[int(np.argmax(np.where(hit[i], cent[i], -9)))]}
            for i, reason in enumerate(reasons) if hit[i].any()]


def _hinges(said: list[str], hinges: list[str], vectors: dict[str, np.ndarray]) -> list[str]:
    if not said or not hinges:
        return []
    sims = np.stack([vectors[t] for t in hinges]) @ np.stack([vectors[t] for t in said]).T
    return [hinge for hinge, row in zip(hinges, sims, strict=True) if row.max() >= HINGE]


def match(answer: Answer, document: dict[str, Any]) -> dict[str, Any]:
    """Which of the answer's reasons name the debate's arguments, side by side, and which hinges they name:
    ``{"for": [{"reason", "argument"}...], "against": [...], "hinges": [...], "unmatched": [...], "version"}``."""
    found = arguments(document)
    said = [*answer.reasons_for, *answer.reasons_against]
    texts = list(dict.fromkeys([*found["for"], *found["against"], *found["hinges"], *said]))
    vectors = dict(zip(texts, embed.encode(texts), strict=True)) if texts else {}
    claims = found["for"] + found["against"]
    mean = np.stack([vectors[t] for t in claims]).mean(axis=0) if claims else np.zeros(384, dtype=np.float32)
    result: dict[str, Any] = {side: _side(answer.reasons(side), found[side], vectors, mean) for side in SIDES}
    result["hinges"] = _hinges(said, found["hinges"], vectors)
    named = {m["reason"] for side in SIDES for m in result[side]}
    result["unmatched"] = [reason for reason in said if reason not in named]
    result["version"] = MATCH_VERSION
    return result


def counts(answer: Answer, matched: dict[str, Any] | None) -> dict[str, int | None]:
    """The numbers of one answer: reasons written and named per side, hinges named (None: not matched yet)."""
    row: dict[str, int | None] = {f"written_{side}": len(answer.reasons(side)) for side in SIDES}
    for side in SIDES:
        row[f"named_{side}"] = len(matched[side]) if matched else None
    row["hinges"] = len(matched["hinges"]) if matched else None
    row["named_total"] = None if not matched else len(matched["for"]) + len(matched["against"])
    return row
