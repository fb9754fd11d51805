"""Who is asking: the bearer token of every request, what it may see, and its rate limits.

``Authorization: Bearer cs_...`` names a token made by ``python -m clearside token create`` (the store keeps only the
hash of its secret: :mod:`clearside.store.tokens`). A missing, unknown or revoked token is refused (401) before the
request does anything. A token sees the debates it made (their ``owner`` is ``api-`` and its id); an admin token
sees every debate, the dashboard's and the command line's included. Another token's debate is answered as an
unknown id (404), so a token learns nothing of what it may not see.

Each token has the dashboard's limits (:class:`clearside.limits.Limits`, from the same environment variables), kept
in this process: with several API processes behind one address, a token's limit holds per process.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request

from ..errors import NotFound
from ..limits import Limits
from ..store import Record, Store, check_id
from ..store.tokens import TokenRow, token_for
from .errors import Forbidden, Unauthorized

_limits: dict[str, Limits] = {}
_lock = threading.Lock()


def limits_of(token_id: str) -> Limits:
    """The token's rate limits in this process (made from the environment on first use)."""
    with _lock:
        made = _limits.get(token_id)
        if made is None:
            made = _limits[token_id] = Limits.from_env(per="API token")
        return made


@dataclass(frozen=True)
class Caller:
    """The token a request came with."""

    token: TokenRow
    store: Store

    @property
    def owner(self) -> str:
        return self.token.owner

    @property
    def admin(self) -> bool:
        return self.token.admin

    @property
    def limits(self) -> Limits:
        return limits_of(self.token.id)

    def sees(self, data: dict[str, Any] | None) -> bool:
        return self.admin or (data or {}).get("owner") == self.owner

    def debate(self, debate_id: str) -> Record:
        """The saved debate ``debate_id`` if this token may see it; else NotFound, as for an unknown id."""
        debate_id = check_id(debate_id)  # a malformed id: NotFound, saying what an id looks like
        unseen = NotFound(f"No saved debate has the id {debate_id}. GET /v1/debates lists the ones this token sees.")
        try:
            record = self.store.get(debate_id)
        except NotFound:
            raise unseen from None  # the same words as for another token's: nothing learnt of what it may not see
        if not self.sees(record.data):
            raise unseen
        return record

    def need_admin(self, what: str) -> None:
        if not self.admin:
            raise Forbidden(f"{what} needs an admin token: `python -m clearside token create --admin`.")


def _secret(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, secret = header.partition(" ")
    if not header:
        raise Unauthorized("No API token: send `Authorization: Bearer cs_...` with a token from "
                           "`python -m clearside token create`.")
    if scheme.lower() != "bearer" or not secret.strip():
        raise Unauthorized("The Authorization header must be `Bearer cs_...`, a token from "
                           "`python -m clearside token create`.")
    return secret.strip()


def caller(request: Request) -> Caller:
    """The request's token, checked: the dependency of every endpoint but the API's description."""
    store: Store = request.app.state.store
    token = token_for(store, _secret(request))
    if token is None:
        raise Unauthorized("Unknown API token: check it, or make one with `python -m clearside token create`.")
    if token.revoked:
        raise Unauthorized(f"The API token {token.id} was revoked: make a new one with "
                           "`python -m clearside token create`.")
    return Caller(token, store)


Auth = Annotated[Caller, Depends(caller)]
