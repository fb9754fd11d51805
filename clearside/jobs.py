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

from .engine import Event
from .schema import Document

AGENT_ORDER = ("orchestrator", "pro", "con", "moderator")


@dataclass
class AgentProgress:
    status: str = "pending"  # pending, waiting (started, no token yet), running, retrying, done, failed
    text: str = ""
    attempts: int = 0
    seconds: float = 0.0
    tokens: int = 0
    parts: int = 0  # calls that rewrote part of the reply (a mend): ``text`` is the latest one's stream
    limit: int = 0  # a provider retry: how many attempts it makes in all (0: a re-ask, or not retrying)
    cause: str = ""  # a provider retry: what failed, as the provider said it


def apply_event(agents: dict[str, AgentProgress], event: Event) -> None:
    """Fold one engine event into the agents' progress (a job here, or a job followed from its progress rows)."""
    progress = agents.setdefault(event.agent, AgentProgress())
    if event.kind == "start":  # "running" from its first token: a serial model may first serve the other
        progress.status, progress.text, progress.attempts, progress.parts = "waiting", "", 1, 0
        progress.limit, progress.cause = 0, ""
    elif event.kind == "delta":
        progress.text += event.text
        if progress.status == "waiting":
            progress.status = "running"
    elif event.kind == "part":  # another call of the same section: its stream starts afresh
        progress.text = ""
        progress.parts += 1
    elif event.kind == "retry":  # a re-ask after a failed check, or a provider retry (its attempts and cause)
        progress.status, progress.text = "retrying", ""
        progress.attempts = event.data.get("attempt", progress.attempts + 1)
        progress.limit, progress.cause = int(event.data.get("attempts") or 0), str(event.data.get("cause") or "")
    elif event.kind == "done":
        progress.status = "done"
        progress.seconds, progress.tokens = event.data.get("seconds", 0.0), event.data.get("tokens", 0)
    elif event.kind == "error":
        progress.status = "failed"


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
