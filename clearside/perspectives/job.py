"""A perspectives session as a page holds it, run on the durable runtime: the page polls ``snapshot()``.

``ask`` queues the leg that asks the clarifier; ``answer`` merges the answers into the saved session (refused at
once when empty) and queues the leg that runs the rounds and the synthesis; ``retry`` continues a failed or
cancelled session from its saved state; ``cancel`` stops the step in flight at its next token (every finished
step, and the answers, stay saved). Any host runs the legs (:mod:`clearside.perspectives.workflow`): this
dashboard, another replica, ``python -m clearside worker``; a crash leaves them for the next host. The
snapshot reads the session from the store, the job's state from the runtime, and the streamed text from this
process's memory while a step runs here, otherwise from the job's progress rows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .. import runtime
from ..errors import ClearSideError, NotFound
from ..providers import Provider
from ..runtime import steps
from ..runtime.progress import Follower
from ..store import Store
from . import workflow
from .runner import PerspectivesRun, load
from .session import Session

ANSWER_WAIT_SECONDS = 10  # the clarifier's leg ends just after it saves the questions


@dataclass
class PerspectivesSnapshot:
    session: Session
    status: str  # clearside.runtime.STATUSES: a leg under way (queued, running, interrupted), waiting for the
    # answers to the clarifying questions, paused (not started), cancelled, failed or done
    step: str  # the state whose step is running ("" when idle)
    streaming: str  # text streamed so far by the call in flight
    error: str
    notice: str = ""  # a provider retry of the call in flight: "retrying (2/3)… cause"

    @property
    def busy(self) -> bool:
        """A leg is under way (queued, running, or interrupted and about to be taken over)."""
        return self.status in runtime.UNDER_WAY

    @property
    def finished(self) -> bool:
        return self.status in runtime.FINISHED


class PerspectivesJob:
    """A saved session's legs on the runtime (``run``: the session, its provider, store and options)."""

    kind = "perspectives"

    def __init__(self, run: PerspectivesRun, *, here: bool = False) -> None:
        """``here``: its legs run in this process, on its host (the ``perspectives`` command)."""
        if run.store is None:
            raise ClearSideError("A perspectives job runs on the durable runtime and needs the session's store.")
        self.run, self.here = run, here
        self.store: Store = run.store
        self.id = run.session.session_id
        self.job_id = workflow.latest_job(self.store, self.id)
        self._follower: Follower | None = None

    def _options(self) -> dict[str, object]:
        return {"retries": self.run.retries, "temperature": self.run.temperature,
                "context_tokens": self.run.context_tokens}

    def _queued(self, job_id: str) -> PerspectivesJob:
        if job_id != self.job_id or self._follower is None:
            self._follower = Follower(job_id, self.store.url, workflow.StreamView())
        self.job_id = job_id
        return self

    def ask(self) -> PerspectivesJob:
        """Queue the clarifier (a new session, or one whose clarifier failed or was cancelled)."""
        if self.busy:
            return self
        return self._queued(workflow.enqueue_session(self.id, self.provider, store=self.store, here=self.here,
                                                      **self._options()))

    start = ask  # a session starts from its saved state: a new one with its clarifier

    def answer(self, answers: str | list[str], skipped: list[int] | tuple[int, ...] = ()) -> PerspectivesJob:
        """Merge on the caller's thread (a refused answer raises at once), then queue the rounds and synthesis;
        ``skipped``: the 1-based numbers of the questions the person skipped."""
        self.run.session = load(self.store, self.id)  # as the clarifier's leg saved it
        self.run.answer(answers, skipped)
        self.wait(ANSWER_WAIT_SECONDS)  # that leg is ending: never two legs at once
        return self._queued(workflow.enqueue_session(self.id, self.provider, store=self.store, here=self.here,
                                                      **self._options()))

    def retry(self) -> PerspectivesJob:
        """Continue from the saved state: a cancelled leg resumes, a failed one is followed by a new leg."""
        if self.busy:
            return self
        return self._queued(workflow.continue_session(self.id, self.provider, store=self.store, here=self.here,
                                                       **self._options()))

    def cancel(self) -> None:
        """Stop the step in flight at its next token; ``retry`` runs it again, and the rest."""
        if self.busy and self.job_id:
            workflow.cancel_session(self.id, self.job_id, store=self.store)

    @property
    def provider(self) -> Provider:
        return self.run.provider

    def state(self) -> runtime.JobState | None:
        """The latest leg's state; None before the first (or when the runtime lost it: the session is as saved)."""
        if not self.job_id:
            return None
        try:
            return runtime.state(self.job_id, self.store.url)
        except NotFound:
            return None

    @property
    def busy(self) -> bool:
        return self._busy(self.state())

    def _busy(self, now: runtime.JobState | None) -> bool:
        if now is None:
            return False
        return not now.finished or now.id in steps.RUNNING  # a cancelled step here stops at its next token

    def wait(self, timeout: float | None = None) -> PerspectivesSnapshot:
        """Block until no leg runs (or ``timeout`` seconds pass); the snapshot."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.busy and (deadline is None or time.monotonic() < deadline):
            time.sleep(0.05)
        return self.snapshot()

    def snapshot(self) -> PerspectivesSnapshot:
        now = self.state()
        busy = self._busy(now)
        session = load(self.store, self.id)
        error = now.error if now is not None and now.status == "failed" and not session.finished else ""
        view = self._view() if busy else workflow.StreamView()
        return PerspectivesSnapshot(session=session, status=_status(now, busy, session),
                                    step=session.state if busy else "", streaming=view.text,
                                    error=error or session.error, notice=view.notice)

    def _view(self) -> workflow.StreamView:
        """The call in flight: from this process's memory while a step runs here (no query), else from the rows."""
        here = steps.LOCAL.get(self.job_id or "")
        if isinstance(here, workflow.StreamView):
            return here
        if self._follower is None and self.job_id:
            self._follower = Follower(self.job_id, self.store.url, workflow.StreamView())
        return self._follower.update() if self._follower is not None else workflow.StreamView()


def _status(now: runtime.JobState | None, busy: bool, session: Session) -> str:
    """The session's status in the one vocabulary: its leg's while one is under way (a cancelled step still running
    here is running until it stops), else the saved session's."""
    if busy:
        return now.status if now is not None and now.status in runtime.UNDER_WAY else "running"
    if session.finished:
        return "done"
    if session.error:
        return "failed"
    if session.cancelled:
        return "cancelled"
    if session.state == "CLARIFICATION_PENDING":
        return "waiting"
    return "paused" if session.state == "INIT" else "interrupted"  # not started yet; stopped with no leg to go on


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
