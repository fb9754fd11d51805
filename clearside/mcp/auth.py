"""Who is asking over streamable HTTP: the HTTP API's own tokens (``python -m clearside token create``), checked by
the API's own function (:func:`clearside.api.auth.caller`) before the MCP layer sees a request.

A request without ``Authorization: Bearer cs_...``, or with an unknown or revoked token, is refused with 401 and the
API's JSON error (its class, the message naming the fix, the exit code). The token then rides on the request to the
tools (:func:`caller_of`): the debates it maps carry its owner; it sees, challenges and lists only its own (every
debate with an admin token), another's answered as an unknown id; its debates and challenges count against its
rate limits, the dashboard's (:class:`clearside.limits.Limits`). Over stdio there is no token: whoever started the
process sees every debate, as on the command line.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from types import SimpleNamespace
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..api.auth import Caller, caller
from ..api.errors import body, status_of
from ..errors import ClearSideError
from ..store import Record, Store

STATE_KEY = "clearside_caller"


class TokenGuard:
    """ASGI middleware: every HTTP request's token checked; refused with 401, else handed on with its caller."""

    def __init__(self, app: ASGIApp, store: Store) -> None:
        self.app = app
        self.holder = SimpleNamespace(state=SimpleNamespace(store=store))  # what caller() reads the store from

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            who = await anyio.to_thread.run_sync(caller, Request({**scope, "app": self.holder}))
        except ClearSideError as exc:
            refusal = JSONResponse(body(exc), status_code=status_of(exc), headers={"WWW-Authenticate": "Bearer"})
            await refusal(scope, receive, send)
            return
        await self.app({**scope, "state": {**scope.get("state", {}), STATE_KEY: who}}, receive, send)


def caller_of(ctx: Any) -> Caller | None:
    """The token of the request a tool was called in (None over stdio)."""
    request = getattr(ctx.request_context, "request", None)
    state = getattr(request, "scope", {}).get("state") or {}
    return state.get(STATE_KEY)


def visible(store: Store, debate_id: str, who: Caller | None) -> Record:
    """The saved debate if ``who`` may see it (anyone over stdio); an unknown one and another token's are refused
    alike, as the API refuses them."""
    return store.get(debate_id) if who is None else who.debate(debate_id)


def starts(who: Caller | None) -> AbstractContextManager[Any]:
    """A debate start counted against the token's limit (given back if it fails); nothing over stdio."""
    return who.limits.starts.slot() if who is not None else nullcontext()


def challenges(who: Caller | None) -> AbstractContextManager[Any]:
    """A challenge counted against the token's limit; nothing over stdio."""
    return who.limits.challenges.slot() if who is not None else nullcontext()

