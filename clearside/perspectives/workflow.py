"""A perspectives session on the durable runtime: the workflow ``clearside.perspectives``, one step per model call.

Each step (:func:`session_step`) loads the session saved in the store, makes its next model call (the clarifier,
one round's A or B, the synthesis; :meth:`PerspectivesRun.advance`), saves it and returns where the session
stands; DBOS checkpoints that. A host that takes the workflow over after a crash replays the finished steps
from their checkpoints and runs only the step in flight again, which finds every finished step in the store.

The clarification gate splits a session into legs, one workflow each (job ids ``<session id>``, then
``<session id>-2``, ...; the latest is kept in the saved row's ``data["job"]``): the first asks the clarifier
and ends with the session waiting for its answers; ``answer`` merges the answers into the saved session (empty
ones are refused on the spot) and queues the next leg, which runs the rounds and the synthesis. A second
workflow rather than a message to a waiting one (``DBOS.recv``) because the answers may take days: a waiting
workflow would hold its queue's slot all that time (the in-process model's queue runs one job per host), would
stay pinned to the workflow version of the day it started, and answers given on the command line or after a
restart would need it alive; the store already holds the answers durably, and a leg starts from it.

Progress follows the runtime's pattern: streamed text in this process's memory (:data:`STREAMING`) while a
step runs here, and in the job's progress rows (:class:`StreamFollower`) for a page on any other process. A
cancel (``runtime.cancel``) stops the step in flight at its next token; finished steps stay saved, and
:func:`continue_session` resumes the cancelled leg from its last finished step.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from dbos import DBOS

from .. import runtime
from ..errors import Cancelled, ClearSideError
from ..providers import Provider
from ..runtime import progress, steps
from ..store import Store
from .runner import PerspectivesEvent, PerspectivesRun, load

log = logging.getLogger("clearside.jobs")

PERSPECTIVES = "clearside.perspectives"
# Text streamed by the call in flight of each job whose step runs in this process, by job id.
STREAMING: dict[str, str] = {}
# Jobs cancelled from this process: a step running here stops at its very next token (others ask the runtime).
CANCELLED: set[str] = set()
_RESETS = ("start", "state", "agent_output", "synthesis", "clarification_questions",
           "retrying")  # a provider retry: the call is made again from its start


# The provider retry the call in flight is in ("retrying (2/3)… cause"), by job id; "" once it streams again.
NOTICES: dict[str, str] = {}


def notice_after(notice: str, kind: str, content: str) -> str:
    """The retry notice after one event: a provider retry sets it; text streaming again, or a step's start or end,
    clears it."""
    if kind == "retrying":
        return content
    return "" if kind == "delta" or kind in _RESETS else notice


def fold(text: str, kind: str, content: str) -> str:
    """The streamed text after one event: a delta adds to it; a step's start or end clears it."""
    if kind == "delta":
        return text + content
    return "" if kind in _RESETS else text


