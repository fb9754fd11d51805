"""The decision hinges of a debate with cruxes (``moderator.cruxes``): by load, each with what rests on it and
what a yes or a no would test. Drawn by :func:`clearside_ui.view.moderator_view` in place of the plain list.

Every text (the hinges, the sides' claims and assumptions, the counterfactuals) is escaped.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from clearside.cruxes import CAVEAT, LOAD_NOTE, dependants, load_line, sorted_by_load
from clearside.schema import Document
from clearside_ui.format import esc


def hinges_view(document: Document, notes: Callable[[str], None]) -> bool:
    """The hinges by load; ``notes(hinge)`` draws a hinge's challenge responses under it. False, with nothing
    drawn, when the document has no cruxes (the caller then draws the plain list)."""
    ranked = sorted_by_load(document)
    if not ranked:
        return False
    st.caption(esc(LOAD_NOTE))
    for rank, (hinge, crux) in enumerate(ranked, start=1):
        st.markdown(f"{rank}\\. {esc(hinge)}")
        st.caption(f"Load: {esc(load_line(document, crux))}")
        items = dependants(document, crux)
        with st.expander(f"Hinge {crux.hinge + 1}: what rests on it, if yes, if no", expanded=False):
            if items:
                st.markdown("**Rests on it**\n\n" + "\n".join(f"- {esc(who)}: {esc(text)}"
                                                               for who, text in items))
            st.markdown("\n\n".join(esc(t) for t in dict.fromkeys((crux.if_yes, crux.if_no))))
        notes(hinge)
    st.caption(esc(CAVEAT))
    return True
