"""The understanding check's records and figures: an answer saved and matched, a debate's summary in words, the
gains across debates (mean, 95 % interval, n) and the CSV of every answer.

A debate's figures use each stage's latest answer. The gain of a debate is a paired difference, after (or the
re-test) minus before, of the same person's answers to the same debate; across debates its mean gets the percentile
bootstrap interval of :func:`clearside.quality.paired.bootstrap_ci`. Nothing here grades a person: the numbers
count reasons that match the debate's arguments, nothing else.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from ...errors import InputError
from ...store import Store
from ...store.understanding import ANY_OWNER, STAGES, AnswerRow
from ..paired import bootstrap_ci
from .answers import LEANS, SIDES, STAGE_LABELS, Answer
from .match import MATCH_VERSION, counts, match

MEASURES = {"named_for": "reasons named for", "named_against": "reasons named against",
            "named_total": "reasons named, both sides", "hinges": "hinges named", "confidence": "confidence"}
COMPARISONS = (("after", "before"), ("retest", "before"))
CSV_FIELDS = ("debate_id", "question", "stage", "answer", "answered_at", "written_for", "written_against",
              "named_for", "named_against", "named_total", "hinges", "lean", "confidence", "reasons_for",
              "reasons_against", "hinges_named")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def record(store: Store, debate_id: str, answer: Answer, *, owner: str | None = None,
           created_at: Any = None) -> int:
    """Save an answer to the debate's check and match it when the debate has its document; returns its number.
    "after" and "retest" need a finished debate (one has read it)."""
    document = store.get(debate_id).document
    if answer.stage != "before" and document is None:
        raise InputError(f"Debate {debate_id} is not finished, so there is nothing read yet to answer "
                         f"'{answer.stage}' about: answer once its document is shown.",
                         dashboard="This debate is not finished yet: answer once you have read it.")
    number = store.add_answer(debate_id, answer.stage, answer.body(), owner=owner, created_at=created_at)
    if document is not None:
        store.set_answer_match(debate_id, number, match(answer, document))
    return number


def matched(store: Store, rows: list[AnswerRow]) -> list[AnswerRow]:
    """``rows`` with every answer of a finished debate matched (those not matched yet, or under an older matcher,
    are matched now and the match kept)."""
    documents: dict[str, dict[str, Any] | None] = {}
    out = []
    for row in rows:
        if row.match is None or row.match.get("version") != MATCH_VERSION:
            if row.debate_id not in documents:
                documents[row.debate_id] = store.get(row.debate_id).document
            if documents[row.debate_id] is not None:
                found = match(Answer.of(row.stage, row.body), documents[row.debate_id])
                store.set_answer_match(row.debate_id, row.number, found)
                row = AnswerRow(**{**row.as_dict(), "match": found})
        out.append(row)
    return out


def latest(rows: list[AnswerRow]) -> dict[str, AnswerRow]:
    """Each stage's latest answer among one debate's rows."""
    found: dict[str, AnswerRow] = {}
    for row in sorted(rows, key=lambda r: r.number):
        found[row.stage] = row
    return found


def figures(row: AnswerRow) -> dict[str, Any]:
    """One answer's numbers (None: not matched yet) with its lean and confidence."""
    answer = Answer.of(row.stage, row.body)
    return {**counts(answer, row.match), "lean": answer.lean, "confidence": answer.confidence}


def _phrase(by_stage: dict[str, dict[str, Any]], key: str) -> str:
    parts = [f"{value} {STAGE_LABELS[stage]}" for stage in STAGES if stage in by_stage
             and (value := by_stage[stage][key]) is not None]
    return ", ".join(parts) if parts else "not matched yet"


def sentence(by_stage: dict[str, dict[str, Any]]) -> str:
    """"Reasons you named for: 1 before, 3 after; against: 0 before, 4 after; hinges you named: 0 before, 2 after."""
    return (f"Reasons you named for: {_phrase(by_stage, 'named_for')}; against: {_phrase(by_stage, 'named_against')};"
            f" hinges you named: {_phrase(by_stage, 'hinges')}.")


