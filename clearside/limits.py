"""Rate limits: how many debates one user may start, and how many challenges they may ask, in any minute.

A limit is a sliding window (:class:`SlidingWindow`): at most ``limit`` events in any ``window`` seconds, kept as
the times of the last ``limit`` events, so a refusal says exactly when the oldest of them leaves the window ("Try
again in 23 s"). A start that fails before anything runs (a refused question, an unreachable model) gives its
place back (:meth:`SlidingWindow.slot`), so a user correcting their input is never held up by the limit.

One :class:`Limits` per user: the dashboard keeps one per Streamlit session (clearside_ui/rate.py), the HTTP API one
per token (clearside/api/auth.py). The limits come from the environment when a user first needs them:
``CLEARSIDE_DEBATE_STARTS_PER_MINUTE`` (default 10) counts every new debate, live debate, perspectives session,
comparison, regression run and re-run; ``CLEARSIDE_CHALLENGES_PER_MINUTE`` (default 30) counts challenges, re-maps
and a live debate's interventions. 0 turns a limit off. The command line is one user on their own machine and has
no limit.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from .errors import ClearSideError, ConfigError

WINDOW_S = 60.0
STARTS_ENV = "CLEARSIDE_DEBATE_STARTS_PER_MINUTE"
CHALLENGES_ENV = "CLEARSIDE_CHALLENGES_PER_MINUTE"
# A debate takes 15-30 s on the embedded model and several seconds on a fast server, and its page is read before
# the next is asked: a person starts one or two a minute. 10 leaves room for quick corrections and re-runs while
# a loop (a held key, a script on the websocket) is stopped within its first minute.
DEFAULT_STARTS = 10
# One click each, and the page allows one challenge at a time: a person asks a few a minute. 30 (one every 2 s)
# is never reached by hand.
DEFAULT_CHALLENGES = 30
SESSION = "dashboard session"  # what one user is, in a refusal: the dashboard's word, or "API token"


class RateLimited(ClearSideError):
    """Refused by a rate limit; ``retry_after``: the seconds until one more is allowed."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class SlidingWindow:
    """At most ``limit`` events in any ``window`` seconds (``limit`` 0: no limit). ``what`` names the events in a
    refusal ("Debate starts"), ``per`` the user they are counted for ("dashboard session", "API token");
    ``clock`` gives the time in seconds (tests inject one)."""

    def __init__(self, what: str, limit: int, window: float = WINDOW_S,
                 clock: Callable[[], float] = time.monotonic, *, per: str = SESSION) -> None:
        self.what = what
        self.limit = limit
        self.window = window
        self.clock = clock
        self.per = per
        self._times: deque[float] = deque()
        self._lock = threading.Lock()

    def _wait(self, now: float) -> float:
        while self._times and self._times[0] <= now - self.window:  # left the window
            self._times.popleft()
        if not self.limit or len(self._times) < self.limit:
            return 0.0
        return self._times[0] + self.window - now

    def wait(self) -> float:
        """Seconds until one more event is allowed (0: now)."""
        with self._lock:
            return self._wait(self.clock())

    def take(self) -> float:
        """Count one event now and return its time; :class:`RateLimited` (nothing counted) when the window is full."""
        with self._lock:
            now = self.clock()
            if wait := self._wait(now):
                minute = "a minute" if self.window == WINDOW_S else f"in {self.window:g} s"
                kept = "; what you typed is kept" if self.per == SESSION else "; nothing was started"
                raise RateLimited(f"{self.what} are limited to {self.limit} {minute} in each {self.per}. "
                                  f"Try again in {max(1, math.ceil(wait))} s{kept}.", wait)
            self._times.append(now)
            return now

    def give_back(self, stamp: float) -> None:
        """Uncount the event :meth:`take` counted at ``stamp`` (it did not happen after all)."""
        with self._lock:
            if stamp in self._times:  # else it has left the window already
                self._times.remove(stamp)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Count one event for the body; an exception in the body gives it back (nothing started)."""
        stamp = self.take()
        try:
            yield
        except BaseException:
            self.give_back(stamp)
            raise


def per_minute(variable: str, default: int, environ: Mapping[str, str] | None = None) -> int:
    """The limit ``variable`` sets in the environment (unset or blank: ``default``); a ConfigError naming the fix
    when it is not a whole number of 0 or more."""
    text = (os.environ if environ is None else environ).get(variable, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"{variable} must be a whole number of 0 or more (a limit per minute and dashboard "
                          f"session or API token; 0: no limit), not {text!r}: set for example {variable}={default} "
                          "and restart the dashboard or the API server.")
    return value


@dataclass
class Limits:
    """One user's limits: debate starts, and challenges (re-maps and interventions included)."""

    starts: SlidingWindow
    challenges: SlidingWindow

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, per: str = SESSION) -> Limits:
        return cls(SlidingWindow("Debate starts", per_minute(STARTS_ENV, DEFAULT_STARTS, environ), per=per),
                   SlidingWindow("Challenges", per_minute(CHALLENGES_ENV, DEFAULT_CHALLENGES, environ), per=per))
