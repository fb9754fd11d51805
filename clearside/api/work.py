"""Work on a finished static debate: challenge an element, re-map under weights and stances; their jobs followed.

A challenge's answer is added to the debate once complete; a re-map is saved as the debate's next version (the
debate itself never changes). Both run on the runtime (workflows ``clearside.challenge`` and ``clearside.remap``)
and count against the token's challenge limit. Their job ids begin with the debate's id, so a token reaches a job
only through a debate it sees.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from .. import runtime
from ..errors import NotFound
from ..schema import Document
from ..static import remap
from ..static import workflow as workflows
from ..static.job import ChallengeJob, RemapJob
from . import sse
from .auth import Auth, Caller
from .debates import provider
from .models import Accepted, JobState, Links, NewChallenge, NewRemap

router = APIRouter(prefix="/v1", tags=["challenges and re-maps"])
KINDS = {workflows.CHALLENGE: "challenge", workflows.REMAP: "remap", workflows.STATIC: "static"}


def job_links(debate_id: str, job_id: str) -> Links:
    base = f"/v1/debates/{debate_id}/jobs/{job_id}"
    return Links(self=base, events=f"{base}/events", document=f"/v1/debates/{debate_id}/document")


def _accepted(response: Response, debate_id: str, job_id: str, kind: str) -> Accepted:
    made = job_links(debate_id, job_id)
    response.headers["Location"] = made.self
    return Accepted(id=job_id, kind=kind, status="queued", job=job_id, links=made)


@router.post("/debates/{debate_id}/challenges", status_code=202, response_model=Accepted,
             summary="Challenge one element of a finished debate")
def challenge(debate_id: str, body: NewChallenge, who: Auth, request: Request, response: Response) -> Accepted:
    who.debate(debate_id)
    with who.limits.challenges.slot():
        job = ChallengeJob(who.store, debate_id, body.action, body.target, provider(request),
                           temperature=body.temperature).start()
    return _accepted(response, debate_id, job.id, "challenge")


@router.post("/debates/{debate_id}/remaps", status_code=202, response_model=Accepted,
             summary="Re-map the synthesis under your weights and stances (saved as the next version)")
def remap_debate(debate_id: str, body: NewRemap, who: Auth, request: Request, response: Response) -> Accepted:
    record = who.debate(debate_id)
    stances: list = []
    if record.document is not None:
        stances = remap.stances_for(Document.model_validate(record.document), accept=body.accept, reject=body.reject,
                                    unsure=body.unsure)
    conditions = remap.Conditions(body.weights, tuple(stances), body.whole)
    with who.limits.challenges.slot():
        job = RemapJob(who.store, debate_id, conditions, provider(request), temperature=body.temperature,
                       retries=body.retries, lend=False).start()
    return _accepted(response, debate_id, job.id, "remap")


def _job(who: Caller, debate_id: str, job_id: str) -> runtime.JobState:
    who.debate(debate_id)
    if not job_id.startswith(f"{debate_id}:") and not (job_id == debate_id or job_id.startswith(f"{debate_id}-")):
        raise NotFound(f"Debate {debate_id} has no job {job_id}: a challenge or re-map answered 202 with its own.")
    return runtime.state(job_id, who.store.url)


def job_state(who: Caller, debate_id: str, job_id: str) -> JobState:
    now = _job(who, debate_id, job_id)
    result = now.result or {}
    kind = KINDS.get(now.name, now.name)
    done = now.status == "done"
    return JobState(id=job_id, debate=debate_id, kind=kind, status=now.status,
                    error=(result.get("message") or now.error) if now.status in ("failed", "cancelled") else "",
                    version=int(result["number"]) if done and kind == "remap" else None,
                    challenge=int(result["number"]) if done and kind == "challenge" else None,
                    links=job_links(debate_id, job_id))


@router.get("/debates/{debate_id}/jobs/{job_id}", response_model=JobState, summary="A challenge's or re-map's job")
def get_job(debate_id: str, job_id: str, who: Auth) -> JobState:
    return job_state(who, debate_id, job_id)


@router.get("/debates/{debate_id}/jobs/{job_id}/events", summary="Follow a job (server-sent events)",
            response_class=Response, responses={200: {"content": {"text/event-stream": {}}}})
def job_events(debate_id: str, job_id: str, who: Auth, deltas: bool = True) -> Response:
    _job(who, debate_id, job_id)
    return sse.response(sse.follow(job_id, who.store.url, lambda: job_state(who, debate_id, job_id), deltas=deltas))


@router.post("/debates/{debate_id}/jobs/{job_id}/cancel", response_model=JobState, summary="Stop a job")
def cancel_job(debate_id: str, job_id: str, who: Auth) -> JobState:
    if not _job(who, debate_id, job_id).finished:
        runtime.cancel(job_id, who.store.url)
    return job_state(who, debate_id, job_id)
