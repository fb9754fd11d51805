"""A perspectives session on a worker thread for the dashboard: the page polls ``snapshot()``.

``ask`` runs the clarifier; ``answer`` merges the answers and runs the rounds and the synthesis;
``retry`` continues a failed or cancelled session from its saved state; ``cancel`` stops the step in flight at
its next token (every finished step, and the answers, stay saved). Only one step runs at a time.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import Cancelled, ClearSideError
from ..providers import Provider
from ..store import Store
from .runner import PerspectivesEvent, PerspectivesRun, load
from .session import Session


@dataclass
class PerspectivesSnapshot:
    session: Session
    busy: bool  # a step is running on the worker
    step: str  # the state whose step is running ("" when idle)
    streaming: str  # text streamed so far by the call in flight
    error: str

    @property
    def status(self) -> str:
        """running while a step runs here; otherwise the session's (paused, failed, done, running)."""
        return "running" if self.busy else self.session.status()


class PerspectivesJob:
    def __init__(self, run: PerspectivesRun) -> None:
        self.run = run
        self.id = run.session.session_id
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._streaming, self._error = "", ""
        self._cancelling = False
        outer = run.on_event
        run.on_event = lambda event: (self._on_event(event), outer(event))

    def _on_event(self, event: PerspectivesEvent) -> None:
        with self._lock:
            if self._cancelling and event.type == "delta":
                raise Cancelled("Cancelled by the user.")
            if event.type == "delta":
                self._streaming += event.content
            elif event.type in ("state", "agent_output", "synthesis", "clarification_questions"):
                self._streaming = ""

    def _start(self, work: Callable[[], object]) -> PerspectivesJob:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return self
            self._error, self._streaming, self._cancelling = "", "", False

            def target() -> None:
                try:
                    work()
                except Cancelled:  # the session records it (``cancelled``): not an error
                    pass
                except ClearSideError as exc:
                    with self._lock:
                        self._error = exc.for_dashboard()
                except Exception as exc:  # noqa: BLE001 - the page must see every failure
                    with self._lock:
                        self._error = f"{type(exc).__name__}: {exc}"

            self._thread = threading.Thread(target=target, name=f"perspectives-{self.id[:8]}", daemon=True)
            self._thread.start()
        return self

    def ask(self) -> PerspectivesJob:
        return self._start(self.run.clarify)

    def answer(self, answers: str | list[str]) -> PerspectivesJob:
        """Merge on the caller's thread (a refused answer raises at once), then run the rest on the worker."""
        self.run.answer(answers)
        return self._start(self.run.run)

    def retry(self) -> PerspectivesJob:
        return self._start(self.run.run)

    def cancel(self) -> None:
        """Stop the step in flight at its next token; ``retry`` runs it again, and the rest."""
        with self._lock:
            if self.busy:
                self._cancelling = True

    @property
    def busy(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def wait(self, timeout: float | None = None) -> PerspectivesSnapshot:
        if self._thread is not None:
            self._thread.join(timeout)
        return self.snapshot()

    def snapshot(self) -> PerspectivesSnapshot:
        with self._lock:
            session = copy.deepcopy(self.run.session)
            busy = self.busy
            return PerspectivesSnapshot(session=session, busy=busy, step=session.state if busy else "",
                                        streaming=self._streaming, error=self._error or session.error)


# -- the mode registry's resume and re-run (clearside.modes) ------------------------------------------------------


def resume_job(store: Store, debate_id: str, provider: Provider, *, temperature: float, strategy: str | None = None,
               owner: str | None = None) -> PerspectivesJob:
    """A job for the session saved in ``store``, continuing from its saved state, not yet working: the caller
    calls ``answer`` or ``retry`` (``strategy`` is static mode's only; the saved row keeps its owner)."""
    return PerspectivesJob(PerspectivesRun.resume(debate_id, provider, store, temperature=temperature))


def rerun_job(store: Store, debate_id: str, provider: Provider, *, temperature: float, strategy: str | None = None,
              owner: str | None = None) -> PerspectivesJob:
    """A new session on the saved one's question, rounds and observability, run by ``provider`` and owned by
    ``owner``: it asks its own clarifying questions (answered again on the Perspectives page). Returns its job,
    working on them."""
    saved = load(store, debate_id)
    run = PerspectivesRun.create(saved.original_user_prompt, provider, rounds=saved.max_rounds, store=store,
                                 observability=saved.observability, temperature=temperature, parent_id=debate_id,
                                 owner=owner)
    return PerspectivesJob(run).ask()
