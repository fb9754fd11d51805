"""The Participate page: a study's participant link. ``?study=<id>&join=<key>`` draws a question and an arm and
gives the participant their own link, ``?study=<id>&p=<token>``, which opens their next step (before, the reading and
after, the re-test) however often it is opened."""

import streamlit as st

from clearside.errors import ClearSideError
from clearside_ui import study_participant_view
from clearside_ui.format import esc

st.title("Take part in a study")
try:
    study_participant_view.page()
except ClearSideError as exc:  # the store is unreachable
    st.error(esc(exc.for_dashboard()))
