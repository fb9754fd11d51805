"""Asking an overloaded server again: HTTP 429 (too many requests) and 503 (unavailable) are retried.

The wait is the server's ``Retry-After`` in seconds where it sends one (at most ``RETRY_AFTER_CAP_S``),
else exponential backoff with jitter: ``backoff``, twice that, four times… (each cut by up to half at
random, none longer than ``BACKOFF_CAP_S``). After ``attempts`` tries the call fails with a ProviderError
naming the fix. A call that already streamed text is never retried, so no delta reaches ``on_delta`` twice
(an overload answer comes before any token; a failure mid-stream is passed on as it is).
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
from .base import OnDelta
from .limits import ATTEMPTS, BACKOFF_CAP_S, BACKOFF_S, RETRY_AFTER_CAP_S, checked_attempts, checked_backoff

OVERLOADED = (429, 503)
T = TypeVar("T")
log = logging.getLogger("clearside.providers")


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """A ``Retry-After`` header's seconds (a number; an HTTP date is not used), or None."""
    value = (headers or {}).get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds < float("inf") else None


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = ATTEMPTS
    backoff: float = BACKOFF_S

    @classmethod
    def checked(cls, attempts: Any = None, backoff: Any = None) -> RetryPolicy:
        return cls(ATTEMPTS if attempts is None else checked_attempts(attempts),
                   BACKOFF_S if backoff is None else checked_backoff(backoff))

    def wait(self, failures: int, after: float | None) -> float:
        """Seconds to wait after the ``failures``-th overload answer (1-based)."""
        if after is not None:
            return min(after, RETRY_AFTER_CAP_S)
        return min(self.backoff * 2 ** (failures - 1), BACKOFF_CAP_S) * random.uniform(0.5, 1.0)

    def call(self, attempt: Callable[[OnDelta], T], on_delta: OnDelta | None, *,
             overload: Callable[[Exception], tuple[int, float | None] | None], server: str,
             provider: str) -> T:
        """``attempt(forward)`` until it returns, retrying what ``overload`` reads as an overload answer
        (its status and Retry-After seconds); ``server`` names the server in the error, e.g. "Ollama at URL"."""
        streamed = False

        def forward(text: str) -> None:
            nonlocal streamed
            streamed = True
            if on_delta:
                on_delta(text)

        for tried in range(1, self.attempts + 1):
            try:
                return attempt(forward)
            except Exception as exc:
                answer = overload(exc)
                if answer is None or streamed:
                    raise
                status, after = answer
                if tried == self.attempts:
                    raise _given_up(server, provider, status, tried) from exc
                pause = self.wait(tried, after)
                log.info("%s answered HTTP %s (attempt %s of %s); asking again in %.2f s",
                         server, status, tried, self.attempts, pause)
                time.sleep(pause)
        raise AssertionError("unreachable: the last attempt returns or raises")


def _given_up(server: str, provider: str, status: int, attempts: int) -> ProviderError:
    what = f"The {server} is overloaded (HTTP {status}) after {attempts} attempts"
    return ProviderError(f"{what}: lower --concurrency or add capacity to the server.", provider=provider,
                         status_code=status,
                         dashboard=f"{what}: lower the sidebar's Concurrency or add capacity to the server.")
