"""The Debate page: question, context, live progress, the three-column debate, challenges and exports.

Every debate is saved as it is generated; ``?debate=<id>`` opens a saved one (the
share link). Debates started, resumed or copied in this browser are editable
(challenges), across reloads and tabs (clearside_ui/owner.py); the same link in another
browser opens read-only, with a button to make an editable copy.
``?example=flagship`` (the **Example debate** button) shows the hand-written
flagship debate, read-only and never saved.
"""

import streamlit as st

from clearside_ui import debate_actions, debate_view, personas_view, settings, sources_view, understanding_view
from clearside_ui.format import esc
from clearside_ui.inputs import context_boxes, question_box
from clearside_ui.state import Debate

st.title("ClearSide")
st.caption("Think both sides. Decide with clarity.")
settings.demo_model_notice(debate_actions.shown_model())  # the open debate's model, else the sidebar's
question_box(Debate.QUESTION, error_key=Debate.INPUT_ERROR,
             placeholder="e.g. Should the U.S. impose a temporary moratorium on new AI data centers?")
with st.expander("Context (optional)"):
    context_boxes(Debate.CONTEXT, error_key=Debate.INPUT_ERROR)
personas_view.picker(error_key=Debate.INPUT_ERROR)
sources_view.attach()

debate_id, job, snapshot = debate_actions.current()
if not debate_id:
    understanding_view.before()  # with the sidebar's switch on: what the user knows before reading (optional)
running = snapshot is not None and not snapshot.finished
example = st.query_params.get("example")
with st.container(horizontal=True):  # buttons at their own width, wrapping on a narrow screen: never cut off
    st.button("Generate Pro & Con Debate", type="primary", key=Debate.GENERATE, on_click=debate_actions.start_debate,
              disabled=running)
    st.button("New debate", key=Debate.NEW, on_click=debate_actions.show, args=(None,),
              disabled=not (debate_id or example) or running)
    st.button("Example debate", key=Debate.EXAMPLE, on_click=debate_actions.open_example,
              disabled=running or bool(example))
if st.session_state.get(Debate.INPUT_ERROR):
    st.error(esc(st.session_state[Debate.INPUT_ERROR]))

if example and not debate_id:
    st.divider()
    debate_view.example_debate(example)
elif not debate_id:
    debate_view.unfinished_hint()
else:
    st.divider()
    debate_view.debate(debate_id, job, snapshot)
