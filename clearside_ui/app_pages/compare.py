"""The Compare models page: one question debated by 2 to 4 provider:model choices side by side.

A column per model, a metrics table and charts, and which arguments the models share ("in k of n models").
Every debate is saved as it runs; ``?compare=<batch>`` reopens a comparison (the share link), here or elsewhere.
"""

import streamlit as st

from clearside.errors import ClearSideError
from clearside_ui import compare_view
from clearside_ui.format import esc

st.title("Compare models")
st.caption("The same question debated by 2 to 4 models side by side: their cases, their metrics, and the arguments "
           "they share.")
try:
    compare_view.page()
except ClearSideError as exc:  # an unknown comparison id, or the store is unreachable
    st.error(esc(exc.for_dashboard()))
