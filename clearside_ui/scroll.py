"""Bringing what just happened into view: named anchors on the page, and a one-time scroll to one of them.

A debate that starts, finishes or gets a challenge answer may be far from where the user
is looking (below the fold on a desktop, thousands of pixels down on a phone). The page
places an anchor there and asks, once per event, for a scroll to it; the same anchor
serves a jump link (``[Jump to the answer](#cs-challenge-2)``) for a user who scrolled away.
The script is ours alone: anchor names are fixed strings and numbers, never user text.
"""

from __future__ import annotations

import re

import streamlit as st

from clearside_ui.state import App

_NAME = re.compile(r"cs-[a-z0-9-]+")


def anchor(name: str) -> None:
    """An invisible mark that ``into_view`` and ``#name`` links can reach."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"not an anchor name: {name!r}")
    st.html(f'<div id="{name}" style="height:0;scroll-margin-top:4rem"></div>', width="content")


def into_view(name: str, *, once: str) -> None:
    """Scroll the page to the anchor ``name`` the first time this session sees the event ``once``."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"not an anchor name: {name!r}")
    seen = st.session_state.setdefault(App.SCROLLED, set())
    if once in seen:
        return
    seen.add(once)
    # the anchor may be drawn a moment after this script runs (it can come later on the page): try for 2 s
    st.html("<script>(() => { let tries = 0; const go = () => { const el = document.getElementById("
            f"'{name}'); if (el) el.scrollIntoView({{block: 'start', behavior: 'instant'}}); "
            "else if (tries++ < 20) setTimeout(go, 100); }; setTimeout(go, 50); })();</script>",
            unsafe_allow_javascript=True, width="content")
