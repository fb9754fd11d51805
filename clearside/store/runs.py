"""Runs of the model comparison and the regression suites, the baselines they are judged against, and the bless
history (each move of a baseline, with its note and warnings)."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy import select

from ..errors import NotFound
from .database import Database
from .privacy import scrub
from .records import NewRun, check_id, iso, new_id, now
from .tables import Blessing, Run


def _batch_of(row: Run) -> str:
    """The batch a run belongs to: its data's ``batch``, or the run itself (a run outside any batch)."""
    return str((row.data or {}).get("batch") or row.id)


class Runs(Database):
    """The ``runs`` table: one row per generated debate of a comparison or a regression batch."""

    def add_run(self, run: NewRun | str, /, **fields: Any) -> str:
        """A new run row (``run``: a :class:`NewRun`, or its suite with ``fields`` naming its other fields); with
        ``run_id``, that row, written afresh if it exists (a re-run after a crash rewrites its run rather than
        adding a second; its baseline mark and creation time stay)."""
        run = NewRun(run, **fields) if isinstance(run, str) else dataclasses.replace(run, **fields)
        stamp, run_id = now(), run.run_id
        values = {"suite": run.suite, "debate_id": run.debate_id, "provider": run.provider, "model": scrub(run.model),
                  "prompt_versions": run.prompt_versions or {}, "status": run.status, "metrics": run.metrics or {},
                  "data": scrub(run.data or {}), "updated_at": stamp}
        with self.write() as session:
            row = session.get(Run, check_id(run_id)) if run_id is not None else None
            if row is None:
                row = Run(id=check_id(run_id) if run_id is not None else new_id(), baseline=False, created_at=stamp,
                          **values)
                session.add(row)
            else:
                for name, value in values.items():
                    setattr(row, name, value)
            row.batch = _batch_of(row)
            return row.id

    def update_run(self, run_id: str, **changes: Any) -> None:
        with self.write() as session:
            row = session.get(Run, check_id(run_id))
            if row is None:
                raise NotFound(f"No run has the id {run_id}.")
            for name, value in changes.items():
                setattr(row, name, scrub(value))
            row.batch = _batch_of(row)
            row.updated_at = now()

    def runs(self, suite: str | None = None, *, batch: str | None = None) -> list[dict[str, Any]]:
        """Runs oldest first, as plain dicts; ``batch``: only that batch's (read through its index)."""
        query = select(Run).order_by(Run.created_at, Run.id)
        if suite:
            query = query.where(Run.suite == suite)
        if batch:
            query = query.where(Run.batch == batch)
        with self.read() as session:
            return [{c.key: getattr(r, c.key) for c in Run.__table__.columns} | {
                "created_at": iso(r.created_at), "updated_at": iso(r.updated_at)} for r in session.scalars(query)]

    def suites(self) -> list[str]:
        """The suites the store has runs of (one query on the indexed column, no run decoded)."""
        with self.read() as session:
            return sorted(session.scalars(select(Run.suite).distinct()))

    def bless(self, run_id: str) -> None:
        """Make ``run_id`` the baseline of its suite; only this explicit call ever moves a baseline."""
        with self.write() as session:
            row = session.get(Run, check_id(run_id))
            if row is None:
                raise NotFound(f"No run has the id {run_id}.")
            for other in session.scalars(select(Run).where(Run.suite == row.suite, Run.baseline.is_(True))):
                other.baseline = False
            row.baseline = True

    def bless_batch(self, suite: str, batch: str, *, note: str = "", warnings: list[str] | None = None,
                    detail: dict[str, Any] | None = None) -> int:
        """Make every run of ``batch`` the baseline of ``suite`` and add a row to the bless history (the baseline
        it replaced, ``note``, ``warnings``, ``detail``), in one transaction; returns how many runs."""
        with self.write() as session:
            rows = list(session.scalars(select(Run).where(Run.suite == suite, Run.batch == batch)))
            if not rows:
                raise NotFound(f"No batch {batch} in suite {suite}.")
            previous = None
            for other in session.scalars(select(Run).where(Run.suite == suite, Run.baseline.is_(True))):
                previous = previous or (other.data or {}).get("batch", other.id)
                other.baseline = False
            for row in rows:
                row.baseline = True
            session.add(Blessing(id=new_id(), suite=suite, batch=batch,
                                 previous=previous if previous != batch else None, note=scrub(note or ""),
                                 warnings=scrub(list(warnings or [])), detail=scrub(detail or {}), created_at=now()))
        return len(rows)

    def blessings(self, suite: str | None = None) -> list[dict[str, Any]]:
        """The bless history, newest first (of one suite, or of all), as plain dicts."""
        query = select(Blessing).order_by(Blessing.created_at.desc(), Blessing.id)
        if suite:
            query = query.where(Blessing.suite == suite)
        with self.read() as session:
            return [{c.key: getattr(r, c.key) for c in Blessing.__table__.columns} | {"created_at": iso(r.created_at)}
                    for r in session.scalars(query)]
