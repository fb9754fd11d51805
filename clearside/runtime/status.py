"""The status to show for a saved debate, run or batch: what the store says, corrected for work that stopped.

The store keeps ``running`` for a debate or run whose process died half-way, so
"running" is only true where a worker is known to run it: ``running_ids`` (the
ids this process runs), or, for a debate, a row touched recently (each finished
section touches it: another dashboard or the command line is writing it).
Everything else saved as running was interrupted.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import UTC, datetime
from typing import Any

ELSEWHERE_SECONDS = 120  # a running debate whose row changed this recently is taken to run in another process


def recent(stamp: str, seconds: float = ELSEWHERE_SECONDS, *, now: datetime | None = None) -> bool:
    """Whether the ISO time ``stamp`` (``2026-11-24T08:00:00Z``) is less than ``seconds`` old."""
    try:
        changed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        return False
    changed = changed if changed.tzinfo else changed.replace(tzinfo=UTC)
    return ((now or datetime.now(UTC)) - changed).total_seconds() < seconds


def debate_status(status: str, debate_id: str, updated_at: str, running_ids: Collection[str] = (), *,
                  elsewhere_seconds: float = ELSEWHERE_SECONDS) -> str:
    """running (a worker here runs it), running elsewhere (saved as running, touched lately), interrupted
    (saved as running, untouched for ``elsewhere_seconds``) or the stored status."""
    if status in ("running", "paused") and debate_id in running_ids:
        return "running"
    if status == "running":
        return "running elsewhere" if recent(updated_at, elsewhere_seconds) else "interrupted"
    return status


def run_status(row: dict[str, Any], running_ids: Collection[str] = ()) -> str:
    """A ``runs`` row's stored status, except that one saved as running whose batch no job in ``running_ids``
    runs was interrupted."""
    if row["status"] != "running":
        return row["status"]
    return "running" if (row.get("data") or {}).get("batch", "") in running_ids else "interrupted"


def batch_state(batch_id: str, rows: Iterable[dict[str, Any]], running_ids: Collection[str] = ()) -> str:
    """running (a job in ``running_ids`` runs it), interrupted (runs a stopped process left unfinished) or done."""
    if batch_id in running_ids:
        return "running"
    return "interrupted" if any(r["status"] == "running" for r in rows) else "done"
