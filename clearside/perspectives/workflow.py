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

Progress follows the runtime's pattern: the session's :class:`StreamView` (the streamed text and a provider retry's
notice) in this process's memory (:data:`clearside.runtime.steps.LOCAL`) while a step runs here, and folded from the
job's progress rows (:class:`clearside.runtime.progress.Follower`) for a page on any other process. A
cancel (``runtime.cancel``) stops the step in flight at its next token; finished steps stay saved, and
:func:`continue_session` resumes the cancelled leg from its last finished step.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from dbos import DBOS

from .. import runtime
from ..errors import Cancelled, ClearSideError
from ..providers import Provider
from ..runtime import steps
from ..runtime.events import Event
from ..store import Store
from .runner import PerspectivesRun, load

log = logging.getLogger("clearside.jobs")

PERSPECTIVES = "clearside.perspectives"
_RESETS = ("start", "state", "agent_output", "synthesis", "clarification_questions",
           "retrying")  # a provider retry: the call is made again from its start


@dataclass
class StreamView:
    """A perspectives session's view: the text streamed so far by the call in flight, and the provider retry it is in
    (``notice``: "retrying (2/3)… cause"; "" once it streams again)."""

    text: str = ""
    notice: str = ""

    def fold(self, event: Event) -> None:
        """A delta adds to the text; a step's start or end, or a provider retry, clears it. A provider retry sets the
        notice; text streaming again, or a step's start or end, clears it."""
        if event.kind == "delta":
            self.text, self.notice = self.text + event.text, ""
        elif event.kind in _RESETS:
            self.text, self.notice = "", event.text if event.kind == "retrying" else ""


def sink(job_id: str) -> steps.Sink:
    """A step's events: its streamed text here and in the progress rows; a cancel stops it at its next delta."""
    events = steps.Sink(job_id, StreamView(), stops=steps.Stops(at=("delta",)))
    events(Event("start"))  # a rerun step's text starts afresh
    return events


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
    events = sink(job_id)
    try:
        provider = steps.provider_for(job_id, job)
        run = PerspectivesRun.resume(job["session_id"], provider, store, retries=job.get("retries", 2),
                                     temperature=job.get("temperature", 0.7),
                                     context_tokens=job.get("context_tokens"), on_event=events)
        more = run.advance()
        if more and events.cancelled(now=True):  # cancelled after its last token: what it saved stays, the leg stops
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
        events.close()
    return {"status": "ok", "more": more, "state": run.session.state}


@DBOS.workflow(name=PERSPECTIVES)
def perspectives_session(job: dict[str, Any]) -> dict[str, Any]:
    """One leg of a saved session: its steps until it waits for the answers or is complete (``job``: see
    :func:`session_job`)."""
    job_id = DBOS.workflow_id or job["session_id"]
    log.info("job %s started: perspectives session %s", job_id, job["session_id"])
    with steps.in_process(job_id):
        outcome = _steps(job_id, job)
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
    carried = steps.carry_on(latest_job(store, session_id), provider, here=here, store_url=store.url)
    return carried or enqueue_session(session_id, provider, store=store, here=here, **options)


def cancel_session(session_id: str, job_id: str, *, store: Store) -> None:
    """Stop the leg: the step in flight stops at its next token (or the leg before its next step); every finished
    step and the answers stay saved, and :func:`continue_session` runs the rest."""
    runtime.cancel(job_id, store.url)
    steps.cancel_here(job_id)
    _mark(store, session_id, cancelled=True)
