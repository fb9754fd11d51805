"""Saved debates of every kind: create, update, rename, delete, duplicate, read, search and facets."""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterable
from dataclasses import asdict
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import Select, delete, func, literal_column, or_, select, table
from sqlalchemy import column as named
from sqlalchemy.orm import Session

from ..errors import InputError, NotFound
from ..inputs import MAX_TITLE, clean, over_limit, visible
from .database import Database
from .privacy import scrub
from .records import (
    KINDS,
    SUMMARY_COLUMNS,
    ListQuery,
    NewDebate,
    Page,
    Record,
    Summary,
    check_id,
    document_text,
    new_id,
    now,
    search_text,
)
from .sources import drop_unheld_texts, held_texts
from .tables import (
    Challenge,
    Debate,
    DebateSource,
    DebateVersion,
    InterventionRow,
    LiveTurn,
    Run,
    Section,
    UnderstandingAnswer,
)

# the rows that belong to one debate (a source's text, in ``sources``, is shared: store/sources.py)
PARTS = (Section, Challenge, LiveTurn, InterventionRow, DebateVersion, DebateSource)


def owner_of(data: dict[str, Any] | None) -> str | None:
    """The ``owner`` column of a debate whose data is ``data`` (its ``data["owner"]``)."""
    owner = (data or {}).get("owner")
    return owner[:32] if isinstance(owner, str) and owner else None


def _day_start(day: date | datetime) -> datetime:
    if isinstance(day, datetime):
        return day if day.tzinfo else day.replace(tzinfo=UTC)
    return datetime.combine(day, time.min, tzinfo=UTC)


# A search word matches where it is part of the text (LIKE '%word%', literally), or, for a word of letters, where
# the text holds a form of it ("flags" finds "feature-flag service"): SQLite's FTS5 table of the search text with
# the porter stemmer, PostgreSQL's to_tsvector('english', ...) under a GIN index (migration 0011)
SEARCH_FTS = "debates_fts"  # SQLite: the FTS5 table (and its shadow tables, named after it)
SEARCH_INDEX = "ix_debates_search_fts"  # PostgreSQL: the GIN index of the stemmed search text
_ENGLISH = literal_column("'english'::regconfig")
_FTS = table(SEARCH_FTS, named("rowid"), named("search_text"))


def _word(word: str, dialect: str) -> Any:
    """Where one search word matches (see ``SEARCH_FTS``)."""
    pattern = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    matches = Debate.search_text.like(f"%{pattern}%", escape="\\")
    if not re.fullmatch(r"[^\W\d_]+", word):  # numbers and punctuation: taken literally
        return matches
    if dialect == "postgresql":
        stemmed = func.to_tsvector(_ENGLISH, Debate.search_text).op("@@")(func.plainto_tsquery(_ENGLISH, word))
    elif dialect == "sqlite":
        stemmed = literal_column("debates.rowid").in_(
            select(_FTS.c.rowid).where(_FTS.c.search_text.op("MATCH")(f'"{word}"')))
    else:
        return matches
    return or_(matches, stemmed)


def _matching(query: ListQuery, dialect: str = "") -> Select:
    """The summary columns of the debates ``query`` matches, unordered (``dialect``: the database's, for the
    search's word forms)."""
    if query.origin not in (None, "", "own", "runs"):
        raise InputError(f"Unknown origin {query.origin!r}: use own or runs.")
    matching = select(*SUMMARY_COLUMNS)
    if query.origin:
        made_by_runs = select(Run.debate_id).where(Run.debate_id.is_not(None))
        matching = matching.where(Debate.id.in_(made_by_runs) if query.origin == "runs"
                                  else Debate.id.not_in(made_by_runs))
    for word in query.search.lower().split():
        matching = matching.where(_word(word, dialect))
    for column, value in ((Debate.kind, query.kind), (Debate.provider, query.provider), (Debate.model, query.model),
                          (Debate.status, query.status), (Debate.owner, query.owner)):
        if value:
            matching = matching.where(column == value)
    if query.since is not None:
        matching = matching.where(Debate.created_at >= _day_start(query.since))
    if query.until is not None:
        until = query.until
        end = _day_start(until) + (timedelta(days=1) if not isinstance(until, datetime) else timedelta(0))
        matching = matching.where(Debate.created_at < end)
    return matching


