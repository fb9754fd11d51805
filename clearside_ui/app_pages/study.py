"""The Study page, for a study's creator: create a study, watch its documents being made, copy the participant link,
read the results and download the CSV. ``?study=<id>`` opens one study, refused to any browser but its creator's."""

import streamlit as st

from clearside.errors import ClearSideError
from clearside_ui import study_view
from clearside_ui.format import esc

st.title("Study")
st.caption("Evidence for teams: participants drawn at random into arms (full debate, single pass, sources only) "
           "answer before and after reading, and at a re-test. What the numbers mean: docs/quality/study.md.")
try:
    if study_id := st.query_params.get("study"):
        study_view.opened(study_id)
    else:
        study_view.create_form()
        study_view.studies()
    study_view.sample_size()
except ClearSideError as exc:  # the store is unreachable
    st.error(esc(exc.for_dashboard()))