def summary(store: Store, debate_id: str, *, owner: str | None = ANY_OWNER) -> dict[str, Any]:
    """A debate's check in numbers and words: each stage's latest answer, its figures and matches, the sentence."""
    rows = matched(store, store.answers(debate_id, owner=owner))
    last = latest(rows)
    by_stage = {stage: figures(row) for stage, row in last.items()}
    stages = {stage: {**by_stage[stage], "answered_at": row.created_at, "number": row.number, "body": row.body,
                      "match": row.match} for stage, row in last.items()}
    newest = next((last[s] for s in reversed(STAGES) if s in last and last[s].match), None)
    return {"debate_id": debate_id, "title": rows[0].title if rows else "", "answers": len(rows),
            "stages": {s: stages[s] for s in STAGES if s in stages},
            "sentence": sentence(by_stage) if rows else "No answers yet.",
            "hinges_named": list(newest.match["hinges"]) if newest else [],
            "leans": {s: LEANS.get(v["lean"]) for s, v in by_stage.items() if v["lean"] is not None}}


def gain(diffs: list[float]) -> dict[str, Any]:
    """The mean of paired differences, its 95 % bootstrap interval (None below 2 debates) and n."""
    if not diffs:
        return {"n": 0, "mean": None, "ci_low": None, "ci_high": None}
    low, high = bootstrap_ci(diffs) if len(diffs) > 1 else (None, None)
    return {"n": len(diffs), "mean": round(sum(diffs) / len(diffs), 3),
            "ci_low": None if low is None else round(low, 3), "ci_high": None if high is None else round(high, 3)}


def gains(store: Store, *, owner: str | None = ANY_OWNER) -> dict[str, Any]:
    """Across debates: for after and re-test each against before, every measure's gain (mean, interval, n), from
    the debates that have both answers (and, for confidence, both confidences)."""
    rows = matched(store, store.all_answers(owner=owner))
    debates: dict[str, list[AnswerRow]] = {}
    for row in rows:
        debates.setdefault(row.debate_id, []).append(row)
    per_debate = {debate_id: {s: figures(r) for s, r in latest(group).items()} for debate_id, group in debates.items()}
    result: dict[str, Any] = {"debates": len(debates), "answers": len(rows), "comparisons": {}}
    for later, earlier in COMPARISONS:
        table = {}
        for key, label in MEASURES.items():
            diffs = [float(f[later][key] - f[earlier][key]) for f in per_debate.values()
                     if later in f and earlier in f and f[later][key] is not None and f[earlier][key] is not None]
            table[key] = {"label": label, **gain(diffs)}
        result["comparisons"][f"{later}-{earlier}"] = table
    return result


def safe_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: one starting with = + - @ (or a tab or return) gets a leading
    apostrophe, so a reason such as ``=HYPERLINK(...)`` is never run as a formula (OWASP's CSV injection)."""
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return value


def csv_rows(store: Store, *, owner: str | None = ANY_OWNER) -> list[dict[str, Any]]:
    """One row per answer (debate and stage), the newest debate first; no name, no owner token."""
    out = []
    for row in matched(store, store.all_answers(owner=owner)):
        found = figures(row)
        out.append({"debate_id": row.debate_id, "question": row.title, "stage": row.stage, "answer": row.number,
                    "answered_at": row.created_at, **{k: found[k] for k in CSV_FIELDS if k in found},
                    **{f"reasons_{side}": " | ".join(row.body.get(f"reasons_{side}") or []) for side in SIDES},
                    "hinges_named": " | ".join((row.match or {}).get("hinges", []))})
    return out


def csv_text(rows: list[dict[str, Any]], fields: tuple[str, ...] = CSV_FIELDS) -> str:
    """The rows as CSV with these columns (RFC 4180 quoting, every text cell made safe for spreadsheets)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if row.get(key) is None else safe_cell(row[key]) for key in fields})
    return buffer.getvalue()