class Sink:
    """A step's events: its streamed text here and in the progress rows, and the place a cancel is noticed."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        self.writer = progress.ProgressWriter(job_id, steps.store_url())
        self._checked = 0.0
        self._cancelled = False
        STREAMING[job_id] = ""
        NOTICES[job_id] = ""
        self.writer.add({"kind": "start", "agent": "", "text": ""})  # a rerun step's text starts afresh

    def __call__(self, event: PerspectivesEvent) -> None:
        if event.type == "delta" and self.cancelled():
            raise Cancelled("Cancelled by the user.")
        STREAMING[self.job_id] = fold(STREAMING.get(self.job_id, ""), event.type, event.content)
        NOTICES[self.job_id] = notice_after(NOTICES.get(self.job_id, ""), event.type, event.content)
        self.writer.add({"kind": event.type, "agent": event.agent or "", "text": event.content,
                         "data": {"round": event.round} if event.round is not None else {}})

    def cancelled(self, *, now: bool = False) -> bool:
        moment = time.monotonic()
        if self.job_id in CANCELLED:
            self._cancelled = True
        if not self._cancelled and (now or moment - self._checked >= steps.CANCEL_CHECK_SECONDS):
            self._checked = moment
            self._cancelled = runtime.state(self.job_id, steps.store_url()).status == "cancelled"
        return self._cancelled

    def close(self) -> None:
        self.writer.flush()


class StreamFollower:
    """The streamed text of a job that may run in another process, read from its progress rows."""

    def __init__(self, job_id: str, url: str | None = None) -> None:
        self.job_id, self.url = job_id, url
        self.text, self.notice, self._last = "", "", 0

    def update(self) -> str:
        entries, self._last = progress.read(self.job_id, self._last, self.url)
        for entry in entries:
            self.text = fold(self.text, entry["kind"], entry.get("text", ""))
            self.notice = notice_after(self.notice, entry["kind"], entry.get("text", ""))
        return self.text


def _mark(store: Store, session_id: str, *, error: str = "", cancelled: bool = False) -> None:
    """Record on the saved session why it stopped (a failure outside a model call, a cancel)."""
    session = load(store, session_id)
    if session.finished or session.state == "CLARIFICATION_PENDING":
        return  # nothing was in flight: it is complete, or it waits for the answers
    if cancelled:
        session.cancelled, session.error = True, ""
    elif not session.error:
        session.error = error
    store.update(session_id, status=session.status(), data={"session": session.model_dump(mode="json")})


@DBOS.step(name=f"{PERSPECTIVES}.step")
def session_step(job_id: str, job: dict[str, Any], token: str = "") -> dict[str, Any]:
    """The session's next model call, saved: ``{"status": "ok", "more": ...}`` or how the leg ended (``token``,
    the calling execution's, comes back with a cancel)."""
    store = steps.store()
    sink = Sink(job_id)
    try:
        provider = steps.provider_for(job_id, job)
        run = PerspectivesRun.resume(job["session_id"], provider, store, retries=job.get("retries", 2),
                                     temperature=job.get("temperature", 0.7),
                                     context_tokens=job.get("context_tokens"), on_event=sink)
        more = run.advance()
        if more and sink.cancelled(now=True):  # cancelled after its last token: what it saved stays, the leg stops
            raise Cancelled("Cancelled by the user.")
    except Cancelled:
        _mark(store, job["session_id"], cancelled=True)
        return {**steps.ended(Cancelled("Cancelled by the user.")), "token": token}
    except ClearSideError as exc:  # a failed call (saved by the run), a provider this host cannot build
        _mark(store, job["session_id"], error=str(exc))
        return {**steps.ended(exc), "token": token}
    except Exception as exc:  # never end a job silently: the page and `status` must say what happened
        log.exception("Job %s failed", job_id)
        _mark(store, job["session_id"], error=f"Unexpected error: {exc!r}")
        return {**steps.ended(ClearSideError(f"Unexpected error: {exc!r}")), "token": token}
    finally:
        sink.close()
    return {"status": "ok", "more": more, "state": run.session.state}


@DBOS.workflow(name=PERSPECTIVES)
def perspectives_session(job: dict[str, Any]) -> dict[str, Any]:
    """One leg of a saved session: its steps until it waits for the answers or is complete (``job``: see
    :func:`session_job`)."""
    job_id = DBOS.workflow_id or job["session_id"]
    log.info("job %s started: perspectives session %s", job_id, job["session_id"])
    steps.RUNNING.add(job_id)
    try:
        outcome = _steps(job_id, job)
    finally:
        STREAMING.pop(job_id, None)
        CANCELLED.discard(job_id)
        steps.RUNNING.discard(job_id)
        steps.LOCAL_PROVIDERS.pop(job_id, None)
    log.info("job %s %s%s", job_id, outcome["status"], f": {outcome['error']}" if outcome.get("error") else "")
    return outcome


