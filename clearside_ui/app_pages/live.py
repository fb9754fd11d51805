"""The Live debate page: start or resume a six-phase live debate, watch it stream, pause, step and intervene."""

import streamlit as st

from clearside_ui import live_debate_view

st.title("Live debate")
st.caption("Six phases, 21 timed turns: openings, constructive rounds, cross-examination, rebuttals, closings and "
           "the moderator's synthesis. Pause, step through or intervene at any time.")
live_debate_view.page()
