"""Static debates and what every saved debate shares: create, read, follow, list and search, export, cancel,
resume, delete.

Each piece of work is queued on the runtime for any host (``lend=False``: every host builds the server's provider
from the job's recipe), and the request returns at once (202 and the links to follow). A token sees only its own
debates (:class:`clearside.api.auth.Caller`).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.responses import JSONResponse

from .. import modes, runtime
from ..errors import InputError
from ..render import FORMATS, render
from ..runtime.status import debate_statuses
from ..schema import Document
from ..static import personas
from ..static import workflow as workflows
from ..static.job import new_job
from ..static.run import DebateRun
from ..store import ListQuery
from . import sse
from .auth import Auth, Caller
from .errors import Conflict
from .models import Accepted, DebateList, DebateState, NewDebate, Version
from .status import job_of, links, listed, state_of

router = APIRouter(prefix="/v1", tags=["debates"])
EXPORTS = (*FORMATS, "file")
MEDIA = {"json": "application/json", "aif": "application/json", "file": "application/json", "md": "text/markdown",
         "quick": "text/markdown"}
EXTENSIONS = {"md": "md", "quick": "quick.md", "script": "script.txt", "argdown": "argdown", "aif": "aif.json",
              "kialo": "kialo.txt", "json": "json", "file": "export.json"}


def provider(request: Request) -> Any:
    return request.app.state.provider


def accepted(response: Response, debate_id: str, kind: str, job_id: str | None) -> Accepted:
    made = links(debate_id, kind)
    response.headers["Location"] = made.self
    return Accepted(id=debate_id, kind=kind, status="queued", job=job_id, links=made)


def _personas(names: list[str] | None) -> list[Any] | None:
    if not names:
        return None
    own = [name for name in names if ":" in name]
    return personas.choose([name for name in names if ":" not in name], own)


@router.post("/debates", status_code=202, response_model=Accepted, summary="Start a debate (queued)")
def create_debate(body: NewDebate, who: Auth, request: Request, response: Response) -> Accepted:
    run = DebateRun.from_input(body.question, geography=body.geography, timeframe=body.timeframe, domain=body.domain,
                               personas=_personas(body.personas))
    store, made = who.store, provider(request)
    with who.limits.starts.slot():  # refused input above never counts; a failure below gives the start back
        job = new_job(store, run, made, temperature=body.temperature, strategy=body.strategy, owner=who.owner)
        try:
            job_id = workflows.enqueue_static(job.id, made, lend=False, store=store, temperature=body.temperature,
                                              retries=body.retries, strategy=body.strategy)
        except BaseException:
            store.delete(job.id)  # nothing queued: nothing kept
            raise
    return accepted(response, job.id, "static", job_id)


@router.get("/debates", response_model=DebateList, summary="List and search saved debates, newest first")
def list_debates(who: Auth, search: Annotated[str, Query(max_length=200)] = "",
                 kind: Annotated[str | None, Query(pattern="^(static|live|perspectives)$")] = None,
                 status: Annotated[str | None, Query(pattern="^(running|paused|failed|done|queued)$")] = None,
                 limit: Annotated[int, Query(ge=1, le=200)] = 50,
                 offset: Annotated[int, Query(ge=0)] = 0) -> DebateList:
    store = who.store
    page = store.list(ListQuery(search=search, kind=kind, status=status, limit=limit, offset=offset,
                                owner=None if who.admin else who.owner))
    shown = debate_statuses(store, page.items)
    return DebateList(items=[listed(item, shown[item.id]) for item in page.items], total=page.total, limit=limit,
                      offset=offset)


@router.get("/debates/{debate_id}", response_model=DebateState, summary="A debate's state")
def get_debate(debate_id: str, who: Auth) -> DebateState:
    return state_of(who.store, who.debate(debate_id))


def _document(who: Caller, debate_id: str) -> Document:
    record = who.debate(debate_id)
    if record.kind != "static":
        raise InputError(f"Debate {debate_id} is a {record.kind} debate: GET {links(debate_id, record.kind).document} "
                         "gives it.")
    if record.document is None:
        state = state_of(who.store, record)
        raise Conflict(f"Debate {debate_id} has no document yet (it is {state.status}): follow "
                       f"{state.links.events}, or resume it (POST {state.links.self}/resume) if it stopped.")
    return Document.model_validate(record.document)


@router.get("/debates/{debate_id}/document", responses={200: {"model": Document}}, summary="A debate's document")
def get_document(debate_id: str, who: Auth) -> JSONResponse:
    """The schema-v1 document of a finished static debate, with every challenge answered since."""
    return JSONResponse(_document(who, debate_id).dump())


@router.get("/debates/{debate_id}/events", summary="Follow a debate's progress (server-sent events)",
            response_class=Response, responses={200: {"content": {"text/event-stream": {}}}})
def debate_events(debate_id: str, who: Auth, deltas: bool = True,
                  last_event_id: Annotated[str | None, Header()] = None) -> Response:
    record = who.debate(debate_id)
    store = who.store
    return sse.response(sse.follow(job_of(record, record.data), store.url,
                                   lambda: state_of(store, store.get(debate_id)), after=sse.last_seen(last_event_id),
                                   deltas=deltas))


@router.get("/debates/{debate_id}/export", summary="A debate in any format render knows, or as its export file",
            response_class=Response, responses={200: {"content": {"text/markdown": {}, "text/plain": {},
                                                                   "application/json": {}}}})
def export(debate_id: str, who: Auth, format: Annotated[str, Query(description=", ".join(EXPORTS))] = "json",
           version: Annotated[int | None, Query(ge=1)] = None) -> Response:
    fmt = format.strip().lower()
    if fmt not in EXPORTS:
        raise InputError(f"Unknown format {format!r}; choose one of: {', '.join(EXPORTS)}.")
    record = who.debate(debate_id)
    if fmt == "file":
        text = json.dumps(modes.export_data(who.store, debate_id), indent=2, ensure_ascii=False) + "\n"
    else:
        document = _version(who, debate_id, version) if version is not None else _document(who, record.id)
        text = render(document, fmt)
    return Response(text, media_type=MEDIA.get(fmt, "text/plain"), headers={
        "Content-Disposition": f'attachment; filename="clearside-{debate_id}.{EXTENSIONS[fmt]}"'})


def _version(who: Caller, debate_id: str, number: int) -> Document:
    who.debate(debate_id)
    return Document.model_validate((who.store.version(debate_id, number).body or {})["document"])


@router.get("/debates/{debate_id}/versions", response_model=list[Version], summary="A debate's re-maps")
def versions(debate_id: str, who: Auth) -> list[Version]:
    who.debate(debate_id)
    return [Version(**{k: v for k, v in item.as_dict().items() if k in Version.model_fields})
            for item in who.store.versions(debate_id)]


@router.get("/debates/{debate_id}/versions/{number}", responses={200: {"model": Document}},
            summary="A re-mapped version's document")
def version(debate_id: str, number: int, who: Auth) -> JSONResponse:
    return JSONResponse(_version(who, debate_id, number).dump())


@router.post("/debates/{debate_id}/cancel", response_model=DebateState, summary="Stop a debate's job")
def cancel(debate_id: str, who: Auth) -> DebateState:
    """The step in flight stops at its next token; what finished stays saved (resume completes the rest)."""
    record = who.debate(debate_id)
    job_id = job_of(record, record.data)
    if job_id and not runtime.state(job_id, who.store.url).finished:
        stop = modes.mode(record.kind).cancel
        if stop is not None:
            stop(who.store, debate_id)
    return state_of(who.store, who.store.get(debate_id))


@router.post("/debates/{debate_id}/resume", status_code=202, response_model=Accepted,
             summary="Finish a stopped static debate (only its missing sections run)")
def resume(debate_id: str, who: Auth, request: Request, response: Response) -> Accepted:
    record = who.debate(debate_id)
    if record.kind != "static":
        raise InputError(f"Debate {debate_id} is a {record.kind} debate: resume a static one here.")
    if record.document is not None:
        raise Conflict(f"Debate {debate_id} is already complete: GET {links(debate_id, 'static').document}.")
    with who.limits.starts.slot():
        job_id = workflows.continue_static(debate_id, provider(request), store=who.store, lend=False)
    return accepted(response, debate_id, "static", job_id)


@router.delete("/debates/{debate_id}", status_code=204, response_class=Response, summary="Delete a debate")
def delete(debate_id: str, who: Auth) -> Response:
    """Its job stopped first if under way; the debate and everything in it deleted. Cannot be undone."""
    record = who.debate(debate_id)
    job_id = job_of(record, record.data)
    if job_id and not runtime.state(job_id, who.store.url).finished and modes.mode(record.kind).cancel is not None:
        modes.mode(record.kind).cancel(who.store, debate_id)
    who.store.delete(debate_id)
    return Response(status_code=204)
