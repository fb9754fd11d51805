"""The status to show for a saved debate, run or batch, read from the runtime.

The store keeps what a job last wrote (``running`` while it worked); the runtime knows whether the job is still under
way. So a saved row shows its job's status while the runtime has that job queued, running or interrupted (its host
stopped, and the next host will take it over); a row saved as running or queued that no job has under way was
interrupted for good (its process stopped before the runtime ran ClearSide's work, or its job is gone) and is
resumed by hand; anything else shows as the store saved it. Nothing is guessed from how old a row is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .jobs import UNDER_WAY

UNFINISHED = ("running", "queued")  # what a row says while its job works


def shown(stored: str, job: Any = None) -> str:
    """The status to show for a row the store saved as ``stored``, whose latest job is ``job`` (a
    :class:`clearside.runtime.JobState`, or None when the runtime never ran it or does not know it)."""
    if job is not None and job.status in UNDER_WAY:
        return job.status
    return "interrupted" if stored in UNFINISHED else stored


def jobs_of(job_ids: Iterable[str], store_url: str | None = None) -> dict[str, Any]:
    """The runtime's states of ``job_ids`` (two queries, and none at all, nor the runtime imported, for no id)."""
    wanted = [job_id for job_id in job_ids if job_id]
    if not wanted:
        return {}
    from .client import states

    return states(wanted, store_url)


def debate_statuses(store: Any, items: Iterable[Any]) -> dict[str, str]:
    """The status to show for each saved debate in ``items`` (a page of summaries), by id: only those the store has
    as running or queued ask the runtime, all at once."""
    items = list(items)
    unfinished = store.jobs(item.id for item in items if item.status in UNFINISHED)
    found = jobs_of(unfinished.values(), store.url)
    return {item.id: shown(item.status, found.get(unfinished.get(item.id, ""))) for item in items}


@dataclass(frozen=True)
class Listing:
    """A page of saved debates as ``list`` shows them: the store's page (``items``, ``total``), the status to show
    for each (``shown``) and what each partial debate lacks (``partial``)."""

    items: list[Any]
    total: int
    shown: dict[str, str]
    partial: dict[str, list[str]]

    def rows(self) -> list[dict[str, Any]]:
        """Each debate as data: its summary, ``state`` (the status to show), ``missing`` on a partial one only."""
        return [{**s.as_dict(), "state": self.shown[s.id], **({"missing": self.partial[s.id]}
                                                              if self.partial.get(s.id) else {})}
                for s in self.items]


def listing(store: Any, search: str = "", **filters: Any) -> Listing:
    """Saved debates, newest first, matching ``search`` (words in questions, titles, claims and hinges) and the
    store's ``filters`` (kind, provider, model, status, limit); the runtime says which unfinished ones still run."""
    page = store.list(search, **filters)
    return Listing(page.items, page.total, debate_statuses(store, page.items), store.partial(s.id for s in page.items))


def run_status(row: Mapping[str, Any], batch: Any = None) -> str:
    """A ``runs`` row's status to show, its batch's job being ``batch``: one saved as running is running while its
    batch is under way, interrupted otherwise."""
    return shown(row["status"], batch)


def batch_state(rows: Iterable[Mapping[str, Any]], batch: Any = None) -> str:
    """A batch's state to show: its job's while under way; interrupted when it left runs running; else done."""
    if batch is not None and batch.status in UNDER_WAY:
        return batch.status
    return "interrupted" if any(row["status"] in UNFINISHED for row in rows) else "done"
