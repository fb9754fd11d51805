"""Perspectives sessions: start one (its clarifying questions are asked on the runtime), read it, answer the
questions (the rounds and the synthesis are then queued), retry a failed leg, cancel.

Each leg is the workflow ``clearside.perspectives`` on any host (:class:`clearside.perspectives.job.PerspectivesJob`,
as the Perspectives page and the ``perspectives`` command run it); a leg's progress streams at
``/v1/debates/{id}/events`` like any debate's.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from ..errors import InputError
from ..perspectives.job import PerspectivesJob
from ..perspectives.runner import PerspectivesRun
from .auth import Auth, Caller
from .debates import accepted, provider
from .models import Accepted, Answers, NewSession

router = APIRouter(prefix="/v1/perspectives", tags=["perspectives"])


def _job(who: Caller, session_id: str, request: Request) -> PerspectivesJob:
    record = who.debate(session_id)
    if record.kind != "perspectives":
        raise InputError(f"Debate {session_id} is a {record.kind} debate, not a perspectives session: "
                         f"GET /v1/debates/{session_id}.")
    return PerspectivesJob(PerspectivesRun.resume(session_id, provider(request), who.store))


def view(job: PerspectivesJob) -> dict[str, Any]:
    snap = job.snapshot()
    return {"id": job.id, "kind": "perspectives", "status": snap.status, "step": snap.step, "error": snap.error,
            "questions": list(snap.session.clarification_questions), "session": snap.session.file(),
            "links": {"self": f"/v1/perspectives/{job.id}", "events": f"/v1/debates/{job.id}/events"}}


@router.post("", status_code=202, response_model=Accepted, summary="Start a perspectives session (queued)")
def create_session(body: NewSession, who: Auth, request: Request, response: Response) -> Accepted:
    with who.limits.starts.slot():
        run = PerspectivesRun.create(body.question, provider(request), rounds=body.rounds, store=who.store,
                                     owner=who.owner, retries=body.retries, temperature=body.temperature)
        job = PerspectivesJob(run).ask()
    return accepted(response, job.id, "perspectives", job.job_id)


@router.get("/{session_id}", summary="A session: its state, clarifying questions and what its models wrote")
def get_session(session_id: str, who: Auth, request: Request) -> dict[str, Any]:
    return view(_job(who, session_id, request))


@router.post("/{session_id}/answers", status_code=202, summary="Answer the clarifying questions; the rounds follow")
def answer(session_id: str, body: Answers, who: Auth, request: Request) -> dict[str, Any]:
    job = _job(who, session_id, request)
    session = job.snapshot().session
    if session.state != "CLARIFICATION_PENDING":
        raise InputError(f"Session {session_id} is not waiting for answers ({session.state}): its answers are fixed.")
    count = len(session.clarification_questions)
    if len(body.answers) != count:
        raise InputError(f"This session has {count} clarifying questions and {len(body.answers)} answers were given: "
                         "give one per question, in order (an empty one skips its question).")
    empty = [n for n, text in enumerate(body.answers, 1) if not text.strip()]
    with who.limits.challenges.slot():
        job.answer(body.answers, sorted({*body.skip, *empty}))
    return view(job)


@router.post("/{session_id}/retry", status_code=202, summary="Continue a failed or cancelled session")
def retry(session_id: str, who: Auth, request: Request) -> dict[str, Any]:
    job = _job(who, session_id, request)
    with who.limits.starts.slot():
        job.retry()
    return view(job)


@router.post("/{session_id}/cancel", summary="Stop the leg in flight")
def cancel(session_id: str, who: Auth, request: Request) -> dict[str, Any]:
    job = _job(who, session_id, request)
    job.cancel()
    return view(job)
