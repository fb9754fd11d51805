"""How hard ClearSide may press one model endpoint: a shared limit on requests in flight, and the checked
provider options that set it and the retry of an overloaded server (``concurrency``, ``attempts``, ``backoff``).

Every provider that points at one endpoint (kind and base URL, or the GGUF file for the in-process model)
shares one :class:`EndpointLimit` from :func:`endpoint_limit`, so two debates, a comparison and a batch
running at once in one process never send that endpoint more requests at once than its ``concurrency``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import ConfigError

# Requests one server endpoint takes at once by default (the in-process model takes 1: see embedded.py).
SERVER_CONCURRENCY = 4
# An overloaded server (HTTP 429 or 503) is asked this many times in all before the call fails
ATTEMPTS = 5
BACKOFF_S = 0.5  # the first wait after an overload answer without Retry-After; it doubles each time
BACKOFF_CAP_S = 8.0  # no wait between attempts is longer than this, unless the server's Retry-After says so
RETRY_AFTER_CAP_S = 60.0  # a Retry-After longer than this is waited for this long only


class EndpointLimit:
    """Requests in flight at one endpoint. A request starts only while fewer than its provider's
    ``concurrency`` requests are in flight there, so each provider's own limit holds even when two
    providers for one endpoint were given different limits."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.in_flight = 0
        self.peak = 0  # the most requests in flight at once so far
        self._cond = threading.Condition()

    @contextmanager
    def slot(self, limit: int) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: self.in_flight < limit)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            yield
        finally:
            with self._cond:
                self.in_flight -= 1
                self._cond.notify_all()  # waiters may hold different limits: each checks its own


_limits: dict[str, EndpointLimit] = {}
_limits_lock = threading.Lock()


def endpoint_limit(key: str) -> EndpointLimit:
    """The one limit every provider for the endpoint ``key`` shares in this process."""
    with _limits_lock:
        if key not in _limits:
            _limits[key] = EndpointLimit(key)
        return _limits[key]


def _whole_number(value: Any, *, name: str, flag: str, meaning: str, field: str | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        what = f"{name} must be a whole number of 1 or more ({meaning}), not {value!r}"
        raise ConfigError(f"{what}: use for example {flag}.",
                          dashboard=f"{what}: set the sidebar's {field} field." if field else None)
    return value


def checked_concurrency(value: Any) -> int:
    """``value`` as a provider's ``concurrency`` option; a ConfigError naming the fix otherwise."""
    return _whole_number(value, name="concurrency", flag="--concurrency 4", field="Concurrency",
                         meaning="requests sent to one model endpoint at once")


def checked_attempts(value: Any) -> int:
    return _whole_number(value, name="attempts", flag="attempts=5 in get_provider(...)",
                         meaning="tries of a call the server answers with HTTP 429 or 503")


def checked_backoff(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= BACKOFF_CAP_S:
        raise ConfigError(f"backoff must be a number of seconds from 0 to {BACKOFF_CAP_S:g} (the first wait "
                          f"before asking an overloaded server again), not {value!r}: use for example "
                          f"backoff={BACKOFF_S} in get_provider(...).")
    return float(value)