class Debates(Database):
    """The ``debates`` table and everything that treats a debate as a whole, whatever its kind."""

    def create(self, debate: NewDebate, *, session: Session | None = None) -> str:
        """Save a new debate; returns its id. ``session``: write it in that transaction, else in one of its own."""
        if debate.kind not in KINDS:
            raise ValueError(f"unknown debate kind {debate.kind!r}")
        stamp = now()
        title = clean(debate.title or debate.question)  # a label: no control, bidi-override or zero-width characters
        question, document = debate.question, debate.document
        row = Debate(id=debate.debate_id or new_id(), kind=debate.kind, status=debate.status, title=scrub(title),
                     question=scrub(question), provider=debate.provider, model=scrub(debate.model),
                     prompt_versions=debate.prompt_versions or {}, schema_version=debate.schema_version,
                     document=scrub(document), data=scrub(debate.data or {}),
                     search_text=scrub(search_text(question, title, *document_text(document))),
                     parent_id=debate.parent_id, owner=owner_of(debate.data), created_at=debate.created_at or stamp,
                     updated_at=stamp)
        if session is not None:
            session.add(row)
        else:
            with self.write() as own:
                own.add(row)
        return row.id

    def update(self, debate_id: str, **changes: Any) -> None:
        """Set columns of a debate (status, document, data keys merged with ``data=``) and touch updated_at."""
        with self.write() as session:
            row = self.debate_row(session, debate_id)
            if "data" in changes:
                row.data = {**(row.data or {}), **scrub(changes.pop("data"))}
                row.owner = owner_of(row.data)
            for name, value in changes.items():
                setattr(row, name, scrub(value))
            if "document" in changes or "title" in changes:
                row.search_text = search_text(row.question, row.title, *document_text(row.document))
            row.updated_at = now()

    def rename(self, debate_id: str, title: str) -> None:
        title = clean(title or "")  # no control, bidi-override or zero-width characters
        if not visible(title):
            raise InputError("A debate's title cannot be empty.")
        if message := over_limit(title, MAX_TITLE, "The title"):
            raise InputError(message)
        self.update(debate_id, title=title)

    def delete(self, debate_id: str) -> None:
        """Remove a debate and all its parts (sections, challenges, turns, interventions, versions, sources, the
        understanding check's answers), and the texts of its sources that no other debate holds."""
        with self.write() as session:
            # the debate row first, as every writer takes it before its parts: a writer replacing a section
            # (debate row, then section) would otherwise deadlock with this delete (sections, then debate row)
            row = self.debate_row(session, debate_id, lock=True)
            texts = held_texts(session, row.id)
            for table in (*PARTS, UnderstandingAnswer):  # also where FKs are not enforced; answers are never copied
                session.execute(delete(table).where(table.debate_id == row.id))
            session.delete(row)
            session.flush()
            drop_unheld_texts(session, texts)

    def duplicate(self, debate_id: str, *, title: str | None = None, owner: str | None = None) -> str:
        """A full copy under a new id, every part included; the copy records where it came from. It belongs to
        ``owner`` (a browser's token), never to the original's owner."""
        with self.write() as session:
            row = self.debate_row(session, debate_id)
            data = {key: copy.deepcopy(value) for key, value in (row.data or {}).items() if key != "owner"}
            if owner:
                data["owner"] = owner
            copy_id = self.create(NewDebate(row.kind, row.question, provider=row.provider, model=row.model,
                                            title=title or f"Copy of {row.title}",
                                            prompt_versions=row.prompt_versions, data=data,
                                            document=copy.deepcopy(row.document), status=row.status,
                                            parent_id=row.id, schema_version=row.schema_version), session=session)
            for table in PARTS:
                for part in session.scalars(select(table).where(table.debate_id == row.id)):
                    values = {c.key: copy.deepcopy(getattr(part, c.key)) for c in table.__table__.columns}
                    session.add(table(**{**values, "debate_id": copy_id}))
        return copy_id

    # -- reading ------------------------------------------------------------------------------

    def get(self, debate_id: str) -> Record:
        """The debate in full; a static one's ``document`` carries every challenge response saved for it."""
        with self.read() as session:
            row = self.debate_row(session, debate_id)
            document = copy.deepcopy(row.document)
            if document is not None and row.kind == "static":
                responses = session.scalars(
                    select(Challenge.body).where(Challenge.debate_id == row.id).order_by(Challenge.seq)).all()
                document.setdefault("challenges", {})["responses"] = list(responses)
            return Record(**asdict(Summary.of(row)), prompt_versions=row.prompt_versions,
                          schema_version=row.schema_version, data=row.data, document=document)

    def jobs(self, debate_ids: Iterable[str]) -> dict[str, str]:
        """The runtime job each of these debates last had (``data["job"]``), in one query; a debate the runtime
        never ran is left out."""
        ids = list(dict.fromkeys(check_id(i) for i in debate_ids))
        if not ids:
            return {}
        with self.read() as session:
            rows = session.execute(select(Debate.id, Debate.data).where(Debate.id.in_(ids))).all()
        return {row.id: row.data["job"] for row in rows if isinstance(row.data, dict) and row.data.get("job")}

    def partial(self, debate_ids: Iterable[str]) -> dict[str, list[str]]:
        """The partial debates among these and what each lacks, in one query: ``data["missing"]`` as saved when a
        debate stopped with sections kept or finished without a part (see
        :func:`~clearside.store.records.missing_parts`); a whole debate is left out."""
        ids = list(dict.fromkeys(check_id(i) for i in debate_ids))
        if not ids:
            return {}
        with self.read() as session:
            rows = session.execute(select(Debate.id, Debate.data).where(Debate.id.in_(ids))).all()
        return {row.id: list(row.data["missing"]) for row in rows
                if isinstance(row.data, dict) and row.data.get("missing")}

    def stage_seconds(self, provider: str, model: str, *, limit: int = 20) -> list[dict[str, float]]:
        """The seconds each agent took in the last ``limit`` static debates this provider and model finished here
        (their saved usage), newest first: what a running debate's estimate is made from
        (:mod:`clearside.runtime.eta`). A debate finished in parts holds only its last part's agents."""
        query = (select(Debate.data).where(Debate.kind == "static", Debate.status == "done",
                                           Debate.provider == provider, Debate.model == model)
                 .order_by(Debate.updated_at.desc()).limit(limit))
        with self.read() as session:
            rows = session.scalars(query).all()
        return [{agent: float(used.get("seconds") or 0.0) for agent, used in data["usage"].items()
                 if isinstance(used, dict)} for data in rows if isinstance(data, dict) and data.get("usage")]

    def exists(self, debate_id: str) -> bool:
        try:
            debate_id = check_id(debate_id)
        except NotFound:
            return False
        with self.read() as session:
            return session.get(Debate, debate_id) is not None

    def list(self, query: ListQuery | str = "", /, **filters: Any) -> Page:
        """The page of saved debates ``query`` asks for (a :class:`ListQuery`, or its ``search`` words with
        ``filters`` naming its other fields), newest first. One query gives the page and the total (a window
        count), reading only the summary columns."""
        if isinstance(query, str):
            query = ListQuery(**{"search": query, **filters})
        elif filters:
            query = dataclasses.replace(query, **filters)
        matching = _matching(query, self.dialect)
        matches = matching.cte("matches")
        if query.search.split() and self.dialect == "postgresql":
            # Find the matches first (trigram index), then sort them: left to itself the planner may walk the
            # created_at index instead and test every row's text
            matches = matches.prefix_with("MATERIALIZED")
        page = (select(matches, func.count().over().label("total"))
                .order_by(matches.c.created_at.desc(), matches.c.id).limit(query.limit).offset(query.offset))
        with self.read() as session:
            rows = session.execute(page).all()
            total = rows[0].total if rows else (0 if query.offset == 0 else self._count(session, matching))
            return Page(items=[Summary.of(row) for row in rows], total=total)

    @staticmethod
    def _count(session: Session, query: Any) -> int:
        return session.scalar(select(func.count()).select_from(query.subquery())) or 0

    def facets(self) -> dict[str, list[str]]:
        """The providers and models present, for the library's filters."""
        with self.read() as session:
            pairs = session.execute(select(Debate.provider, Debate.model).distinct()).all()
        return {"provider": sorted({p for p, _ in pairs}), "model": sorted({m for _, m in pairs})}
