"""The Perspectives page: a personal, ambiguous question → clarifying questions → rounds of two perspectives →
a synthesis (docs/design/perspectives.md). ``?perspectives=<id>`` (the share link) opens that session."""

import streamlit as st

from clearside_ui import perspectives_view

st.title("Perspectives")
st.caption("For personal, ambiguous questions. First a few clarifying questions (answer each, or skip one that "
           "makes no sense), then rounds in which perspective A widens the possibilities and perspective B narrows "
           "them to what is known, then a synthesis of both: options and open questions, never orders.")
perspectives_view.page()
