"""The Participate page: a study's participant link. ``?study=<id>&join=<key>`` draws a question and an arm and
gives the participant their own link, ``?study=<id>&p=<token>``, which opens their next step (before, the reading and
after, the re-test) however often it is opened."""

import streamlit as st

from clearside.errors import ClearSideError
from clearside_ui import study_participant_view
from clearside_ui.format import esc

st.title("Take part in a study")
try:
    study_id = st.query_params.get("study")
    token = st.query_params.get("p") or study_participant_view.joined(study_id)
    if study_id and token:
        study_participant_view.taking_part(study_id, token)
    elif study_id and (join_key := st.query_params.get("join")):
        study_participant_view.welcome(study_id, join_key)
    else:
        st.info("Open the participant link you were sent: this page needs it.")
except ClearSideError as exc:  # the store is unreachable
    st.error(esc(exc.for_dashboard()))
