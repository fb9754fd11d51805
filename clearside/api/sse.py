"""A job's progress as server-sent events, from its progress rows: any API process follows work any host runs.

The stream (``text/event-stream``) sends, in order:

- ``event: progress``, one per entry the job's steps wrote (:mod:`clearside.runtime.progress`): ``{"kind", "agent",
  "text", "data"}`` as :class:`clearside.runtime.events.Event` has them (``kind`` ``delta`` is streamed text; a
  client that wants only the milestones asks ``?deltas=false``). The last entry of each batch carries ``id:``, the
  row it came from: a client that reconnects with ``Last-Event-ID`` (browsers do) gets only what it has not seen;
- ``event: status`` whenever the job's status changes (``{"status": "running"}``...);
- ``event: end`` once the job has finished: the debate's (or job's) final state, the same body its GET answers;
  then the stream closes (``event: error`` instead, with the error's body, when the debate was deleted meanwhile).

A comment line (``: keep-alive``) every :data:`KEEP_ALIVE` seconds keeps proxies from closing a quiet stream. A
client that goes away stops only its stream: the work is the runtime's and goes on (nothing here runs it).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from .. import runtime
from ..errors import ClearSideError
from ..runtime import progress
from .errors import body

POLL_SECONDS = 0.3
KEEP_ALIVE = 15.0
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}  # nginx: pass each event on at once


def event(kind: str, data: Any, event_id: int | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def last_seen(header: str | None) -> int:
    """The row a reconnecting client saw last (its ``Last-Event-ID``; 0 without one or for a malformed one)."""
    try:
        return max(0, int((header or "").strip()))
    except ValueError:
        return 0


async def _drain(job_id: str, after: int, url: str, deltas: bool) -> tuple[list[bytes], int]:
    entries, last = await run_in_threadpool(progress.read, job_id, after, url)
    shown = [entry for entry in entries if deltas or entry.get("kind") != "delta"]
    out = [event("progress", entry, last if number == len(shown) - 1 else None) for number, entry in enumerate(shown)]
    if not shown and last != after:  # only deltas, left out: still say how far the client has read
        out.append(f"id: {last}\n\n".encode())
    return out, last


async def follow(job_id: str | None, url: str, end: Callable[[], Any], *, after: int = 0,
                 deltas: bool = True) -> AsyncIterator[bytes]:
    """The events of ``job_id`` after row ``after`` until it finishes, then ``end()`` (the final state) as ``end``."""
    yield b"retry: 2000\n\n"
    status, quiet = None, time.monotonic()
    while job_id is not None:
        out, after = await _drain(job_id, after, url, deltas)
        now = await run_in_threadpool(runtime.state, job_id, url)
        if now.status != status:
            status = now.status
            out.append(event("status", {"status": status}))
        for chunk in out:
            yield chunk
        if out:
            quiet = time.monotonic()
        if now.finished:
            rest, after = await _drain(job_id, after, url, deltas)  # written as it ended
            for chunk in rest:
                yield chunk
            break
        if time.monotonic() - quiet >= KEEP_ALIVE:
            quiet = time.monotonic()
            yield b": keep-alive\n\n"
        await asyncio.sleep(POLL_SECONDS)
    try:
        final = await run_in_threadpool(end)
    except ClearSideError as exc:  # the debate was deleted while it was followed
        yield event("error", body(exc)["error"])
        return
    yield event("end", final.model_dump(mode="json") if hasattr(final, "model_dump") else final)


def response(stream: AsyncIterator[bytes]) -> StreamingResponse:
    return StreamingResponse(stream, media_type="text/event-stream", headers=HEADERS)
