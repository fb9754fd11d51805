"""The Timeline page: replay any saved live debate phase by phase or turn by turn, read-only, and export it.

``?debate=<id>`` (the share link; ``?live=<id>`` too) opens that debate.
"""

import streamlit as st

from clearside_ui import timeline_view

st.title("Timeline")
st.caption("Replay a saved live debate phase by phase, jump to any turn, and export it. Nothing here calls a model.")
timeline_view.page()
