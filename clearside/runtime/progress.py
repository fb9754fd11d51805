"""A running job's progress as rows in the runtime's database, so any process can follow it.

The host that runs a step appends the engine's events (deltas batched, at most every
:data:`FLUSH_SECONDS`); a page or ``status`` on another replica reads the rows after the last one it saw
(:class:`Follower`). A step the runtime reruns after a crash starts its agents with a fresh ``start``
event, which resets what the follower shows for them, so the abandoned attempt's text never mixes in.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from ..store.db import ensure_table
from . import host
from .events import Agents, Event, View

log = logging.getLogger("clearside.runtime")

FLUSH_SECONDS = 0.25
_meta = sa.MetaData()
_engines: dict[str, sa.Engine] = {}
_made: set[str] = set()
_lock = threading.Lock()


def _table(schema: str | None) -> sa.Table:
    key = f"{schema}.clearside_progress" if schema else "clearside_progress"
    if key in _meta.tables:
        return _meta.tables[key]
    return sa.Table("clearside_progress", _meta, sa.Column("job_id", sa.String(80), primary_key=True),
                    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
                    sa.Column("entries", sa.Text, nullable=False), sa.Column("at", sa.Float, nullable=False),
                    schema=schema)


def _database(url: str | None) -> tuple[sa.Engine, sa.Table]:
    url = host.system_url(url)
    schema = host.SCHEMA if make_url(url).get_backend_name() == "postgresql" else None
    with _lock:
        engine = _engines.get(url)
        if engine is None:
            engine = _engines[url] = host.system_engine(url)  # waits for a PostgreSQL server that restarts
        table = _table(schema)
        if url not in _made:
            ensure_table(engine, table)  # and its schema; safe when processes start at once
            _made.add(url)
    return engine, table


def dispose() -> None:
    """Close every connection this module holds."""
    with _lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()
        _made.clear()


host.on_reset(dispose)


class ProgressWriter:
    """Appends one job's progress entries, a batch per row."""

    def __init__(self, job_id: str, url: str | None = None) -> None:
        self.job_id = job_id
        self.engine, self.table = _database(url)
        self._seq = self._last_seq() + 1
        self._pending: list[dict[str, Any]] = []
        self._flushed = time.monotonic()
        self._held = False  # entries are waiting for the database to come back (said once)
        self._lock = threading.Lock()

    def add(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._pending.append(entry)
            due = entry["kind"] != "delta" or time.monotonic() - self._flushed >= FLUSH_SECONDS
        if due:
            self.flush()

    def flush(self) -> None:
        """Write the pending entries as one row. Progress is what a page shows, never the work: when the database
        cannot be reached (a server restarting, a full disk) the entries wait for the next flush, and the step that
        emitted them goes on."""
        with self._lock:
            if not self._pending:
                return
            batch, self._pending = self._pending, []
            self._flushed = time.monotonic()
            try:
                for _ in range(5):  # another writer of this job (a host taking over, a resumed step) took the number
                    try:
                        with self.engine.begin() as conn:
                            conn.execute(self.table.insert().values(job_id=self.job_id, seq=self._seq,
                                                                    entries=json.dumps(batch), at=time.time()))
                        self._seq += 1
                        self._held = False
                        return
                    except sa.exc.IntegrityError:
                        self._seq = self._last_seq() + 1
            except (sa.exc.OperationalError, sa.exc.InterfaceError) as exc:  # the database is away: keep them
                self._pending = batch + self._pending
                if not self._held:
                    log.warning("Progress of job %s not written yet (%s); kept for the next flush", self.job_id,
                                str(exc).splitlines()[0])
                self._held = True
                return
            raise sa.exc.InvalidRequestError(f"Progress of job {self.job_id} could not be written: too many writers")

    def _last_seq(self) -> int:
        with self.engine.connect() as conn:
            last = conn.execute(sa.select(sa.func.max(self.table.c.seq)).where(self.table.c.job_id == self.job_id))
            return last.scalar() or 0


def read(job_id: str, after: int = 0, url: str | None = None) -> tuple[list[dict[str, Any]], int]:
    """The entries written after row ``after``, and the last row read."""
    engine, table = _database(url)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(table.c.seq, table.c.entries).where(table.c.job_id == job_id,
                                                                          table.c.seq > after)
                            .order_by(table.c.seq)).all()
    entries = [entry for row in rows for entry in json.loads(row.entries)]
    return entries, (rows[-1].seq if rows else after)


def clear(job_id: str, url: str | None = None) -> None:
    """Forget a finished job's progress (its result is in the store)."""
    engine, table = _database(url)
    with engine.begin() as conn:
        conn.execute(table.delete().where(table.c.job_id == job_id))


OnEntry = Callable[[dict[str, Any]], None]


def follow(printers: dict[str, OnEntry | None], job_id: str, url: str, *, stop: threading.Event,
           poll: float = 0.1) -> Any:
    """Wait for ``job_id`` to end, handing each progress entry of each job in ``printers`` (the job, a batch's items)
    to its printer as it is written, from whichever host runs it; a job whose host stopped (``interrupted``) is taken
    over by this process's host at once. The job's final state (a :class:`clearside.runtime.JobState`), or None as
    soon as ``stop`` is set (the job goes on). What a command and the MCP server follow a job with."""
    from .client import recover, state

    seen = dict.fromkeys(printers, 0)

    def drain() -> None:
        for followed, printer in printers.items():
            entries, seen[followed] = read(followed, seen[followed], url)
            for entry in entries if printer is not None else ():
                printer(entry)

    while not (now := state(job_id, url)).finished:
        if now.status == "interrupted":  # the host that ran it stopped: this one takes it over now
            recover(job_id, url)
        drain()
        if stop.wait(poll):
            return None
    drain()
    return now


class Follower:
    """A job that may run in another process, as its mode's view (``view``; default: a static debate's agents)
    folds its events, brought up to date on each call from the rows written since the last."""

    def __init__(self, job_id: str, url: str | None = None, view: View | None = None) -> None:
        self.job_id, self.url = job_id, url
        self.view: Any = view if view is not None else Agents()
        self._last = 0

    def update(self) -> Any:
        """The view, with every event written since the last call folded in."""
        entries, self._last = read(self.job_id, self._last, self.url)
        for entry in entries:
            self.view.fold(Event.of(entry))
        return self.view
