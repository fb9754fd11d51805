"""Rate limits per dashboard session: how many debates one session may start, and how many challenges it may ask,
in any minute.

The limiter itself is the core's (:mod:`clearside.limits`: a sliding window per kind of event, the limits read from
``CLEARSIDE_DEBATE_STARTS_PER_MINUTE`` and ``CLEARSIDE_CHALLENGES_PER_MINUTE``), shared with the HTTP API, which
keeps one per token. The dashboard keeps one :class:`SessionLimits` per Streamlit session (:func:`session_limits`
takes the session's state, a plain mapping, so this module never imports Streamlit). The command line is one user
on their own machine and has no limit.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from contextlib import AbstractContextManager

from clearside.limits import (
    CHALLENGES_ENV,
    DEFAULT_CHALLENGES,
    DEFAULT_STARTS,
    STARTS_ENV,
    WINDOW_S,
    RateLimited,
    SlidingWindow,
    per_minute,
)
from clearside.limits import Limits as SessionLimits
from clearside_ui.state import App

SESSION_KEY = App.RATE_LIMITS  # where session_limits keeps a session's limits in its state


def session_limits(state: MutableMapping) -> SessionLimits:
    """The limits of the session whose state is ``state`` (made from the environment on first use)."""
    if SESSION_KEY not in state:
        state[SESSION_KEY] = SessionLimits.from_env()
    return state[SESSION_KEY]


def debate_start(state: MutableMapping) -> AbstractContextManager[None]:
    """``with debate_start(st.session_state): <start it>``: counts one debate start, or raises RateLimited (or a
    ConfigError for a malformed limit) before the body runs; a body that raises gives the start back."""
    return session_limits(state).starts.slot()


def challenge(state: MutableMapping) -> AbstractContextManager[None]:
    """As :func:`debate_start`, for a challenge, a re-map or a live debate's intervention."""
    return session_limits(state).challenges.slot()


__all__ = ["CHALLENGES_ENV", "DEFAULT_CHALLENGES", "DEFAULT_STARTS", "STARTS_ENV", "WINDOW_S", "RateLimited",
           "SessionLimits", "SlidingWindow", "challenge", "debate_start", "per_minute", "session_limits"]
