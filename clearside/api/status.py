"""A saved debate's state as the API reports it, and the links a client follows from it.

As ``python -m clearside status`` reports it: the status of the debate's latest job while the runtime has it under
way (queued, running, interrupted...), else the store's (:func:`clearside.runtime.status.shown`); a static debate's
finished sections, what a partial one lacks; a live debate's finished turns.
"""

from __future__ import annotations

from typing import Any

from .. import runtime
from ..errors import NotFound
from ..runtime.status import shown
from ..static.run import SECTIONS
from ..store import Record, Store, Summary
from ..store.live import live_rows
from .models import DebateState, Links

PREFIX = "/v1"


def links(debate_id: str, kind: str) -> Links:
    base = f"{PREFIX}/debates/{debate_id}"
    document = f"{base}/document" if kind == "static" else None
    if kind == "live":
        document = f"{PREFIX}/live/{debate_id}"
    if kind == "perspectives":
        document = f"{PREFIX}/perspectives/{debate_id}"
    return Links(self=base, events=f"{base}/events", document=document, export=f"{base}/export")


def job_of(record: Summary | Record, data: dict[str, Any] | None) -> str | None:
    """The debate's latest job on the runtime (a copy's data may name its original's: not this debate's)."""
    job_id = (data or {}).get("job")
    if not isinstance(job_id, str) or not (job_id == record.id or job_id.startswith(f"{record.id}-")):
        return None
    return job_id


def state_of(store: Store, record: Record) -> DebateState:
    """The debate's state now (one query to the runtime while it has a job)."""
    data = record.data or {}
    job_id = job_of(record, data)
    job = None
    if job_id is not None:
        try:
            job = runtime.state(job_id, store.url)
        except NotFound:
            job = None
    status = shown(record.status, job)
    error = data.get("error", "") if status not in ("queued", "running") else ""
    if job is not None and job.status in ("cancelled", "failed") and record.status in ("queued", "running"):
        status, error = job.status, job.error or error
    if job is not None and status == "failed" and (job.result or {}).get("message"):
        error = job.result["message"]  # the command line's words (the store keeps the dashboard's)
    sections = [name for name in SECTIONS if name in store.sections(record.id)] if record.kind == "static" else []
    missing = store.partial([record.id]).get(record.id) if status not in ("queued", "running") else None
    turns = len(live_rows(store, record.id)["turns"]) if record.kind == "live" else None
    return DebateState(id=record.id, kind=record.kind, status=status, title=record.title, question=record.question,
                       created_at=record.created_at, updated_at=record.updated_at, error=error or "", job=job_id,
                       sections=sections, missing=missing or None, turns=turns, links=links(record.id, record.kind))


def listed(item: Summary, status: str) -> DebateState:
    """A debate as a list shows it (its status from :func:`clearside.runtime.status.debate_statuses`)."""
    return DebateState(id=item.id, kind=item.kind, status=status, title=item.title, question=item.question,
                       created_at=item.created_at, updated_at=item.updated_at, links=links(item.id, item.kind))
