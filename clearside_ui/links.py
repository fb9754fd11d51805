"""What a page shows: its link (``?debate=``, ``?compare=``) and the session's memory of it, kept in step.

A link the user opens wins over what the session showed last. But a rerun can carry the address the browser had
before the page last changed it: a running job's poll that asked for a page run (``st.rerun()`` in a fragment) just
as the user pressed "New comparison" brings the old ``?compare=`` with it. Taken as a link, it would bring back
what the user just left, with the disabled buttons of its running job. So :func:`show` remembers what the page left,
and :func:`current` takes a link to exactly that one as stale, unless the user arrived from another page (a link
opened there, the Library's "Open", a reload: the link is the user's).
"""

from __future__ import annotations

import streamlit as st

from clearside_ui.state import App


def arrive(page: str) -> None:
    """Called by the entry on every full run with the page about to run: notes whether the user came from another."""
    before = st.session_state.get(App.PAGE)
    st.session_state[App.PAGE] = (page, before is None or before[0] != page)


def arrived() -> bool:
    """True on the first run of a page after another page (or the session's first run)."""
    page = st.session_state.get(App.PAGE)
    return page is None or page[1]


def show(param: str, key: str, value: str | None) -> None:
    """Show ``value`` (or nothing): the session key ``key`` and the address's ``param`` both say it."""
    left = st.session_state.setdefault(App.LEFT, {})
    before = st.session_state.get(key)
    if before != value:
        left[param] = before
    st.session_state[key] = value
    if value:
        st.query_params[param] = value
    else:
        st.query_params.pop(param, None)


def current(param: str, key: str) -> str | None:
    """What the page shows: the link's value, else the session's; a link to what the page just left is stale."""
    linked = st.query_params.get(param)
    left = st.session_state.get(App.LEFT, {})
    if linked and linked == left.get(param) and not arrived():
        linked = None  # a rerun sent before the browser took the page's last change
    return linked or st.session_state.get(key)


def synced(param: str, key: str, value: str | None) -> bool:
    """True when the session and the address already both say ``value``."""
    return st.session_state.get(key) == value and st.query_params.get(param) == value
