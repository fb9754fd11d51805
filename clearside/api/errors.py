"""Errors as JSON, in one place: ClearSide's own error classes, with the command line's messages, mapped to HTTP.

Every refusal is ``{"error": {"type": "InputError", "message": "...", "exit_code": 2}}`` with the status of its
class (:data:`STATUSES`, the first class in the error's MRO that is listed): bad input 400 (an unknown or someone
else's debate 404), a rate limit 429 with ``Retry-After``, the server's settings or store 503, a model backend 502.
FastAPI's own validation of a body or a query becomes an ``InputError`` naming the field, 422; a body that is not
JSON 400; one over the size limit 413 (:class:`TooLarge`, refused before it is read).
"""

from __future__ import annotations

import logging
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from ..errors import (
    Cancelled,
    ClearSideError,
    ConfigError,
    InputError,
    JobFailed,
    NotFound,
    ProviderError,
    ProviderUnreachable,
    SchemaViolationError,
    StoreError,
)
from ..limits import RateLimited

log = logging.getLogger("clearside.api")


class Unauthorized(ClearSideError):
    """No token, an unknown one or a revoked one."""

    exit_code = 2


class Forbidden(ClearSideError):
    """A token that may not do this (an admin's operation)."""

    exit_code = 2


class TooLarge(InputError):
    """A request body over the server's limit."""


class Conflict(InputError):
    """The debate is not in a state that allows this yet (a document asked of a debate still running)."""


STATUSES: dict[type[ClearSideError], int] = {
    Unauthorized: 401, Forbidden: 403, NotFound: 404, Conflict: 409, TooLarge: 413, RateLimited: 429,
    InputError: 400, Cancelled: 409, ProviderUnreachable: 503, SchemaViolationError: 502, ProviderError: 502,
    StoreError: 503, ConfigError: 503, JobFailed: 500, ClearSideError: 500,
}


def status_of(exc: ClearSideError) -> int:
    for kind in type(exc).__mro__:
        if kind in STATUSES:
            return STATUSES[kind]
    return 500


def body(exc: ClearSideError, kind: str | None = None) -> dict[str, Any]:
    return {"error": {"type": kind or type(exc).__name__, "message": str(exc), "exit_code": exc.exit_code}}


def _clearside(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ClearSideError)
    status = status_of(exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
    if isinstance(exc, RateLimited):
        headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
    if status >= 500:
        log.warning("%s: %s", type(exc).__name__, exc)
    return JSONResponse(body(exc), status_code=status, headers=headers)


def _where(error: dict[str, Any]) -> str:
    place = [str(part) for part in error.get("loc", ()) if part not in ("body", "query", "path")]
    return ".".join(place) or "the body"


def _validation(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        found = next(e for e in errors if e.get("type") == "json_invalid")
        problem = (found.get("ctx") or {}).get("error", "malformed")
        refusal = InputError(f"The request body is not valid JSON ({problem}): send one JSON object with "
                             "Content-Type: application/json.")
        return JSONResponse(body(refusal), status_code=400)
    shown = "; ".join(f"{_where(e)}: {e.get('msg', 'invalid')}" for e in errors[:5])
    more = f" (+{len(errors) - 5} more)" if len(errors) > 5 else ""
    refusal = InputError(f"The request was refused: {shown}{more}. Fix those fields (the API's description at "
                         "/docs lists each field and its limits).")
    return JSONResponse(body(refusal), status_code=422)


def _http(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    words = {404: "No such endpoint: the API's description at /docs lists them.",
             405: "This endpoint does not take that method: the API's description at /docs lists what it takes."}
    refusal = InputError(words.get(exc.status_code, str(exc.detail)))
    return JSONResponse(body(refusal), status_code=exc.status_code, headers=getattr(exc, "headers", None))


def install(app: FastAPI) -> None:
    """Every error the app raises answered as JSON."""
    app.add_exception_handler(ClearSideError, _clearside)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(HTTPException, _http)
