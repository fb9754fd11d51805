"""Embedding metrics (docs/design/requirements.md#quality-measures): relevance, diversity, assumptions, grounding,
coverage, stance.

Thresholds (docs/design/requirements.md#calibration) are measured for this exact model on ArgKP and PERSPECTRUM:
raw cosine >= 0.76 is a paraphrase (near-duplicate), a claim below 0.30 of its
proposition is off-topic, a key point is covered by an argument with centred
cosine >= 0.105 *and* raw >= 0.5. ``LINK`` (0.35) for "this assumption belongs
to these arguments" and ``HINGE`` (0.5) for "this hinge is among the
reference's" are ours, set on the flagship reference and documented on the same page.
Per-debate coverage is noisy (docs/design/requirements.md#calibration): compare systems on means over runs.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from ... import embed

DUPLICATE = 0.76
RELEVANT = 0.30
MATCH_CENTRED = 0.105
MATCH_RAW = 0.5
LINK = 0.35
HINGE = 0.5


class Texts:
    """Every text of one debate (and its reference) embedded in one batch."""

    def __init__(self, groups: dict[str, list[str]]) -> None:
        self.groups = groups
        flat = [text for texts in groups.values() for text in texts]
        vectors = embed.encode(flat)
        self.vectors: dict[str, np.ndarray] = {}
        start = 0
        for name, texts in groups.items():
            self.vectors[name] = vectors[start:start + len(texts)]
            start += len(texts)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.vectors[name]


def _r(x: float) -> float:
    return round(float(x), 3)


def relevance(texts: Texts, side: str) -> dict[str, Any]:
    """M4: raw cosine of each argument (claim and explanation) to the proposition; below 0.30 is off-topic."""
    sims = texts[f"{side}_arguments"] @ texts["proposition"][0]
    flagged = [{"claim": claim, "similarity": _r(s)}
               for claim, s in zip(texts.groups[f"{side}_claims"], sims, strict=True) if s < RELEVANT]
    return {"mean": _r(sims.mean()) if len(sims) else 0.0, "flagged": flagged,
            "flagged_fraction": _r(len(flagged) / len(sims)) if len(sims) else 0.0}


def _pairs(vectors: np.ndarray, labels: list[str], threshold: float) -> list[dict[str, Any]]:
    return [{"a": labels[i], "b": labels[j], "similarity": _r(vectors[i] @ vectors[j])}
            for i, j in combinations(range(len(labels)), 2) if vectors[i] @ vectors[j] >= threshold]


def vendi(vectors: np.ndarray) -> float:
    """Vendi score: the effective number of distinct items (1 = all the same, n = all orthogonal)."""
    if len(vectors) == 0:
        return 0.0
    eigen = np.linalg.eigvalsh(vectors @ vectors.T / len(vectors))
    eigen = eigen[eigen > 1e-10]
    return _r(np.exp(-(eigen * np.log(eigen)).sum()))


def diversity(texts: Texts, side: str) -> dict[str, Any]:
    """M6: mean pairwise distance between a side's claims, near-duplicate pairs (raw >= 0.76), Vendi score."""
    vectors, claims = texts[f"{side}_claims"], texts.groups[f"{side}_claims"]
    sims = [vectors[i] @ vectors[j] for i, j in combinations(range(len(claims)), 2)]
    return {
        "mean_distance": _r(1 - np.mean(sims)) if sims else 0.0,
        "max_similarity": _r(max(sims)) if sims else 0.0,
        "duplicates": _pairs(vectors, claims, DUPLICATE),
        "vendi": vendi(vectors),
        "items": len(claims),
    }


def cross_side_duplicates(texts: Texts) -> list[dict[str, Any]]:
    """The same claim made by both sides: a case that did not take its own stance."""
    sims = texts["pro_claims"] @ texts["con_claims"].T
    return [{"pro": texts.groups["pro_claims"][i], "con": texts.groups["con_claims"][j], "similarity": _r(sims[i, j])}
            for i, j in zip(*np.nonzero(sims >= DUPLICATE), strict=True)]


def assumptions(texts: Texts, side: str) -> dict[str, Any]:
    """M7: how many assumptions, linked to the side's own arguments, specific to the proposition, repeated."""
    vectors, items = texts[f"{side}_assumptions"], texts.groups[f"{side}_assumptions"]
    if not items:
        return {"count": 0, "linked": 0.0, "specific": 0.0, "duplicates": [], "unlinked": []}
    link = (vectors @ texts[f"{side}_arguments"].T).max(axis=1)
    specific = vectors @ texts["proposition"][0]
    return {
        "count": len(items),
        "linked": _r((link >= LINK).mean()),
        "specific": _r((specific >= RELEVANT).mean()),
        "duplicates": _pairs(vectors, items, DUPLICATE),
        "unlinked": [text for text, s in zip(items, link, strict=True) if s < LINK],
    }


