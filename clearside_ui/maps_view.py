"""The Library's imported maps: argument maps another tool made (foreign AIF), kept read-only beside the debates.

Each is shown as its numbered outline (claims with their ``Pro:`` and ``Con:`` claims), with what could and could
not be placed said plainly, its outline and its AIF JSON to download, and a delete that asks first. Every text goes
through ``esc``. The keys of this module's widgets start ``maps_``.
"""

from __future__ import annotations

import json

import streamlit as st

from clearside.render.aif_foreign import ForeignMap, foreign_map
from clearside.store.maps import MapRow
from clearside_ui import jobs
from clearside_ui.format import esc

PREFIX = "maps_"
CHOSEN = "maps_chosen"
CONFIRM = "maps_confirm_delete"


def key(name: str) -> str:
    return f"{PREFIX}{name}"


def show(row: MapRow, where: str = "library") -> None:
    """One imported map: what it is, what was placed and not, its outline, its downloads (``where``: which panel
    shows it, keeping the buttons' keys apart when the import panel and the list both show the same map)."""
    shown = foreign_map(row.data, row.source)
    st.info(esc(f"Read-only map from {row.source}: an AIF map ClearSide did not make (a ClearSide debate needs FOR "
                f"and AGAINST cases and a moderator's map). {shown.placed()}"))
    if shown.unplaced:
        st.warning(esc(shown.not_placed()))
    st.markdown(outline(shown))
    with st.container(horizontal=True):
        st.download_button("Outline (text)", shown.text(), file_name=f"map-{row.id[:8]}.txt", mime="text/plain",
                           key=key(f"{where}_text_{row.id}"), on_click="ignore")
        st.download_button("AIF (JSON)", json.dumps(row.data, indent=2, ensure_ascii=False),
                           file_name=f"map-{row.id[:8]}.json", mime="application/json",
                           key=key(f"{where}_aif_{row.id}"), on_click="ignore")


def outline(shown: ForeignMap) -> str:
    """The outline as a nested Markdown list, every line escaped."""
    return "\n".join(f"{'    ' * depth}- {esc(sign) + ': ' if sign else ''}{esc(text)}"
                     for depth, sign, text in shown.outline())


def section() -> None:
    """The imported maps, newest first: choose one to read it, or delete it (asked first). Nothing when none."""
    rows = jobs.store().maps()
    if not rows:
        return
    by_id = {row.id: row for row in rows}
    with st.expander(f"Imported maps ({len(rows)})", icon=":material/account_tree:"):
        st.caption("Argument maps from other tools (AIF), kept read-only: a ClearSide debate needs both cases and a "
                   "moderator's map, which they do not have.")
        chosen = st.selectbox("Map", list(by_id), key=CHOSEN,
                              format_func=lambda i: f"{by_id[i].title[:80]} ({by_id[i].source[:40]})")
        show(by_id[chosen])
        _delete(by_id[chosen])


def _delete(row: MapRow) -> None:
    if st.session_state.get(CONFIRM) != row.id:
        st.button("Delete this map", key=key(f"delete_{row.id}"), icon=":material/delete:",
                  on_click=st.session_state.__setitem__, args=(CONFIRM, row.id))
        return
    st.warning(esc(f"Delete the map “{row.title[:80]}”? This cannot be undone."))
    with st.container(horizontal=True):
        st.button("Yes, delete it", key=key(f"yes_{row.id}"), type="primary", on_click=_deleted, args=(row.id,))
        st.button("Keep it", key=key(f"keep_{row.id}"), on_click=st.session_state.pop, args=(CONFIRM, None))


def _deleted(map_id: str) -> None:
    jobs.store().delete_map(map_id)
    st.session_state.pop(CONFIRM, None)
    st.session_state.pop(CHOSEN, None)
    st.toast("Map deleted.")
