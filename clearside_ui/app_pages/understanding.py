"""The Understanding page: the understanding check's gains across this browser's debates (mean, 95 % interval, n),
the CSV, each debate's counts in words and its re-test link; ``?debate=<id>&retest=1`` opens the re-test form."""

import streamlit as st

from clearside.errors import ClearSideError
from clearside_ui import understanding_view
from clearside_ui.format import esc

st.title("Understanding")
st.caption("Did the debates help you? The reasons you named before reading, after, and at a re-test, counted "
           "against each debate's arguments. Not a grade: see what the numbers mean in the docs "
           "(docs/quality/understanding.md).")
try:
    if (debate := st.query_params.get("debate")) and st.query_params.get("retest") == "1":
        understanding_view.retest(debate)
        st.divider()
    understanding_view.gains()
    understanding_view.answered()
except ClearSideError as exc:  # the store is unreachable
    st.error(esc(exc.for_dashboard()))
