"""Live debates: start one, read where it stands (its transcript), follow it, pause, resume, step, intervene.

The live debate is the workflow ``clearside.live`` on any host, steered by messages (:class:`clearside.live.job.
LiveJob`, as the dashboard's Live page steers it); its progress streams at ``/v1/debates/{id}/events`` like any
debate's. Interventions count against the token's challenge limit, a new debate against its start limit.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from ..errors import InputError
from ..live.debate import LiveDebate, Origin
from ..live.job import LiveJob
from ..live.protocol import LiveConfig
from .auth import Auth, Caller
from .debates import accepted, provider
from .models import Accepted, NewIntervention, NewLive, Pause

router = APIRouter(prefix="/v1/live", tags=["live debates"])


def _job(who: Caller, debate_id: str, request: Request) -> LiveJob:
    record = who.debate(debate_id)
    if record.kind != "live":
        raise InputError(f"Debate {debate_id} is a {record.kind} debate, not a live one: GET /v1/debates/{debate_id}.")
    return LiveJob.follow(who.store, debate_id, provider(request))


def view(job: LiveJob) -> dict[str, Any]:
    snap = job.snapshot()
    return {"id": job.id, "kind": "live", "status": snap.status, "activity": snap.activity, "speaker": snap.speaker,
            "speech": snap.speech, "step_mode": snap.step_mode, "error": snap.error,
            "transcript": snap.transcript.model_dump(mode="json"),
            "links": {"self": f"/v1/live/{job.id}", "events": f"/v1/debates/{job.id}/events"}}


@router.post("", status_code=202, response_model=Accepted, summary="Start a live debate (queued)")
def create_live(body: NewLive, who: Auth, request: Request, response: Response) -> Accepted:
    config = LiveConfig.from_env(words_per_minute=body.words_per_minute, temperature=body.temperature,
                                 schema_retries=body.retries)
    with who.limits.starts.slot():
        debate = LiveDebate.create(body.question, provider(request), config=config, store=who.store,
                                   context_fields={"geography": body.geography, "timeframe": body.timeframe,
                                                   "domain": body.domain}, origin=Origin(owner=who.owner))
        job = LiveJob(debate, step_mode=body.step_mode, store=who.store).start()
    return accepted(response, job.id, "live", job.job_id)


@router.get("/{debate_id}", summary="A live debate: its state, the turn in flight and its transcript")
def get_live(debate_id: str, who: Auth, request: Request) -> dict[str, Any]:
    return view(_job(who, debate_id, request))


@router.post("/{debate_id}/pause", summary="Pause within half a second (with a question, the agent answers it)")
def pause(debate_id: str, who: Auth, request: Request, body: Pause | None = None) -> dict[str, Any]:
    job = _job(who, debate_id, request)
    if body is not None and body.question:
        with who.limits.challenges.slot():
            job.pause(body.question, body.to)
    else:
        job.pause()
    return view(job)


@router.post("/{debate_id}/resume", summary="Resume a paused live debate")
def resume(debate_id: str, who: Auth, request: Request) -> dict[str, Any]:
    job = _job(who, debate_id, request)
    job.resume()
    return view(job)


@router.post("/{debate_id}/step", summary="Run exactly one more turn (step mode)")
def step(debate_id: str, who: Auth, request: Request) -> dict[str, Any]:
    job = _job(who, debate_id, request)
    job.step()
    return view(job)


@router.post("/{debate_id}/interventions", status_code=202, summary="Intervene: a question, a clarification, "
             "evidence (as text) or a question to one speaker")
def intervene(debate_id: str, body: NewIntervention, who: Auth, request: Request) -> dict[str, Any]:
    job = _job(who, debate_id, request)
    with who.limits.challenges.slot():
        item = job.submit(body.type, body.text, body.to)
    return {"intervention": item.model_dump(mode="json"), **view(job)}
