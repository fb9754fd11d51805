"""The Regression page: run a suite n times, compare a batch's metrics with the blessed baseline, trends, two
batches compared run by run, one run.

``?batch=<id>`` opens a batch (the page keeps the URL on the batch shown, so it is always a share link).
"""

import streamlit as st

from clearside.errors import ClearSideError
from clearside_ui import regression_sections
from clearside_ui.format import esc

st.title("Regression")
st.caption("Debate a suite n times on one model, score every run, and compare the batch with the blessed baseline.")
try:
    regression_sections.page()
except ClearSideError as exc:  # the store is unreachable
    st.error(esc(exc.for_dashboard()))