def conflicts_two_sided(texts: Texts) -> dict[str, Any]:
    """M7, moderator: a conflict is two-sided when its pro and con assumptions each echo that side's text."""
    pro_side = np.vstack([texts["pro_assumptions"], texts["pro_arguments"]])
    con_side = np.vstack([texts["con_assumptions"], texts["con_arguments"]])
    pro_ok = (texts["conflict_pro"] @ pro_side.T).max(axis=1) >= LINK
    con_ok = (texts["conflict_con"] @ con_side.T).max(axis=1) >= LINK
    both = pro_ok & con_ok
    return {"rate": _r(both.mean()) if len(both) else 0.0, "items": len(both),
            "one_sided": [text for text, ok in zip(texts.groups["conflict_pro"], both, strict=True) if not ok]}


def grounding(texts: Texts) -> dict[str, Any]:
    """M8: each disagreement and hinge relates to both cases; lean = how much nearer the moderator sits to pro."""
    items, vectors = texts.groups["moderator_items"], texts["moderator_items"]
    to_pro = (vectors @ texts["pro_arguments"].T).max(axis=1)
    to_con = (vectors @ texts["con_arguments"].T).max(axis=1)
    two_sided = (to_pro >= RELEVANT) & (to_con >= RELEVANT)
    return {
        "two_sided": _r(two_sided.mean()) if len(items) else 0.0,
        "one_sided": [text for text, ok in zip(items, two_sided, strict=True) if not ok],
        "lean": _r((to_pro - to_con).mean()) if len(items) else 0.0,
    }


def _centre_mean(texts: Texts) -> np.ndarray:
    return np.vstack([texts["kp_pro"], texts["kp_con"]]).mean(axis=0)


def coverage(texts: Texts) -> dict[str, Any]:
    """M2/M3: reference key points each side's claims express; claims that match none of their side's points."""
    mean = _centre_mean(texts)
    result: dict[str, Any] = {}
    grounded = []
    for side in ("pro", "con"):
        points, claims = texts.groups[f"kp_{side}"], texts.groups[f"{side}_claims"]
        raw = texts[f"kp_{side}"] @ texts[f"{side}_claims"].T
        cent = embed.centred(texts[f"kp_{side}"], mean) @ embed.centred(texts[f"{side}_claims"], mean).T
        match = (cent >= MATCH_CENTRED) & (raw >= MATCH_RAW)
        covered = [{"point": point, "by": claims[int(np.argmax(np.where(match[i], cent[i], -9)))],
                    "centred": _r(cent[i][match[i]].max())} for i, point in enumerate(points) if match[i].any()]
        result[side] = {"coverage": _r(match.any(axis=1).mean()), "covered": covered,
                        "missed": [p for i, p in enumerate(points) if not match[i].any()]}
        grounded.extend(match.any(axis=0).tolist())
    result["mean"] = _r((result["pro"]["coverage"] + result["con"]["coverage"]) / 2)
    result["grounded"] = _r(np.mean(grounded)) if grounded else 0.0
    return result


def stance(texts: Texts) -> dict[str, Any]:
    """M5, side-swap test: the points of each side must sit nearer that side's claims than the other's."""
    mean = _centre_mean(texts)
    c = {name: embed.centred(texts[name], mean) for name in ("kp_pro", "kp_con", "pro_claims", "con_claims")}

    def mm(points: str, claims: str) -> float:
        return float((c[points] @ c[claims].T).max(axis=1).mean())

    ok = mm("kp_pro", "pro_claims") + mm("kp_con", "con_claims")
    swapped = mm("kp_pro", "con_claims") + mm("kp_con", "pro_claims")
    return {"passed": bool(ok > swapped), "margin": _r(ok - swapped), "own": _r(ok), "swapped": _r(swapped)}


def hinges(texts: Texts) -> dict[str, Any]:
    """Reference decision hinges the moderator raised (as a hinge or a disagreement), raw cosine >= 0.5."""
    sims = texts["ref_hinges"] @ texts["moderator_items"].T
    found = sims.max(axis=1) >= HINGE if sims.size else np.zeros(len(texts.groups["ref_hinges"]), bool)
    refs = texts.groups["ref_hinges"]
    return {"coverage": _r(found.mean()) if len(refs) else 0.0,
            "found": [h for h, ok in zip(refs, found, strict=True) if ok],
            "missed": [h for h, ok in zip(refs, found, strict=True) if not ok]}
