"""Moderator checks: traceable assumption conflicts, no junk, no verdict, hinges that are open questions.

An assumption conflict pairs an assumption the FOR side listed with one the AGAINST
side listed. ClearSide's own moderator picks them by index (so the pairing is
traceable by construction); this check holds any document to the same rule, with
the listed text matched after folding case, articles and punctuation.
"""

from __future__ import annotations

from typing import Any

from .. import neutrality
from . import text as t
from .base import LEXICAL_ONLY, Embeddings, Finding
from .sides import duplicates, echoes

FLOORS = {"areas_of_agreement": 1, "core_disagreements": 1, "assumption_conflicts": 1, "evidence_gaps": 1,
          "decision_hinges": 1}
STATEMENTS = ("areas_of_agreement", "evidence_gaps")


def listed(text: str, assumptions: list[str]) -> bool:
    return t.folded(text) in {t.folded(a) for a in assumptions}


def _items(data: dict[str, Any]):
    """Every moderator string: (path, text, is a short label)."""
    for field in ("areas_of_agreement", "evidence_gaps", "decision_hinges"):
        for i, item in enumerate(data.get(field, [])):
            yield (field, i), item, False
    for i, item in enumerate(data.get("core_disagreements", [])):
        for key in ("topic", "description", "root_cause"):
            if item.get(key):
                yield ("core_disagreements", i, key), item[key], key != "description"
    for i, item in enumerate(data.get("assumption_conflicts", [])):
        if item.get("conflict_description"):
            yield ("assumption_conflicts", i, "conflict_description"), item["conflict_description"], False


def check(data: dict[str, Any], *, pro: dict[str, Any], con: dict[str, Any], question: str,
          embeddings: Embeddings = LEXICAL_ONLY) -> list[Finding]:
    findings: list[Finding] = []
    pairs = set()
    for i, conflict in enumerate(data.get("assumption_conflicts", [])):
        for side, body, label in (("pro", pro, "FOR"), ("con", con, "AGAINST")):
            value = conflict.get(f"{side}_assumption", "")
            if not listed(value, body.get("assumptions", [])):
                findings.append(Finding("untraceable_conflict", ("assumption_conflicts", i, f"{side}_assumption"),
                                        f"assumption conflict {i + 1} cites {value!r}, which the {label} side did "
                                        "not list: choose one of its listed assumptions", value))
        pair = (t.folded(conflict.get("pro_assumption", "")), t.folded(conflict.get("con_assumption", "")))
        if pair in pairs:
            findings.append(Finding("duplicate_conflict", ("assumption_conflicts", i),
                                    f"assumption conflict {i + 1} repeats an earlier pair", conflict.get(
                                        "conflict_description")))
        pairs.add(pair)
    for path, item, short in _items(data):
        problem = t.label_problem(item) if short else t.statement_problem(item)
        where = "/".join(map(str, path))
        if problem:  # a bad root cause or conflict description goes alone; a bad topic or description takes its item
            findings.append(Finding("junk", path, f"{where} {problem}", item,
                                    optional=path[-1] in ("root_cause", "conflict_description")))
        elif hits := neutrality.violations(item):
            findings.append(Finding("verdict", path, f"{where} takes a side ({hits[0].phrase!r}): describe the "
                                    "disagreement without a verdict or recommendation", item,
                                    optional=path[-1] in ("root_cause", "conflict_description")))
    hinges = list(data.get("decision_hinges", []))
    sims = embeddings.similarities(hinges, [question]) if question else None
    for i, hinge in enumerate(hinges):
        if not t.is_open_question(hinge):
            findings.append(Finding("hinge_not_question", ("decision_hinges", i),
                                    f"decision hinge {i + 1} is not an open question: phrase it as a question", hinge))
        elif echoes(hinge, [question], sims, i):
            findings.append(Finding("hinge_restates_question", ("decision_hinges", i),
                                    f"decision hinge {i + 1} restates the proposition: name what the decision "
                                    "turns on instead", hinge))
    for field in ("areas_of_agreement", "evidence_gaps", "decision_hinges"):
        for a, b in duplicates(list(data.get(field, [])), embeddings):
            findings.append(Finding("duplicate_item", (field, b), f"{field} item {b + 1} repeats item {a + 1}",
                                    data[field][b]))
    return findings

