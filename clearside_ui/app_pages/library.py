"""The Library page: search and filter every saved debate; open, rename, delete, duplicate, re-run or resume one."""

import streamlit as st

from clearside.errors import ClearSideError
from clearside_ui import argmap_view, library_actions, library_view, maps_view
from clearside_ui.format import esc

library_actions.follow()
library_actions.keep_typed()
st.title("Library")
st.caption("Every saved debate, newest first: search, filter, open or share one, or run it again with another model.")
argmap_view.import_panel()  # a ClearSide export or an AIF map (a foreign one kept read-only)
try:
    maps_view.section()  # the AIF maps imported from other tools, read-only
    library_view.page()
except ClearSideError as exc:  # the store is unreachable, or a debate vanished between two reads
    st.error(esc(exc.for_dashboard()))
