"""A participant's way through a study, from their link: join (a question and an arm drawn, balanced), answer
before reading, read the arm's material, answer after, and come back with the same link for the delayed re-test.
Where they are is read from the store each time, so closing the tab loses nothing: the link opens the next step.

Answers follow the understanding check's rules and limits (:func:`clearside.quality.understanding.answer`) and are
stored as data. A participant sees only their own question and material, never anyone's answers.
"""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from ...store import Store
from ...store.studies import ParticipantRow
from .. import understanding
from .assign import join as draw
from .assign import key_of
from .generate import status
from .spec import ARM_LABELS

STEPS = ("before", "after", "retest", "done")  # what the participant does next


def join(store: Store, study_id: str, join_key: str) -> tuple[str, ParticipantRow]:
    """A new participant (their token, for their own link, and their draw); refused while the study's documents
    are still being made, so nobody is drawn into an arm they would have to wait for."""
    if not status(store, study_id)["ready"]:
        raise InputError("This study's documents are still being prepared: open the link again in a few minutes.",
                         dashboard="This study is not open yet: its reading material is still being prepared. "
                                   "Open the link again in a few minutes.")
    return draw(store, study_id, join_key)


def material(store: Store, study_id: str, question: int, arm: str) -> dict[str, Any]:
    """What an arm shows for a question: ``{"kind": "document", "document"}`` or ``{"kind": "sources", "sources"}``."""
    item = next((i for i in store.study_items(study_id) if i.question == question and i.arm == arm), None)
    if item is None:
        raise InputError(f"Study {study_id} has no arm {arm!r} for question {question}.")
    if arm == "sources":
        return {"kind": "sources", "sources": [{"ref": s["ref"], "name": s["name"], "text": s["text"]}
                                               for s in item.sources or []]}
    document = store.get(item.debate_id).document if item.debate_id else None
    if document is None:
        raise InputError("This arm's document is not there any more (its debate was deleted): tell the study's "
                         "creator.", dashboard="This study's reading material is missing: tell the study's creator.")
    return {"kind": "document", "document": document}


def where(store: Store, study_id: str, token: str) -> dict[str, Any]:
    """The participant's step (``before``, ``after``, ``retest``, ``done``), question, arm and when they answered."""
    who = store.participant(study_id, key_of(token))
    study = store.study(study_id)
    given = store.participant_answers(who.key)
    step = next(s for s in STEPS if s == "done" or s not in given)
    return {"study_id": study_id, "title": study.title, "number": who.number, "question": who.question,
            "question_text": study.spec["questions"][who.question - 1], "arm": who.arm,
            "arm_label": ARM_LABELS[who.arm], "step": step,
            "answered": {stage: given[stage]["created_at"] for stage in STEPS if stage in given}}


def answer(store: Store, study_id: str, token: str, stage: str, reasons_for: Any = None,
           reasons_against: Any = None, *, lean: Any = None, confidence: Any = None) -> None:
    """Keep the participant's answer at ``stage`` (checked as the understanding check's; once per stage, in
    order)."""
    checked = understanding.answer(stage, reasons_for, reasons_against, lean_value=lean, confidence_value=confidence)
    who = store.participant(study_id, key_of(token))
    store.add_study_answer(who.key, checked.stage, checked.body())
