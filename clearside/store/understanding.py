"""The understanding check's answers: rows of ``understanding_answers`` beside their debate.

The store keeps plain values and checks only what its table needs (a known stage, a body that is an object, an owner
token's shape); the rules for what a person may write are :mod:`clearside.quality.understanding.answers`'. Every
text is scrubbed of secrets. No name is kept: ``owner`` is the answering browser's token (clearside_ui/owner.py) or
None for the command line, and lists may be narrowed to one token, as the dashboard does.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..errors import InputError
from .database import Database
from .privacy import scrub
from .records import check_id, iso, now
from .tables import Debate, UnderstandingAnswer

STAGES = ("before", "after", "retest")
ANY_OWNER = "*"  # every answer, whoever gave it (the command line's lists)
_TOKEN = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class AnswerRow:
    """One saved answer, with its debate's title for lists."""

    debate_id: str
    number: int
    stage: str
    owner: str | None
    body: dict[str, Any]
    match: dict[str, Any] | None
    created_at: str
    title: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check(stage: str, body: Any, owner: str | None) -> None:
    if stage not in STAGES:
        raise InputError(f"Unknown stage {stage!r} of the understanding check: use {', '.join(STAGES)}.")
    if not isinstance(body, dict):
        raise InputError("An understanding answer's body must be an object (reasons, lean, confidence).")
    if owner is not None and not _TOKEN.fullmatch(owner):
        raise InputError("An understanding answer's owner must be a browser token (32 hex characters) or none.")


def _of(row: UnderstandingAnswer, title: str = "") -> AnswerRow:
    return AnswerRow(debate_id=row.debate_id, number=row.number, stage=row.stage, owner=row.owner,
                     body=copy.deepcopy(row.body), match=copy.deepcopy(row.match), created_at=iso(row.created_at),
                     title=title)


def _owned(query: Any, owner: str | None) -> Any:
    if owner == ANY_OWNER:
        return query
    return query.where(UnderstandingAnswer.owner.is_(None) if owner is None else UnderstandingAnswer.owner == owner)


class Understanding(Database):
    """The ``understanding_answers`` table."""

    def add_answer(self, debate_id: str, stage: str, body: dict[str, Any], *, owner: str | None = None,
                   created_at: datetime | None = None) -> int:
        """Save an answer to a debate's understanding check; returns its number (1 for the debate's first).
        ``created_at``: when it was given (a "before" answer typed before the debate was saved), else now."""
        _check(stage, body, owner)
        with self.write() as session:
            row = self.debate_row(session, debate_id, lock=True)  # numbers are taken one writer at a time
            last = session.scalar(select(func.max(UnderstandingAnswer.number))
                                  .where(UnderstandingAnswer.debate_id == row.id))
            number = (last or 0) + 1
            session.add(UnderstandingAnswer(debate_id=row.id, number=number, stage=stage, owner=owner,
                                            body=scrub(body), match=None, created_at=created_at or now()))
        return number

    def answers(self, debate_id: str, *, owner: str | None = ANY_OWNER) -> list[AnswerRow]:
        """A debate's answers, oldest first (only ``owner``'s unless ANY_OWNER; None: the command line's)."""
        with self.read() as session:
            row = self.debate_row(session, debate_id)
            query = _owned(select(UnderstandingAnswer).where(UnderstandingAnswer.debate_id == row.id), owner)
            return [_of(r, row.title) for r in session.scalars(query.order_by(UnderstandingAnswer.number))]

    def all_answers(self, *, owner: str | None = ANY_OWNER) -> list[AnswerRow]:
        """Every debate's answers (only ``owner``'s unless ANY_OWNER), the newest debate's first, each debate's
        answers in order."""
        with self.read() as session:
            query = _owned(select(UnderstandingAnswer, Debate.title, Debate.created_at)
                           .join(Debate, Debate.id == UnderstandingAnswer.debate_id), owner)
            rows = session.execute(query.order_by(Debate.created_at.desc(), Debate.id,
                                                  UnderstandingAnswer.number)).all()
            return [_of(answer, title) for answer, title, _ in rows]

    def set_answer_match(self, debate_id: str, number: int, match: dict[str, Any]) -> None:
        """Keep how an answer's reasons matched the debate's arguments (worked out once, read by every list)."""
        if not isinstance(match, dict):
            raise InputError("An understanding answer's match must be an object.")
        with self.write() as session:
            found = session.get(UnderstandingAnswer, (check_id(debate_id), int(number)))
            if found is not None:  # deleted meanwhile with its debate: nothing to keep
                found.match = scrub(match)


    def restore_answers(self, debate_id: str, entries: Iterable[dict[str, Any]]) -> int:
        """Add the answers an export file carried to the debate just imported from it, in one transaction."""
        with self.write() as session:
            return restore_answers(session, self.debate_row(session, debate_id).id, entries)


def restore_answers(session: Session, debate_id: str, entries: Iterable[dict[str, Any]]) -> int:
    """Add answers read from an export file to ``debate_id`` in the caller's transaction, numbered 1, 2, ... in the
    file's order, without an owner (a token names a browser of the store that exported them); returns how many."""
    count = 0
    for count, entry in enumerate(entries, start=1):
        _check(entry["stage"], entry["body"], None)
        if not isinstance(entry["created_at"], datetime):
            raise InputError(f"Understanding answer {count}'s created_at is not a datetime.")
        session.add(UnderstandingAnswer(debate_id=debate_id, number=count, stage=entry["stage"], owner=None,
                                        body=scrub(entry["body"]), match=None, created_at=entry["created_at"]))
    return count
