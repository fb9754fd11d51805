"""What a page polls of a job.

:class:`AgentProgress` and :func:`apply_event` fold the engine's events into each agent's progress (a job run
here, or one followed from its progress rows); :class:`Snapshot` is a consistent copy a page renders. A static
debate and its challenges run on the durable runtime (:mod:`clearside.static_job`). :class:`JobRegistry` keeps
a server's jobs by id, so a rerun or a page switch re-attaches to the same one. Nothing here imports Streamlit.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from ..schema import Document
from .events import AgentProgress

AGENT_ORDER = ("orchestrator", "pro", "con", "moderator")


@dataclass
class Snapshot:
    """A consistent copy of a job's state for rendering."""

    id: str
    state: str  # running, done, failed, cancelled
    agents: dict[str, AgentProgress]
    document: Document | None
    error: str
    exit_code: int
    violations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def status(self) -> str:
        """The word every job's snapshot has (live and perspectives ones too): running, done, failed, cancelled."""
        return self.state

    @property
    def finished(self) -> bool:
        return self.state in ("done", "failed", "cancelled")


class JobRegistry:
    """Process-wide jobs by id, so a rerun or a page switch re-attaches to the same job."""

    def __init__(self) -> None:
        self._jobs: dict[str, Any] = {}
        self._lock = threading.Lock()

    def add(self, job: Any) -> Any:
        with self._lock:
            self._jobs[job.id] = job
        return job

    def get(self, job_id: str | None) -> Any:
        with self._lock:
            return self._jobs.get(job_id) if job_id else None
