"""Moderator checks: traceable assumption conflicts, no junk, no verdict, hinges that are open questions.

An assumption conflict pairs an assumption the FOR side listed with one the AGAINST
side listed. ClearSide's own moderator picks them by index (so the pairing is
traceable by construction); this check holds any document to the same rule, with
the listed text matched after folding case, articles and punctuation.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from .. import neutrality
from . import substance
from . import text as t
from .base import LEXICAL_ONLY, QUESTION_FLOOR, Embeddings, Finding, garbage
from .sides import duplicates, echoes

FLOORS = {"areas_of_agreement": 1, "core_disagreements": 1, "assumption_conflicts": 1, "evidence_gaps": 1,
          "decision_hinges": 1}
STATEMENTS = ("areas_of_agreement", "evidence_gaps")
# Below this cosine to the question and to everything the two sides wrote (claims, assumptions, uncertainties), a
# moderator statement (an agreement, a description, an evidence gap, a hinge) is about another topic. Measured
# (docs/design/requirements.md#calibration): the flagship's statements reach 0.37 and up, the contract's example's
# 0.30 and up; health-care statements in the synthesis of a debate on a software rule 0.16-0.18 ("Will hospitals
# hire enough nurses to shorten waiting times?"). Short labels (a topic, a root cause) are not judged: one or two
# words embed too loosely ("Cost", "Values"), and a disagreement's description carries its topic.
OFF_TOPIC = 0.24
_OPTIONAL = ("root_cause", "conflict_description")
# An assumption's id the moderator picks by ("P1", "C2") opening one of its sentences: "C2- This case argues ...";
# a reader does not know the ids, and the sentence reads whole without it
_ID_PREFIX = re.compile(r"^\s*[PC]\d{1,2}\s*(?:[-–—:,.)]\s*|\s+(?=[A-Z]))")


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
    findings += _strings(data, pro, con, question, embeddings)
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



def _strings(data: dict[str, Any], pro: dict[str, Any], con: dict[str, Any], question: str,
             embeddings: Embeddings) -> list[Finding]:
    """Every moderator string: no garbage (codes, number runs, a cut sentence, nothing said), no junk, no verdict,
    and about the debate (with embeddings)."""
    findings: list[Finding] = []
    strings = list(_items(data))
    anchors = [question, *(a.get("claim", "") for side in (pro, con) for a in side.get("arguments", [])),
               *(item for side in (pro, con) for field in ("assumptions", "uncertainties")
                 for item in side.get(field, []))]
    sims = embeddings.similarities([item for _, item, _ in strings], [a for a in anchors if a])
    for row, (path, item, short) in enumerate(strings):
        where = "/".join(map(str, path))
        optional = path[-1] in _OPTIONAL  # a bad root cause or conflict description goes alone
        if path[0] == "decision_hinges" and substance.generic(item):  # "What are your thoughts?"
            findings.append(Finding("generic_question", path, f"{where} asks nothing specific: ask what the decision "
                                    "turns on (a fact, a value or an event)", item))
            continue
        if (bare := _ID_PREFIX.sub("", item, count=1)) != item and len(re.findall(r"[A-Za-z]{2,}", bare)) >= 2:
            findings.append(Finding("id_prefix", path, f"{where} opens with an assumption's id: write about its "
                                    "content", item, "replace", bare[0].upper() + bare[1:]))
            continue  # the rest is checked as it reads once the id is gone
        # a hinge stays a question: a cut one is not shortened; a label is judged as a label, not a sentence
        found = garbage(path, where, item, whole=not short and path[0] != "decision_hinges")
        problem = t.label_problem(item) if short else t.statement_problem(item)
        if found:
            findings.append(dataclasses.replace(found, optional=optional))
        elif problem:  # a bad topic or description takes its item
            findings.append(Finding("junk", path, f"{where} {problem}", item, optional=optional))
        elif (hits := neutrality.violations(item)) and short and (question := neutrality.open_question(item)):
            findings.append(Finding("verdict", path, f"{where} took a side ({hits[0].phrase!r}): kept as the open "
                                    "question it names", item, "replace", question, optional=optional))
        elif hits:
            findings.append(Finding("verdict", path, f"{where} takes a side ({hits[0].phrase!r}): describe the "
                                    "disagreement without a verdict or recommendation", item, optional=optional))
        elif sims is not None and not short and (  # a conflict description is tied to the debate by its pair
                path[-1] != "conflict_description" and float(sims[row].max()) < OFF_TOPIC
                or question and float(sims[row, 0]) < QUESTION_FLOOR):
            findings.append(Finding("off_topic", path, f"{where} is not about this debate's proposition or "
                                    "either side's case", item, optional=optional))
    return findings
