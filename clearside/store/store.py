"""The debate store: every saved debate, its parts, and the runs that compare models.

All writes are short transactions. A static debate is saved section by section as
its agents finish (``save_section``), so a crash keeps every finished section and
``load_run`` rebuilds the :class:`~clearside.engine.DebateRun` to resume from. Live
transcripts are saved turn by turn (``live_writer``). Every value written passes
through :func:`~clearside.store.privacy.scrub`, so API keys never reach the store.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from ..engine import SECTIONS, DebateRun
from ..errors import InputError, NotFound, StoreError
from ..inputs import MAX_TITLE, over_limit
from ..schema import SCHEMA_VERSION, AgentQuality, Context, Moderator, Proposition, Side
from .db import WRITE, database_url, make_engine, migrate, safe_url
from .privacy import scrub
from .tables import Challenge, Debate, InterventionRow, LiveTurn, Run, Section

KINDS = ("static", "live", "perspectives")
SEARCH_LIMIT = 20_000  # characters of a debate's text kept for search


def now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # SQLite hands back naive UTC
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_id() -> str:
    return uuid.uuid4().hex


def check_id(debate_id: str) -> str:
    debate_id = (debate_id or "").strip().lower()
    if len(debate_id) != 32 or any(c not in "0123456789abcdef" for c in debate_id):
        raise NotFound(f"{debate_id!r} is not a debate id (32 hex characters, as `python -m clearside list` shows).",
                       dashboard=f"{debate_id!r} is not a debate id: check the link, or find the debate in the "
                                 "Library.")
    return debate_id


def document_text(document: dict[str, Any] | None) -> list[str]:
    """The searchable text of a v1 document: proposition, claims, summaries, hinges."""
    if not document:
        return []
    texts = [document.get("proposition", {}).get("normalized_question", "")]
    for side in ("pro", "con"):
        part = document.get(side) or {}
        texts += part.get("executive_summary", [])
        texts += [f"{a.get('claim', '')} {a.get('explanation', '')}" for a in part.get("arguments", [])]
        texts += part.get("assumptions", [])
    texts += (document.get("moderator") or {}).get("decision_hinges", [])
    return texts


def search_text(*texts: str) -> str:
    return " ".join(" ".join(t.split()) for t in texts if t).lower()[:SEARCH_LIMIT]


SUMMARY_COLUMNS = (Debate.id, Debate.kind, Debate.status, Debate.title, Debate.question, Debate.provider,
                   Debate.model, Debate.created_at, Debate.updated_at, Debate.parent_id)


@dataclass(frozen=True)
class Summary:
    """One saved debate as a list shows it (no document)."""

    id: str
    kind: str
    status: str
    title: str
    question: str
    provider: str
    model: str
    created_at: str
    updated_at: str
    parent_id: str | None

    @classmethod
    def of(cls, row: Any) -> Summary:
        """From a ``Debate`` row or a result row holding the summary columns."""
        return cls(id=row.id, kind=row.kind, status=row.status, title=row.title, question=row.question,
                   provider=row.provider, model=row.model, created_at=iso(row.created_at),
                   updated_at=iso(row.updated_at), parent_id=row.parent_id)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Record(Summary):
    """One saved debate in full: its data (context, usage, live header) and assembled document."""

    prompt_versions: dict[str, Any] | None = None
    schema_version: str = SCHEMA_VERSION
    data: dict[str, Any] | None = None
    document: dict[str, Any] | None = None


@dataclass(frozen=True)
class Page:
    items: list[Summary]
    total: int


def _day_start(day: date | datetime) -> datetime:
    if isinstance(day, datetime):
        return day if day.tzinfo else day.replace(tzinfo=UTC)
    return datetime.combine(day, time.min, tzinfo=UTC)


class Store:
    """One database. ``Store()`` opens the default (``DATABASE_URL`` or the SQLite file) and migrates it."""

    def __init__(self, url: str | None = None) -> None:
        self.url = database_url(url)
        self.engine = make_engine(self.url)
        migrate(self.engine)
        self._reader = sessionmaker(self.engine, expire_on_commit=False)
        self._writer = sessionmaker(self.engine.execution_options(**{WRITE: True}), expire_on_commit=False)

    def __repr__(self) -> str:
        return f"Store({safe_url(self.url)!r})"

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One transaction: everything in the block is saved, or nothing is."""
        try:
            with self._writer.begin() as session:
                yield session
        except SQLAlchemyError as exc:
            raise StoreError(f"Could not save to the debate store ({safe_url(self.url)}): "
                             f"{str(exc).splitlines()[0]}. Nothing from this change was written; try again.") from None

    @contextmanager
    def read(self) -> Iterator[Session]:
        try:
            with self._reader() as session:
                yield session
        except SQLAlchemyError as exc:
            raise StoreError(f"Could not read the debate store ({safe_url(self.url)}): "
                             f"{str(exc).splitlines()[0]}.") from None

    @staticmethod
    def _row(session: Session, debate_id: str, *, lock: bool = False) -> Debate:
        """The debate row; ``lock`` holds it for this transaction (PostgreSQL ``FOR UPDATE``)."""
        row = session.get(Debate, check_id(debate_id), with_for_update=lock or None)
        if row is None:
            raise NotFound(f"No saved debate has the id {debate_id}. `python -m clearside list` shows the saved ones.",
                           dashboard=f"No saved debate has the id {debate_id}: it may have been deleted. The "
                                     "Library lists the saved ones.")
        return row

    # -- creating and updating ----------------------------------------------------------------

    def create(self, kind: str, question: str, *, provider: str, model: str, title: str = "",
               prompt_versions: dict[str, str] | None = None, data: dict[str, Any] | None = None,
               document: dict[str, Any] | None = None, status: str = "running", parent_id: str | None = None,
               schema_version: str = SCHEMA_VERSION, debate_id: str | None = None,
               created_at: datetime | None = None, session: Session | None = None) -> str:
        if kind not in KINDS:
            raise ValueError(f"unknown debate kind {kind!r}")
        stamp = now()
        title = " ".join((title or question).split())
        row = Debate(id=debate_id or new_id(), kind=kind, status=status, title=scrub(title), question=scrub(question),
                     provider=provider, model=scrub(model), prompt_versions=prompt_versions or {},
                     schema_version=schema_version, document=scrub(document), data=scrub(data or {}),
                     search_text=scrub(search_text(question, title, *document_text(document))), parent_id=parent_id,
                     created_at=created_at or stamp, updated_at=stamp)
        if session is not None:
            session.add(row)
        else:
            with self.write() as own:
                own.add(row)
        return row.id

    def update(self, debate_id: str, **changes: Any) -> None:
        """Set columns of a debate (status, document, data keys merged with ``data=``) and touch updated_at."""
        with self.write() as session:
            row = self._row(session, debate_id)
            if "data" in changes:
                row.data = {**(row.data or {}), **scrub(changes.pop("data"))}
            for name, value in changes.items():
                setattr(row, name, scrub(value))
            if "document" in changes or "title" in changes:
                row.search_text = search_text(row.question, row.title, *document_text(row.document))
            row.updated_at = now()

    def rename(self, debate_id: str, title: str) -> None:
        title = " ".join((title or "").split())
        if not title:
            raise InputError("A debate's title cannot be empty.")
        if message := over_limit(title, MAX_TITLE, "The title"):
            raise InputError(message)
        self.update(debate_id, title=title)

    def delete(self, debate_id: str) -> None:
        """Remove a debate and all its parts (sections, challenges, turns, interventions)."""
        with self.write() as session:
            row = self._row(session, debate_id)
            for table in (Section, Challenge, LiveTurn, InterventionRow):  # also where FKs are not enforced
                session.execute(delete(table).where(table.debate_id == row.id))
            session.delete(row)

    def duplicate(self, debate_id: str, *, title: str | None = None, owner: str | None = None) -> str:
        """A full copy under a new id, every part included; the copy records where it came from. It belongs to
        ``owner`` (a browser's token), never to the original's owner."""
        with self.write() as session:
            row = self._row(session, debate_id)
            data = {key: copy.deepcopy(value) for key, value in (row.data or {}).items() if key != "owner"}
            if owner:
                data["owner"] = owner
            copy_id = self.create(row.kind, row.question, provider=row.provider, model=row.model,
                                  title=title or f"Copy of {row.title}", prompt_versions=row.prompt_versions,
                                  data=data, document=copy.deepcopy(row.document), status=row.status,
                                  parent_id=row.id, schema_version=row.schema_version, session=session)
            for table in (Section, Challenge, LiveTurn, InterventionRow):
                for part in session.scalars(select(table).where(table.debate_id == row.id)):
                    values = {c.key: copy.deepcopy(getattr(part, c.key)) for c in table.__table__.columns}
                    session.add(table(**{**values, "debate_id": copy_id}))
        return copy_id

    # -- static debates -----------------------------------------------------------------------

    def save_section(self, debate_id: str, name: str, body: dict[str, Any]) -> None:
        """Write one finished section (proposition, pro, con or moderator), replacing an older one."""
        with self.write() as session:
            row = self._row(session, debate_id)
            section = session.get(Section, (row.id, name))
            if section is None:
                session.add(Section(debate_id=row.id, name=name, body=scrub(body), created_at=now()))
            else:
                section.body = scrub(body)
            row.updated_at = now()

    def start_static(self, run: DebateRun, *, provider: str, model: str, parent_id: str | None = None,
                     prompt_versions: dict[str, str] | None = None, data: dict[str, Any] | None = None,
                     debate_id: str | None = None) -> str:
        """Save a static debate before its agents run, with any sections ``run`` already has (``data``: more
        keys for its data, e.g. its owner token; ``debate_id``: the id to save it under, else a new one)."""
        data = {**(data or {}), "context": run.context.dump() if run.context else {}}
        with self.write() as session:
            debate_id = self.create("static", run.raw_input, provider=provider, model=model, data=data,
                                    prompt_versions=prompt_versions, parent_id=parent_id, session=session,
                                    debate_id=check_id(debate_id) if debate_id is not None else None)
            for name in SECTIONS:
                if getattr(run, name) is not None:
                    session.add(Section(debate_id=debate_id, name=name, body=scrub(getattr(run, name).dump()),
                                        created_at=now()))
        return debate_id

    def finish_static(self, debate_id: str, document: dict[str, Any], *, usage: dict[str, Any] | None = None,
                      violations: int = 0) -> None:
        """Store the finished document; its challenge responses become challenge rows."""
        with self.write() as session:
            row = self._row(session, debate_id)
            data = {**(row.data or {}), **({"usage": usage} if usage else {}), "violations": violations}
            data.pop("error", None)
            self._finish(session, row, document, data)

    def import_static(self, document: dict[str, Any], *, imported: dict[str, Any]) -> str:
        """Save a finished document read from a file, in one transaction."""
        info = document.get("meta", {}).get("model_info", {})
        with self.write() as session:
            debate_id = self.create("static", document["proposition"]["raw_input"], provider=info.get("provider", ""),
                                    model=info.get("model", ""), status="done", session=session)
            session.flush()
            self._finish(session, session.get(Debate, debate_id), document, {"imported": imported})
        return debate_id

    @staticmethod
    def _finish(session: Session, row: Debate, document: dict[str, Any], data: dict[str, Any]) -> None:
        document = copy.deepcopy(document)
        responses = document.setdefault("challenges", {}).get("responses", [])
        document["challenges"]["responses"] = []
        info = document.get("meta", {}).get("model_info", {})
        row.document, row.data = scrub(document), scrub(data)
        row.status, row.schema_version = "done", document.get("meta", {}).get("schema_version", SCHEMA_VERSION)
        row.search_text = search_text(row.question, row.title, *document_text(document))
        row.updated_at = now()
        for seq, response in enumerate(responses, start=1):
            session.add(Challenge(debate_id=row.id, seq=seq, body=scrub(response),
                                  provider=info.get("provider", row.provider), model=info.get("model", row.model),
                                  prompt_version="", created_at=now()))

    def load_run(self, debate_id: str) -> DebateRun:
        """The unfinished (or finished) static debate as a run the engine can complete."""
        record = self.get(debate_id)
        if record.kind != "static":
            raise InputError(f"Debate {debate_id} is a {record.kind} debate; resume it on its own page or command.")
        context = (record.data or {}).get("context") or None
        run = DebateRun(raw_input=record.question, context=Context(**context) if context else None)
        models = {"proposition": Proposition, "pro": Side, "con": Side, "moderator": Moderator}
        sections = self.sections(debate_id)
        for name, body in sections.items():
            if name in models:
                setattr(run, name, models[name].model_validate(body))
        # the quality record of the agents that finished (an agent that did not finish runs again, afresh)
        finished = {"orchestrator" if name == "proposition" else name for name in models if name in sections}
        run.quality = {agent: AgentQuality.model_validate(body)
                       for agent, body in sections.get("quality", {}).items() if agent in finished}
        return run

    def sections(self, debate_id: str) -> dict[str, dict[str, Any]]:
        with self.read() as session:
            row = self._row(session, debate_id)
            return {s.name: s.body for s in session.scalars(select(Section).where(Section.debate_id == row.id))}

    def add_challenge(self, debate_id: str, response: dict[str, Any], *, provider: str, model: str,
                      prompt_version: str) -> int:
        """Append one challenge response; returns its number (1-based)."""
        with self.write() as session:
            row = self._row(session, debate_id, lock=True)  # concurrent appends queue here
            last = session.scalar(select(func.max(Challenge.seq)).where(Challenge.debate_id == row.id)) or 0
            session.add(Challenge(debate_id=row.id, seq=last + 1, body=scrub(response), provider=provider,
                                  model=scrub(model), prompt_version=prompt_version, created_at=now()))
            row.updated_at = now()
            return last + 1

    def challenges(self, debate_id: str) -> list[dict[str, Any]]:
        with self.read() as session:
            row = self._row(session, debate_id)
            rows = session.scalars(select(Challenge).where(Challenge.debate_id == row.id).order_by(Challenge.seq))
            return [c.body for c in rows]

    # -- reading ------------------------------------------------------------------------------

    def get(self, debate_id: str) -> Record:
        """The debate in full; ``document`` carries every challenge response saved for it."""
        with self.read() as session:
            row = self._row(session, debate_id)
            document = copy.deepcopy(row.document)
            if document is not None and row.kind == "static":
                responses = session.scalars(
                    select(Challenge.body).where(Challenge.debate_id == row.id).order_by(Challenge.seq)).all()
                document.setdefault("challenges", {})["responses"] = list(responses)
            return Record(**asdict(Summary.of(row)), prompt_versions=row.prompt_versions,
                          schema_version=row.schema_version, data=row.data, document=document)

    def exists(self, debate_id: str) -> bool:
        try:
            debate_id = check_id(debate_id)
        except NotFound:
            return False
        with self.read() as session:
            return session.get(Debate, debate_id) is not None

    def list(self, search: str = "", *, kind: str | None = None, provider: str | None = None,
             model: str | None = None, since: date | datetime | None = None, until: date | datetime | None = None,
             status: str | None = None, origin: str | None = None, limit: int = 50, offset: int = 0) -> Page:
        """Newest first. ``search`` matches every word in the question, title, claims and hinges;
        ``until`` is inclusive of that whole day when given as a date; ``origin``: ``"own"`` for the debates
        people made, ``"runs"`` for those a comparison or regression run made (a ``runs`` row names them),
        None for all. One query gives the page and the total (a window count), reading only the summary columns."""
        if origin not in (None, "", "own", "runs"):
            raise InputError(f"Unknown origin {origin!r}: use own or runs.")
        query = select(*SUMMARY_COLUMNS)
        if origin:
            made_by_runs = select(Run.debate_id).where(Run.debate_id.is_not(None))
            query = query.where(Debate.id.in_(made_by_runs) if origin == "runs" else Debate.id.not_in(made_by_runs))
        words = search.lower().split()
        for word in words:
            pattern = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            query = query.where(Debate.search_text.like(f"%{pattern}%", escape="\\"))
        for column, value in ((Debate.kind, kind), (Debate.provider, provider), (Debate.model, model),
                              (Debate.status, status)):
            if value:
                query = query.where(column == value)
        if since is not None:
            query = query.where(Debate.created_at >= _day_start(since))
        if until is not None:
            end = _day_start(until) + (timedelta(days=1) if not isinstance(until, datetime) else timedelta(0))
            query = query.where(Debate.created_at < end)
        matches = query.cte("matches")
        if words and self.dialect == "postgresql":
            # Find the matches first (trigram index), then sort them: left to itself the planner may walk the
            # created_at index instead and test every row's text
            matches = matches.prefix_with("MATERIALIZED")
        page = (select(matches, func.count().over().label("total"))
                .order_by(matches.c.created_at.desc(), matches.c.id).limit(limit).offset(offset))
        with self.read() as session:
            rows = session.execute(page).all()
            total = rows[0].total if rows else (0 if offset == 0 else self._count(session, query))
            return Page(items=[Summary.of(row) for row in rows], total=total)

    @staticmethod
    def _count(session: Session, query: Any) -> int:
        return session.scalar(select(func.count()).select_from(query.subquery())) or 0

    def facets(self) -> dict[str, list[str]]:
        """The providers and models present, for the library's filters."""
        with self.read() as session:
            pairs = session.execute(select(Debate.provider, Debate.model).distinct()).all()
        return {"provider": sorted({p for p, _ in pairs}), "model": sorted({m for _, m in pairs})}

    # -- runs (model comparison and regression) -----------------------------------------------

    def add_run(self, suite: str, *, provider: str, model: str, debate_id: str | None = None,
                prompt_versions: dict[str, str] | None = None, status: str = "running",
                metrics: dict[str, Any] | None = None, data: dict[str, Any] | None = None,
                run_id: str | None = None) -> str:
        """A new run row; with ``run_id``, that row, written afresh if it exists (a re-run after a crash
        rewrites its run rather than adding a second; its baseline mark and creation time stay)."""
        stamp = now()
        values = {"suite": suite, "debate_id": debate_id, "provider": provider, "model": scrub(model),
                  "prompt_versions": prompt_versions or {}, "status": status, "metrics": metrics or {},
                  "data": scrub(data or {}), "updated_at": stamp}
        with self.write() as session:
            row = session.get(Run, check_id(run_id)) if run_id is not None else None
            if row is None:
                row = Run(id=check_id(run_id) if run_id is not None else new_id(), baseline=False, created_at=stamp,
                          **values)
                session.add(row)
            else:
                for name, value in values.items():
                    setattr(row, name, value)
            return row.id

    def update_run(self, run_id: str, **changes: Any) -> None:
        with self.write() as session:
            row = session.get(Run, check_id(run_id))
            if row is None:
                raise NotFound(f"No run has the id {run_id}.")
            for name, value in changes.items():
                setattr(row, name, scrub(value))
            row.updated_at = now()

    def runs(self, suite: str | None = None) -> list[dict[str, Any]]:
        """Runs oldest first, as plain dicts."""
        query = select(Run).order_by(Run.created_at, Run.id)
        if suite:
            query = query.where(Run.suite == suite)
        with self.read() as session:
            return [{c.key: getattr(r, c.key) for c in Run.__table__.columns} | {
                "created_at": iso(r.created_at), "updated_at": iso(r.updated_at)} for r in session.scalars(query)]

    def bless(self, run_id: str) -> None:
        """Make ``run_id`` the baseline of its suite; only this explicit call ever moves a baseline."""
        with self.write() as session:
            row = session.get(Run, check_id(run_id))
            if row is None:
                raise NotFound(f"No run has the id {run_id}.")
            for other in session.scalars(select(Run).where(Run.suite == row.suite, Run.baseline.is_(True))):
                other.baseline = False
            row.baseline = True

    def bless_batch(self, suite: str, batch: str) -> int:
        """Make every run of ``batch`` the baseline of ``suite`` (one transaction); returns how many runs."""
        with self.write() as session:
            rows = [r for r in session.scalars(select(Run).where(Run.suite == suite))
                    if (r.data or {}).get("batch", r.id) == batch]
            if not rows:
                raise NotFound(f"No batch {batch} in suite {suite}.")
            for other in session.scalars(select(Run).where(Run.suite == suite, Run.baseline.is_(True))):
                other.baseline = False
            for row in rows:
                row.baseline = True
        return len(rows)
