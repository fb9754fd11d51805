"""Studies: their questions and arms, what each arm shows, their participants and answers (migration 0008).

The store keeps plain values and the rules its tables need: a known arm and stage, tokens of the right shape, one
answer per participant and stage, in order (``after`` needs ``before``, ``retest`` needs ``after``), and the arms
drawn one joining participant at a time (the study's row is locked, ``FOR UPDATE`` on PostgreSQL; SQLite writes one
at a time), so two participants joining at once cannot unbalance the arms. Which cell a participant gets is the
caller's policy (``pick``, :mod:`clearside.quality.study.assign`). What a person may write is the understanding
check's rules (:mod:`clearside.quality.understanding.answers`). No name is kept: a study's ``owner`` is the creating
browser's token, a participant is the hash of their link's secret.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from ..errors import InputError, NotFound
from ..inputs import shown
from .database import Database
from .privacy import scrub
from .records import iso, now
from .sources import sources_problem
from .tables import Study, StudyAnswer, StudyItem, StudyParticipant
from .understanding import ANY_OWNER, STAGES

ARMS = ("debate", "single", "sources")
NEEDS = {"before": None, "after": "before", "retest": "after"}  # the stage each stage follows
_TOKEN = re.compile(r"[0-9a-f]{32}")
Cell = tuple[int, str]  # (question number, arm)


@dataclass(frozen=True)
class StudyRow:
    id: str
    owner: str | None
    title: str
    spec: dict[str, Any]
    join_key: str
    created_at: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ItemRow:
    question: int
    arm: str
    debate_id: str | None
    sources: list[dict[str, Any]] | None


@dataclass(frozen=True)
class ParticipantRow:
    key: str
    study_id: str
    number: int
    question: int
    arm: str
    created_at: str


@dataclass(frozen=True)
class StudyAnswerRow:
    participant: str  # the participant's key
    number: int  # the participant's number in the order of joining
    question: int
    arm: str
    stage: str
    body: dict[str, Any]
    match: dict[str, Any] | None
    created_at: str


def _token(value: Any, what: str) -> str:
    if not isinstance(value, str) or not _TOKEN.fullmatch(value):
        raise NotFound(f"'{shown(value)}' is not a {what} (32 hex characters): check the link.",
                       dashboard=f"This link's {what} is not valid: check that it was copied whole.")
    return value


def _check_items(items: list[dict[str, Any]]) -> None:
    for item in items:
        if item.get("arm") not in ARMS or not isinstance(item.get("question"), int) or item["question"] < 1:
            raise InputError(f"A study item needs a question number from 1 and an arm among {', '.join(ARMS)}.")
        if item.get("sources") is not None and (problem := sources_problem(item["sources"])):
            raise InputError(f"Question {item['question']}'s sources cannot be stored: {problem[1]}.")


def _study(row: Study) -> StudyRow:
    return StudyRow(id=row.id, owner=row.owner, title=row.title, spec=copy.deepcopy(row.spec), join_key=row.invite,
                    created_at=iso(row.created_at))


def _participant(row: StudyParticipant) -> ParticipantRow:
    return ParticipantRow(key=row.token_hash, study_id=row.study_id, number=row.number, question=row.question,
                          arm=row.arm, created_at=iso(row.created_at))


def _answer(answer: StudyAnswer, who: StudyParticipant) -> StudyAnswerRow:
    return StudyAnswerRow(participant=who.token_hash, number=who.number, question=who.question, arm=who.arm,
                          stage=answer.stage, body=copy.deepcopy(answer.body), match=copy.deepcopy(answer.match),
                          created_at=iso(answer.created_at))


class Studies(Database):
    """The tables ``studies``, ``study_items``, ``study_participants`` and ``study_answers``."""

    def add_study(self, study_id: str, title: str, spec: dict[str, Any], items: list[dict[str, Any]], *,
                  owner: str | None, join_key: str) -> StudyRow:
        """Save a study and its items (``{"question", "arm", "sources"}``) in one transaction."""
        _token(study_id, "study id")
        _token(join_key, "join key")
        if owner is not None:
            _token(owner, "owner token")
        _check_items(items)
        with self.write() as session:
            row = Study(id=study_id, owner=owner, title=scrub(title), spec=scrub(spec), invite=join_key,
                        created_at=now())
            session.add(row)
            session.flush()
            for item in items:
                session.add(StudyItem(study_id=study_id, question=item["question"], arm=item["arm"], debate_id=None,
                                      sources=item.get("sources")))  # a source's text is kept verbatim (sources.py)
            return _study(row)

    def study(self, study_id: str) -> StudyRow:
        with self.read() as session:
            row = session.get(Study, _token(study_id, "study id"))
            if row is None:
                raise NotFound(f"No study has the id {study_id}. `python -m clearside study list` shows yours.",
                               dashboard="No study has this id: it may have been deleted. Check the link.")
            return _study(row)

    def studies(self, *, owner: str | None = ANY_OWNER) -> list[StudyRow]:
        """The studies, the newest first (only ``owner``'s unless ANY_OWNER; None: the command line's)."""
        with self.read() as session:
            query = select(Study).order_by(Study.created_at.desc(), Study.id)
            if owner != ANY_OWNER:
                query = query.where(Study.owner.is_(None) if owner is None else Study.owner == owner)
            return [_study(row) for row in session.scalars(query)]

    def study_items(self, study_id: str) -> list[ItemRow]:
        with self.read() as session:
            rows = session.scalars(select(StudyItem).where(StudyItem.study_id == study_id)
                                   .order_by(StudyItem.question, StudyItem.arm))
            return [ItemRow(question=r.question, arm=r.arm, debate_id=r.debate_id,
                            sources=copy.deepcopy(r.sources)) for r in rows]

    def set_study_item_debate(self, study_id: str, question: int, arm: str, debate_id: str) -> None:
        with self.write() as session:
            found = session.get(StudyItem, (study_id, question, arm))
            if found is None:
                raise NotFound(f"Study {study_id} has no arm {arm!r} for question {question}.")
            found.debate_id = debate_id

    def join_study(self, study_id: str, join_key: str, key: str,
                   pick: Callable[[dict[Cell, int]], Cell]) -> ParticipantRow:
        """A new participant (``key``: the hash of their secret) given the cell ``pick`` chooses from the counts of
        every cell so far; the study is locked meanwhile, so concurrent joins see each other's counts."""
        _token(key, "participant key")
        with self.write() as session:
            study = session.get(Study, _token(study_id, "study id"), with_for_update=True)
            if study is None or study.invite != join_key:
                raise NotFound("This participant link is not valid: no study has this id and key.",
                               dashboard="This participant link is not valid: ask the study's creator for the link.")
            counts: dict[Cell, int] = {(i.question, i.arm): 0 for i in session.scalars(
                select(StudyItem).where(StudyItem.study_id == study_id))}
            for question, arm, count in session.execute(
                    select(StudyParticipant.question, StudyParticipant.arm, func.count())
                    .where(StudyParticipant.study_id == study_id)
                    .group_by(StudyParticipant.question, StudyParticipant.arm)):
                counts[(question, arm)] = count
            question, arm = pick(counts)
            row = StudyParticipant(token_hash=key, study_id=study_id, number=sum(counts.values()) + 1,
                                   question=question, arm=arm, created_at=now())
            session.add(row)
            session.flush()
            return _participant(row)

    def participant(self, study_id: str, key: str) -> ParticipantRow:
        with self.read() as session:
            row = session.get(StudyParticipant, _token(key, "participant key"))
            if row is None or row.study_id != study_id:
                raise NotFound("No participant of this study has this link.",
                               dashboard="This participant link is not valid for this study: check that it was "
                                         "copied whole.")
            return _participant(row)

    def participants(self, study_id: str) -> list[ParticipantRow]:
        with self.read() as session:
            rows = session.scalars(select(StudyParticipant).where(StudyParticipant.study_id == study_id)
                                   .order_by(StudyParticipant.number))
            return [_participant(row) for row in rows]

    def add_study_answer(self, key: str, stage: str, body: dict[str, Any], *,
                         created_at: datetime | None = None) -> None:
        """Keep a participant's answer at ``stage``: once, after the stage it follows."""
        if stage not in STAGES or not isinstance(body, dict):
            raise InputError(f"A study answer needs a stage among {', '.join(STAGES)} and a body that is an object.")
        with self.write() as session:
            who = session.get(StudyParticipant, _token(key, "participant key"), with_for_update=True)
            if who is None:
                raise NotFound("No participant has this link.", dashboard="This participant link is not valid.")
            done = set(session.scalars(select(StudyAnswer.stage).where(StudyAnswer.respondent == key)))
            if stage in done:
                raise InputError(f"This participant already answered '{stage}'; an answer is kept as first given.",
                                 dashboard="You already gave this answer: it is saved.")
            if NEEDS[stage] and NEEDS[stage] not in done:
                raise InputError(f"'{stage}' comes after '{NEEDS[stage]}', which this participant has not answered.",
                                 dashboard=f"Answer the '{NEEDS[stage]}' questions first.")
            session.add(StudyAnswer(respondent=key, stage=stage, body=scrub(body), match=None,
                                    created_at=created_at or now()))

    def participant_answers(self, key: str) -> dict[str, dict[str, Any]]:
        """A participant's answers by stage (their body and when given), for their own page only."""
        with self.read() as session:
            rows = session.scalars(select(StudyAnswer).where(StudyAnswer.respondent == _token(key, "participant key")))
            return {r.stage: {"body": copy.deepcopy(r.body), "created_at": iso(r.created_at)} for r in rows}

    def study_answers(self, study_id: str) -> list[StudyAnswerRow]:
        """Every answer of the study, by participant number then stage order."""
        with self.read() as session:
            rows = session.execute(select(StudyAnswer, StudyParticipant)
                                   .join(StudyParticipant, StudyParticipant.token_hash == StudyAnswer.respondent)
                                   .where(StudyParticipant.study_id == study_id)).all()
            found = [_answer(answer, who) for answer, who in rows]
            return sorted(found, key=lambda r: (r.number, STAGES.index(r.stage)))

    def set_study_answer_match(self, key: str, stage: str, match: dict[str, Any]) -> None:
        with self.write() as session:
            found = session.get(StudyAnswer, (key, stage))
            if found is not None:
                found.match = scrub(match)

    def delete_study(self, study_id: str) -> None:
        """Delete a study with its items, participants and answers (its debates stay in the Library)."""
        with self.write() as session:
            row = session.get(Study, _token(study_id, "study id"))
            if row is None:
                raise NotFound(f"No study has the id {study_id}.")
            session.delete(row)
