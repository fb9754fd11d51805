"""What a page polls of a job, and the challenge job.

:class:`AgentProgress` and :func:`apply_event` fold the engine's events into each agent's progress (a job run
here, or one followed from its progress rows); :class:`Snapshot` is a consistent copy a page renders. A static
debate runs on the durable runtime (:mod:`clearside.static_job`); a :class:`ChallengeJob` answers one challenge
on a thread. :class:`JobRegistry` keeps a server's jobs by id, so a rerun or a page switch re-attaches to the
same one. Nothing here imports Streamlit.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from . import prompts
from .engine import Engine, Event
from .errors import Cancelled, ClearSideError
from .providers import Provider
from .schema import Document
from .store import Store

AGENT_ORDER = ("orchestrator", "pro", "con", "moderator")


@dataclass
class AgentProgress:
    status: str = "pending"  # pending, waiting (started, no token yet), running, retrying, done, failed
    text: str = ""
    attempts: int = 0
    seconds: float = 0.0
    tokens: int = 0


def apply_event(agents: dict[str, AgentProgress], event: Event) -> None:
    """Fold one engine event into the agents' progress (a job here, or a job followed from its progress rows)."""
    progress = agents.setdefault(event.agent, AgentProgress())
    if event.kind == "start":  # "running" from its first token: a serial model may first serve the other
        progress.status, progress.text, progress.attempts = "waiting", "", 1
    elif event.kind == "delta":
        progress.text += event.text
        if progress.status == "waiting":
            progress.status = "running"
    elif event.kind == "part":  # another call of the same section: its stream starts afresh
        progress.text = ""
    elif event.kind == "retry":
        progress.status, progress.text = "retrying", ""
        progress.attempts = event.data.get("attempt", progress.attempts + 1)
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


class ChallengeJob:
    """One challenge answered on a worker thread; the debate it extends is never modified in place."""

    def __init__(self, document: Document, action: str, target: str, provider: Provider, *,
                 temperature: float = 0.4, store: Store | None = None, debate_id: str | None = None) -> None:
        """With ``store`` and ``debate_id`` the response is saved with that debate as soon as it is ready."""
        self.id = uuid.uuid4().hex
        self.action, self.target = action, target
        self._document = document
        self.store, self.debate_id = store, debate_id
        self.engine = Engine(provider, temperature=temperature, on_event=self._on_event)
        self._lock = threading.Lock()
        self._state, self._error, self._result = "running", "", None  # running, done, failed, cancelled
        self._cancelling = False
        self._thread = threading.Thread(target=self._work, name=f"challenge-{self.id[:8]}", daemon=True)

    def start(self) -> ChallengeJob:
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stop at the next token: nothing is added to the debate, and the challenge can be asked again."""
        with self._lock:
            if self._state == "running":
                self._cancelling = True

    def _on_event(self, event: Event) -> None:
        with self._lock:
            if self._cancelling and event.kind in ("start", "delta", "part", "retry"):
                raise Cancelled("Cancelled by the user.")

    def _work(self) -> None:
        try:
            result = self.engine.challenge(self._document, self.action, self.target)
            if self.store is not None and self.debate_id:
                provider = self.engine.provider
                self.store.add_challenge(self.debate_id, result.challenges.responses[-1].dump(),
                                         provider=provider.name, model=provider.model,
                                         prompt_version=prompts.load("challenge").version)
        except Cancelled:  # raised before the answer was complete: nothing was saved or added
            with self._lock:
                self._state = "cancelled"
            return
        except ClearSideError as exc:
            with self._lock:
                self._state, self._error = "failed", exc.for_dashboard()
            return
        with self._lock:
            self._state, self._result = "done", result

    def wait(self, timeout: float | None = None) -> tuple[str, Document | None, str]:
        self._thread.join(timeout)
        return self.result()

    def result(self) -> tuple[str, Document | None, str]:
        """``(state, updated document or None, error message)``; state: running, done, failed or cancelled."""
        with self._lock:
            return self._state, self._result, self._error