def _steps(job_id: str, job: dict[str, Any]) -> dict[str, Any]:
    while True:
        # A step cancelled in an earlier execution is replayed as "cancelled" when the leg resumes: its token is
        # not this execution's, so it runs again, afresh. One cancelled here ends this execution.
        token = uuid.uuid4().hex
        outcome = session_step(job_id, job, token)
        while outcome["status"] == "cancelled" and outcome.get("token") != token:
            token = uuid.uuid4().hex
            outcome = session_step(job_id, job, token)
        if outcome["status"] != "ok":
            return outcome
        if not outcome["more"]:
            return {"status": "done", "session_id": job["session_id"], "state": outcome["state"]}


def session_job(session_id: str, provider: Provider, *, retries: int = 2, temperature: float = 0.7,
                context_tokens: int | None = None) -> dict[str, Any]:
    return {"session_id": session_id, "provider": steps.recipe(provider), "retries": retries,
            "temperature": temperature, "context_tokens": context_tokens}


def latest_job(store: Store, session_id: str) -> str | None:
    """The id of the session's latest leg, if the runtime ran one (a Library copy's data names its original's)."""
    job_id = (store.get(session_id).data or {}).get("job")
    return job_id if job_id == session_id or str(job_id).startswith(f"{session_id}-") else None


def running_leg(store: Store, session_id: str) -> str | None:
    """The session's leg the runtime has queued or is running, wherever; None when it has none."""
    job_id = latest_job(store, session_id)
    return job_id if job_id and runtime.state(job_id, store.url).status in runtime.UNDER_WAY else None


def enqueue_session(session_id: str, provider: Provider, *, store: Store, lend: bool = True, here: bool = False,
                    **options: Any) -> str:
    """Queue the next leg of the saved session for any host; with ``lend`` a step run here uses ``provider``
    itself; ``here``: run it in this process now, on its host. Returns the leg's job id at once."""
    record = store.get(session_id)
    runs = int((record.data or {}).get("jobs", 0)) + 1 if latest_job(store, session_id) else 1
    job_id = session_id if runs == 1 else f"{session_id}-{runs}"
    store.update(session_id, data={"job": job_id, "jobs": runs})
    if lend or here:
        steps.lend(job_id, provider)
    job = session_job(session_id, provider, **options)
    if here:
        return runtime.start(perspectives_session, job, job_id=job_id)
    return runtime.enqueue(PERSPECTIVES, job, job_id=job_id, queue=steps.queue_for(provider), store_url=store.url)


def continue_session(session_id: str, provider: Provider, *, store: Store, here: bool = False, **options: Any) -> str:
    """Carry on a saved session: a leg queued or running is left as it is; a cancelled one resumes from its last
    finished step; otherwise a new leg starts from the saved state. ``here`` (a command, whose host serves no
    queue): only a leg a live host runs is left to it; anything else runs as a new leg in this process, a leg still
    queued or interrupted cancelled first."""
    job_id = latest_job(store, session_id)
    if job_id:
        try:
            current = runtime.state(job_id, store.url)
        except ClearSideError:
            current = None
        if current is not None and current.status in runtime.UNDER_WAY:
            if not here or current.status == "running":
                return job_id
            runtime.cancel(job_id, store.url)
        elif current is not None and current.status == "cancelled" and not here:
            steps.wait_stopped(job_id)  # never two executions of one job in this process
            CANCELLED.discard(job_id)
            steps.lend(job_id, provider)
            runtime.resume(job_id, queue=steps.queue_for(provider), store_url=store.url)
            return job_id
    return enqueue_session(session_id, provider, store=store, here=here, **options)


def cancel_session(session_id: str, job_id: str, *, store: Store) -> None:
    """Stop the leg: the step in flight stops at its next token (or the leg before its next step); every finished
    step and the answers stay saved, and :func:`continue_session` runs the rest."""
    runtime.cancel(job_id, store.url)
    if job_id in steps.RUNNING:
        CANCELLED.add(job_id)
    _mark(store, session_id, cancelled=True)
