"""Background debate jobs that a UI polls: clicks and reruns never kill or lose a running debate.

A :class:`DebateJob` runs the engine on its own thread and records progress in a
snapshot the UI reads under a lock (per-agent status, streamed text, retries,
the finished document or the error). A failed job keeps every finished section;
:meth:`DebateJob.retry` reruns only what is missing. Nothing here imports
Streamlit.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from . import prompts
from .engine import DebateRun, Engine, Event
from .errors import Cancelled, ClearSideError, DebateFailed
from .providers import Provider
from .schema import Document
from .scored import run_recorded
from .static.recorder import StaticRecorder, load_run
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


class DebateJob:
    """One debate generated on a worker thread."""

    def __init__(self, run: DebateRun, provider: Provider, *, retries: int = 2, temperature: float = 0.4,
                 recorder: StaticRecorder | None = None, strategy: str | None = None) -> None:
        """With a ``recorder`` the debate is saved as it is generated and the job's id is the saved debate's id;
        ``strategy``: ``whole`` or ``focused`` generation (``None``: the one measured best for the provider)."""
        self.recorder = recorder
        self.id = recorder.id if recorder is not None else uuid.uuid4().hex
        self.run = run
        self.engine = Engine(provider, retries=retries, temperature=temperature, on_event=self._on_event,
                             on_section=recorder.on_section if recorder is not None else None, strategy=strategy)
        self._lock = threading.Lock()
        self._agents = {name: AgentProgress() for name in AGENT_ORDER}
        self._state = "running"
        self._cancelling = False
        self._document: Document | None = None
        self._error = ""
        self._exit_code = 0
        self._thread: threading.Thread | None = None

    def start(self) -> DebateJob:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return self
            self._state, self._error, self._exit_code = "running", "", 0
            self._cancelling = False
            for name in self.run.missing_agents():
                self._agents[name] = AgentProgress()
            self._thread = threading.Thread(target=self._work, name=f"debate-{self.id[:8]}", daemon=True)
            self._thread.start()
        return self

    def retry(self) -> DebateJob:
        """Rerun only the agents whose sections are missing; finished sections are kept."""
        return self.start()

    def cancel(self) -> None:
        """Stop at the next token or call; every finished section stays saved, and Resume completes the rest."""
        with self._lock:
            if self._state == "running":
                self._cancelling = True

    def wait(self, timeout: float | None = None) -> Snapshot:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.snapshot()

    def _work(self) -> None:
        try:  # the recorder is finished, paused or failed by run_recorded
            document = run_recorded(self.engine, self.run, self.recorder, error=lambda cause: cause.for_dashboard())
        except DebateFailed as exc:
            if isinstance(exc.cause, Cancelled):
                self._cancelled()
            else:
                self._failed(exc.cause.for_dashboard(), exc.exit_code, record=False)
            return
        except ClearSideError as exc:  # e.g. a provider that cannot even be built, or the store refusing a write
            self._failed(exc.for_dashboard(), exc.exit_code)
            return
        except Exception as exc:  # never let a worker die silently: the UI must show something
            self._failed(f"Unexpected error: {exc!r}", 1)
            raise
        with self._lock:
            self._document, self._state = document, "done"

    def _cancelled(self) -> None:
        with self._lock:
            self._state, self._error, self._exit_code = "cancelled", "Cancelled.", Cancelled.exit_code
            for progress in self._agents.values():
                if progress.status not in ("done", "pending"):
                    progress.status = "pending"

    def _failed(self, error: str, exit_code: int, *, record: bool = True) -> None:
        """``record``: mark the saved debate failed too (``run_recorded`` already did for a failed debate)."""
        if record and self.recorder is not None:
            with contextlib.suppress(ClearSideError):  # the store is down too; what it took is still there
                self.recorder.fail(error)
        with self._lock:
            self._state, self._error, self._exit_code = "failed", error, exit_code

    def _on_event(self, event: Event) -> None:
        with self._lock:
            if self._cancelling and event.kind in ("start", "delta", "part", "retry"):
                raise Cancelled("Cancelled by the user.")
            apply_event(self._agents, event)

    def snapshot(self) -> Snapshot:
        with self._lock:
            return Snapshot(
                id=self.id, state=self._state,
                agents={name: AgentProgress(**vars(p)) for name, p in self._agents.items()},
                document=self._document, error=self._error, exit_code=self._exit_code,
                violations=list(self.run.violations),
            )


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


# -- static debates for the dashboard and the mode registry (clearside.modes) -------------------------------------


def debate_job(store: Store, run: DebateRun, provider: Provider, *, temperature: float, strategy: str | None = None,
               debate_id: str | None = None, parent_id: str | None = None, owner: str | None = None) -> DebateJob:
    """A job generating ``run`` (or, with ``debate_id``, completing that saved debate), saving it section by
    section; not yet started. ``strategy``: the generation strategy (``None``: automatic); ``owner``: the
    starting browser's token."""
    recorder = StaticRecorder(store, run, provider, debate_id=debate_id, parent_id=parent_id, owner=owner)
    return DebateJob(run, provider, temperature=temperature, recorder=recorder, strategy=strategy)


def resume_job(store: Store, debate_id: str, provider: Provider, *, temperature: float, strategy: str | None = None,
               owner: str | None = None) -> DebateJob:
    """A job generating only the sections the saved debate is missing, not yet started (call ``start()``)."""
    return debate_job(store, load_run(store, debate_id), provider, temperature=temperature, strategy=strategy,
                      debate_id=debate_id, owner=owner)


def rerun_job(store: Store, debate_id: str, provider: Provider, *, temperature: float, strategy: str | None = None,
              owner: str | None = None) -> DebateJob:
    """A new debate on the saved one's question and context, generated afresh by ``provider``; working."""
    saved = load_run(store, debate_id)
    run = DebateRun(raw_input=saved.raw_input, context=saved.context)
    return debate_job(store, run, provider, temperature=temperature, strategy=strategy, parent_id=debate_id,
                      owner=owner).start()
