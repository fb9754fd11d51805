"""Asking a model server again after a fault that asking again may clear.

Retried: HTTP 429 (too many requests), 500, 502, 503 and 504, a request that timed out, a connection dropped
mid-stream, and a stream that ended before its final event (a provider fault, never an invalid reply: the
reply is incomplete, not wrong). Not retried: other statuses (401, 404, 400...), a server that refuses the
connection (it is not running), a stream that is not valid JSON on the wire (the server is broken).

The wait is the server's ``Retry-After`` in seconds where it sends one (at most ``RETRY_AFTER_CAP_S``),
else exponential backoff with jitter: ``backoff``, twice that, four times… (each cut by up to half at
random, none longer than ``BACKOFF_CAP_S``). Before each new attempt the caller's retry notice
(``base.retry_notices``) hears of it, "retrying (2/3)…" on the page and in the command line. After ``attempts``
tries the call fails with a ProviderError naming the provider, the model, the endpoint, the cause and the fix.
A call that already streamed text is asked again only where the caller set a retry notice (it then drops what
streamed: the engine's "retry" event resets the agent's text); without one it is passed on as it is, so no
delta reaches ``on_delta`` twice.
The waits happen inside the endpoint's slot (limits.py): a call backing off still counts against
``concurrency``, so an overloaded server gets no new request in its place.

The OpenAI-compatible and Ollama providers both retry here (the openai client's own retries are off), so
the two wire formats behave the same, for a streamed chat and for the model list alike.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import ProviderError
from .base import OnDelta, retry_notice
from .limits import ATTEMPTS, BACKOFF_CAP_S, BACKOFF_S, RETRY_AFTER_CAP_S, checked_attempts, checked_backoff


def retrying_text(data: Mapping[str, Any]) -> str:
    """A provider retry as the user reads it: "retrying (2/3)… the server answered HTTP 503; waiting 0.5 s"."""
    wait = f"; waiting {data['wait']:g} s" if data.get("wait") else ""
    return f"retrying ({data['attempt']}/{data['attempts']})… {data['cause']}{wait}"


OVERLOADED = (429, 503)
RETRIED_STATUS = (429, 500, 502, 503, 504)
T = TypeVar("T")
log = logging.getLogger("clearside.providers")


class StreamCut(Exception):
    """A stream that ended before its final event (OpenAI's finish_reason, Ollama's ``done``)."""

    def __init__(self, received: int) -> None:
        super().__init__(f"the stream ended before its final event, after {received} characters")
        self.received = received


@dataclass(frozen=True)
class Fault:
    """A provider fault as the retry reads it: what happened (``cause``, "answered HTTP 503"), its status,
    the server's Retry-After, and whether asking again may clear it."""

    cause: str
    status: int | None = None
    after: float | None = None
    retryable: bool = True


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """A ``Retry-After`` header's seconds (a number; an HTTP date is not used), or None."""
    value = (headers or {}).get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds < float("inf") else None


def _as_fault(answer: Fault | tuple[int, float | None] | None) -> Fault | None:
    if answer is None or isinstance(answer, Fault):
        return answer
    status, after = answer
    return Fault(f"answered HTTP {status}", status, after)


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = ATTEMPTS
    backoff: float = BACKOFF_S

    @classmethod
    def checked(cls, attempts: Any = None, backoff: Any = None) -> RetryPolicy:
        return cls(ATTEMPTS if attempts is None else checked_attempts(attempts),
                   BACKOFF_S if backoff is None else checked_backoff(backoff))

    def wait(self, failures: int, after: float | None) -> float:
        """Seconds to wait after the ``failures``-th fault (1-based)."""
        if after is not None:
            return min(after, RETRY_AFTER_CAP_S)
        return min(self.backoff * 2 ** (failures - 1), BACKOFF_CAP_S) * random.uniform(0.5, 1.0)

    def call(self, attempt: Callable[[OnDelta], T], on_delta: OnDelta | None, *,
             overload: Callable[[Exception], Fault | tuple[int, float | None] | None], server: str,
             provider: str, model: str = "", endpoint: str = "") -> T:
        """``attempt(forward)`` until it returns, retrying what ``overload`` reads as a retryable fault (a
        :class:`Fault`, or an overload answer's status and Retry-After seconds); ``server`` names the server in
        the error, e.g. "Ollama server at URL"; ``provider`` and ``model`` name what was asked."""
        streamed = False
        notice = retry_notice()

        def forward(text: str) -> None:
            nonlocal streamed
            streamed = True
            if on_delta:
                on_delta(text)

        for tried in range(1, self.attempts + 1):
            try:
                return attempt(forward)
            except Exception as exc:
                fault = _as_fault(overload(exc))
                if fault is None or not fault.retryable or (streamed and notice is None):
                    raise
                if tried == self.attempts:
                    raise given_up(server, provider, model, endpoint, fault, tried) from exc
                pause = self.wait(tried, fault.after)
                log.info("%s %s (attempt %s of %s); asking again in %.2f s",
                         server, fault.cause, tried, self.attempts, pause)
                if notice is not None:
                    notice({"attempt": tried + 1, "attempts": self.attempts, "cause": f"the {server} {fault.cause}",
                            "wait": round(pause, 2), "provider": provider, "model": model, "errors": []})
                streamed = False
                time.sleep(pause)
        raise AssertionError("unreachable: the last attempt returns or raises")


def given_up(server: str, provider: str, model: str, endpoint: str, fault: Fault, attempts: int) -> ProviderError:
    """The error of a call that still failed after its last attempt: provider, model, endpoint, cause, fix."""
    asked = f" ({provider} model {model!r})" if model else ""
    if fault.status in OVERLOADED:
        what = f"The {server}{asked} is overloaded (HTTP {fault.status}) after {attempts} attempts"
        return ProviderError(f"{what}: lower --concurrency or add capacity to the server.", provider=provider,
                             status_code=fault.status, model=model, endpoint=endpoint, retryable=True,
                             dashboard=f"{what}: lower the sidebar's Concurrency or add capacity to the server.")
    what = f"The {server}{asked} {fault.cause}, on all {attempts} attempts"
    if fault.status is not None:
        fix = "its log says why; retry once it is fixed, or choose another provider."
    elif "timed out" in fault.cause:
        fix = "check that it is running and not overloaded, raise the timeout, or choose another provider."
    else:  # a dropped connection or a stream cut short: the server (or a proxy before it) stopped answering
        fix = ("check the server's log (it may have crashed or run out of memory) and any proxy in between, "
               "then retry, or choose another provider.")
    return ProviderError(f"{what}: {fix}", provider=provider, status_code=fault.status, model=model,
                         endpoint=endpoint, retryable=True)
