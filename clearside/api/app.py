"""The API's app: its routers, its errors as JSON, a limit on request bodies, and the process that serves it.

:func:`create_app` builds the FastAPI app over one store and the server's provider (every job the API queues runs
on that provider, built from its recipe by whichever host takes the job; a client cannot point the server at
another model). :func:`serve` makes this process a runtime host with ``workers`` jobs on model servers at once (0:
none, the process only queues and follows: ``python -m clearside worker`` processes run the work) and serves the
app with uvicorn.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..providers import Provider
from ..store import Store
from . import debates, errors, live, perspectives, work

API_VERSION = "1"  # the /v1 of every path
MAX_BODY = 64 * 1024  # bytes: a question of 500 characters, its context and a few personas fit many times over


class BodyLimit:
    """Refuse a request body over ``limit`` bytes with 413, before the app reads it: by its Content-Length, or, sent
    in chunks without one, as soon as the chunks pass the limit."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await self._refuse(send)
            return
        seen, started, refused = 0, False, False

        async def counted() -> Message:
            nonlocal seen, refused
            message = await receive()
            if message["type"] == "http.request" and not refused:
                seen += len(message.get("body", b""))
                if seen > self.limit:  # answered now; the app is told the client went away, and says nothing
                    refused = True
                    if not started:
                        await self._refuse(send)
                    return {"type": "http.disconnect"}
            return message

        async def sending(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, sending)
        except Exception:
            if not refused:
                raise

    async def _refuse(self, send: Send) -> None:
        refusal = errors.TooLarge(f"The request body is over the limit of {self.limit // 1024} KB: a debate's question "
                                  "and context need far less; send only the fields the API's description lists.")
        data = json.dumps(errors.body(refusal)).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": data})


DESCRIPTION = """ClearSide's debates for other programs: blind FOR and AGAINST advocates and a neutral moderator map
both sides of a question into one schema-v1 document. Every request needs `Authorization: Bearer cs_...` (a token
from `python -m clearside token create`). Work is queued on the durable runtime (202 and links); follow it as
server-sent events. Errors are `{"error": {"type", "message", "exit_code"}}` with the command line's messages."""


def create_app(store: Store, provider: Provider, *, max_body: int = MAX_BODY) -> FastAPI:
    app = FastAPI(title="ClearSide API", version=API_VERSION, description=DESCRIPTION)
    app.state.store, app.state.provider = store, provider
    errors.install(app)
    for module in (debates, work, live, perspectives):
        app.include_router(module.router)

    @app.get("/v1/health", tags=["server"], summary="Whether the server answers (no token needed)")
    def health() -> dict[str, Any]:
        return {"status": "ok", "api": API_VERSION, "provider": provider.spec}

    app.add_middleware(BodyLimit, limit=max_body)
    return app
