"""Which debates this browser may change: ownership that survives reloads and new tabs.

The first visit gives the browser a random key in a cookie (``clearside_owner``, one
year, this site only). A debate started, resumed or copied here is stamped with a
hash of that key (``data["owner"]`` in the store: a random token, no name, no address,
NFR-404, docs/design/requirements.md#nfr-400). A page then treats the debate as yours when your cookie's hash matches,
so a reload, a new tab or opening it from the Library keeps the challenge panel, while the same link opened in another
browser or on another machine stays read-only.

The cookie is written by a few lines of script of our own (no user or model text in it);
a browser that refuses cookies still owns what it makes until the session ends.
"""

from __future__ import annotations

import hashlib
import re
import secrets

import streamlit as st

from clearside_ui.state import App

COOKIE = "clearside_owner"
YEAR = 365 * 24 * 3600
_KEY = re.compile(r"[0-9a-f]{32}")


def _key() -> str:
    """This browser's key: its cookie's, or a new one that :func:`keep` writes to the cookie."""
    key = st.session_state.get(App.OWNER_KEY)
    if key is None:
        cookie = st.context.cookies.get(COOKIE)
        cookie = cookie if isinstance(cookie, str) else ""  # (AppTest has no cookies)
        key = cookie if _KEY.fullmatch(cookie) else secrets.token_hex(16)
        st.session_state[App.OWNER_KEY] = key
        st.session_state[App.OWNER_COOKIE_WRITTEN] = key == cookie
    return key


def token() -> str:
    """What the store keeps: the key's hash (the key itself never leaves the browser and this session)."""
    return hashlib.sha256(f"clearside-owner:{_key()}".encode()).hexdigest()[:32]


def keep() -> None:
    """Write the browser's key to its cookie, once per session (called on every page by app.py)."""
    key = _key()
    if st.session_state.get(App.OWNER_COOKIE_WRITTEN):
        return
    st.html(f'<script>document.cookie = "{COOKIE}={key}; path=/; max-age={YEAR}; SameSite=Strict";</script>',
            unsafe_allow_javascript=True, width="content")
    st.session_state[App.OWNER_COOKIE_WRITTEN] = True


def claim(debate_id: str) -> None:
    """This session made (or copied, or resumed) ``debate_id``; the store got :func:`token` as its owner when
    the debate was started or copied (``jobs.start_static(owner=...)``, ``Store.duplicate(owner=...)``)."""
    st.session_state.setdefault(App.OWNED, set()).add(debate_id)


def owns(debate_id: str, data: dict | None) -> bool:
    """Whether this browser may change the debate: made in this session, or stamped with our token."""
    return debate_id in st.session_state.get(App.OWNED, set()) or (data or {}).get("owner") == token()


def may_change(debate_id: str, data: dict | None) -> bool:
    """Whether this browser may steer or resume the debate: it is ours, or nobody's (made by the command line or
    before owners were recorded); a debate another browser made stays read-only here."""
    return owns(debate_id, data) or not (data or {}).get("owner")
