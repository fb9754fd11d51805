"""A study's results, for its creator only: per arm, the gain of each measure (after minus before, re-test minus
before: mean, 95 % interval, n), the difference between arms with its interval and d, the participants a given
effect needs, and the CSV of every answer.

A participant's reasons are matched, as the understanding check's are, against the question's arguments: the claims
and hinges of every document the study made for that question (the full debate's and the single pass's together),
so every arm is counted against the same list. Nothing here grades a person.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from ...errors import InputError
from ...store import Store
from ...store.studies import StudyAnswerRow, StudyRow
from ...store.understanding import ANY_OWNER
from ..understanding import report
from ..understanding.answers import SIDES, Answer
from ..understanding.match import MATCH_VERSION, counts, match
from ..understanding.report import COMPARISONS, gain
from .spec import ARM_LABELS
from .stats import difference, per_arm

MEASURES = {"named_for": "reasons named for", "named_against": "reasons named against",
            "named_total": "reasons named, both sides", "hinges": "hinges named"}
CSV_FIELDS = ("study_id", "participant", "question_number", "question", "arm", "stage", "answered_at",
              "written_for", "written_against", "named_for", "named_against", "named_total", "hinges", "lean",
              "confidence", "reasons_for", "reasons_against", "hinges_named")
REFUSED = "This study's results are visible only to the browser that created it."


def owned(store: Store, study_id: str, owner: str | None) -> StudyRow:
    """The study, if ``owner`` created it (ANY_OWNER: the command line, which reads the whole store); else refused,
    whatever the study holds."""
    study = store.study(study_id)
    if owner != ANY_OWNER and study.owner != owner:
        raise InputError(f"{REFUSED} Open it from that browser, or use `python -m clearside study results` on the "
                         "store.", dashboard=f"{REFUSED} Open it from that browser.")
    return study


def reference(store: Store, study_id: str, question: int) -> dict[str, Any]:
    """The question's arguments as one document for the matcher: every made document's claims and hinges."""
    pro, con, hinges = [], [], []
    for item in store.study_items(study_id):
        document = store.get(item.debate_id).document if item.question == question and item.debate_id else None
        if document is not None:
            pro += (document.get("pro") or {}).get("arguments", [])
            con += (document.get("con") or {}).get("arguments", [])
            hinges += (document.get("moderator") or {}).get("decision_hinges", [])
    return {"pro": {"arguments": pro}, "con": {"arguments": con}, "moderator": {"decision_hinges": hinges}}


def matched(store: Store, study_id: str, rows: list[StudyAnswerRow]) -> list[StudyAnswerRow]:
    """The rows with every answer matched (once; kept in the store)."""
    references: dict[int, dict[str, Any]] = {}
    out = []
    for row in rows:
        if row.match is None or row.match.get("version") != MATCH_VERSION:
            if row.question not in references:
                references[row.question] = reference(store, study_id, row.question)
            found = match(Answer.of(row.stage, row.body), references[row.question])
            store.set_study_answer_match(row.participant, row.stage, found)
            row = StudyAnswerRow(**{**row.__dict__, "match": found})
        out.append(row)
    return out


def _per_participant(rows: list[StudyAnswerRow]) -> dict[int, dict[str, Any]]:
    people: dict[int, dict[str, Any]] = {}
    for row in rows:
        person = people.setdefault(row.number, {"arm": row.arm, "question": row.question, "stages": {}})
        person["stages"][row.stage] = counts(Answer.of(row.stage, row.body), row.match)
    return people


def _gains(people: dict[int, dict[str, Any]], arm: str, later: str, key: str) -> list[float]:
    return [float(p["stages"][later][key] - p["stages"]["before"][key]) for p in people.values()
            if p["arm"] == arm and later in p["stages"] and "before" in p["stages"]]


def results(store: Store, study_id: str, *, owner: str | None = ANY_OWNER) -> dict[str, Any]:
    """The study's figures (see the module's docstring), refused to anyone but its creator."""
    study = owned(store, study_id, owner)
    arms = study.spec["arms"]
    people = _per_participant(matched(store, study_id, store.study_answers(study_id)))
    joined = store.participants(study_id)
    out: dict[str, Any] = {"study_id": study.id, "title": study.title, "questions": study.spec["questions"],
                           "arms": {}, "differences": [], "participants": len(joined)}
    for arm in arms:
        answered = {s: sum(1 for p in people.values() if p["arm"] == arm and s in p["stages"])
                    for s in ("before", "after", "retest")}
        out["arms"][arm] = {"label": ARM_LABELS[arm], "joined": sum(1 for p in joined if p.arm == arm),
                            "answered": answered, "gains": {
                                f"{later}-{earlier}": {k: {"label": label, **gain(_gains(people, arm, later, k))}
                                                       for k, label in MEASURES.items()}
                                for later, earlier in COMPARISONS}}
    for first, second in combinations(arms, 2):
        for later, earlier in COMPARISONS:
            for key, label in MEASURES.items():
                found = difference(_gains(people, first, later, key), _gains(people, second, later, key))
                needed = per_arm(found["d"]) if found["d"] else None
                out["differences"].append({"a": first, "b": second, "comparison": f"{later}-{earlier}",
                                           "measure": key, "label": label, **found,
                                           "per_arm_needed": needed and needed["t"]})
    return out


def csv_rows(store: Store, study_id: str, *, owner: str | None = ANY_OWNER) -> list[dict[str, Any]]:
    """One row per answer: the participant's number (never their token), question, arm, stage and figures."""
    study = owned(store, study_id, owner)
    out = []
    for row in matched(store, study_id, store.study_answers(study_id)):
        answer = Answer.of(row.stage, row.body)
        out.append({"study_id": study.id, "participant": row.number, "question_number": row.question,
                    "question": study.spec["questions"][row.question - 1], "arm": row.arm, "stage": row.stage,
                    "answered_at": row.created_at, **counts(answer, row.match), "lean": answer.lean,
                    "confidence": answer.confidence,
                    **{f"reasons_{side}": " | ".join(answer.reasons(side)) for side in SIDES},
                    "hinges_named": " | ".join((row.match or {}).get("hinges", []))})
    return out


def csv_text(rows: list[dict[str, Any]]) -> str:
    """The rows as CSV (every text cell made safe for spreadsheets: no formula runs)."""
    return report.csv_text(rows, CSV_FIELDS)
