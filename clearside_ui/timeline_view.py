"""The Timeline page's views: pick a saved live debate, then replay it phase by phase or turn by turn, read-only,
or read the whole transcript; export it. Nothing here calls a model.

``?debate=<id>`` (the share link; ``?live=<id>`` too) opens that debate. Every text goes through ``esc``.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from clearside.errors import ClearSideError
from clearside.live.protocol import PHASE_LABELS, PHASES
from clearside.live.transcript import Transcript
from clearside.schema import Document
from clearside_ui import argmap_view, jobs, live_view, page_path
from clearside_ui.format import esc
from clearside_ui.state import Timeline


def pick_changed() -> None:
    st.query_params.pop("live", None)
    st.query_params["debate"] = st.session_state[Timeline.PICK]


def phase_changed(transcript) -> None:
    phase = st.session_state.get(Timeline.PHASE)
    if phase:
        first = next(t.turn for t in transcript.turns if live_view.nav_phase(transcript, t) == phase)
        st.session_state[Timeline.TURN] = first


def turn_changed(transcript) -> None:
    turn = transcript.turn(st.session_state[Timeline.TURN])
    st.session_state[Timeline.PHASE] = live_view.nav_phase(transcript, turn)


def move(transcript, by: int) -> None:
    number = min(max(st.session_state.get(Timeline.TURN, 1) + by, 1), len(transcript.turns))
    st.session_state[Timeline.TURN] = number
    turn_changed(transcript)


def replay(transcript) -> None:
    turns = transcript.turns
    if st.session_state.get(Timeline.FOR) != transcript.id or st.session_state.get(Timeline.TURN, 0) > len(turns):
        st.session_state.update({Timeline.FOR: transcript.id, Timeline.TURN: 1,
                                 Timeline.PHASE: live_view.nav_phase(transcript, turns[0])})
    present = [p for p in PHASES if any(live_view.nav_phase(transcript, t) == p for t in turns)]
    st.segmented_control("Phase", present, key=Timeline.PHASE, format_func=PHASE_LABELS.get, required=True,
                         on_change=phase_changed, args=(transcript,))
    if len(turns) > 1:
        st.select_slider("Turn", [t.turn for t in turns], key=Timeline.TURN, on_change=turn_changed,
                         args=(transcript,), format_func=lambda n: f"Turn {n}: {transcript.turn(n).label}")
    number = st.session_state.get(Timeline.TURN, 1)
    turn = transcript.turn(number)
    phase = live_view.nav_phase(transcript, turn)
    # at their own width, spread across the row and wrapping on a narrow screen: a sixth of the row each was too
    # narrow for "Previous" at 780 px beside the sidebar
    with st.container(horizontal=True, horizontal_alignment="distribute", vertical_alignment="center"):
        st.button("Previous", key=Timeline.PREVIOUS, on_click=move, args=(transcript, -1), disabled=number <= 1,
                  icon=":material/chevron_left:")
        st.caption(f"Turn {number} of {len(turns)} · {PHASE_LABELS[phase]}", width="content")
        st.button("Next", key=Timeline.NEXT, on_click=move, args=(transcript, 1), disabled=number >= len(turns),
                  icon=":material/chevron_right:")
    by_turn = live_view.interventions_by_turn(transcript)
    if number == 1:
        for item in by_turn.get(0, []):  # made before the first turn
            live_view.intervention_view(item, transcript)
    live_view.turn_view(turn, by_turn.get(number, []), key=Timeline.TURNS, transcript=transcript)


def choices() -> dict[str, Any] | None:
    """The saved live debates to pick from (summaries, and the record of one the list is too short for), by id,
    newest first, with the one the link names picked; None (with the error shown) when the store cannot list them."""
    try:
        saved = live_view.saved_summaries()
    except ClearSideError as exc:
        st.error(esc(exc.for_dashboard()))
        return None
    by_id = {s.id: s for s in saved}
    wanted = st.query_params.get("debate") or st.query_params.get("live")
    if wanted and wanted not in by_id:
        try:
            live_view.load_saved(wanted)  # older than the list shows, or saved since it was read
            by_id = {wanted: jobs.store().get(wanted), **by_id}
        except ClearSideError as exc:
            st.error(esc(exc.for_dashboard()))
    if wanted in by_id:
        st.session_state[Timeline.PICK] = wanted
    return by_id


def shown(transcript: Transcript) -> None:
    """The debate picked: its header, phases, exports and costs, then its replay or its whole transcript."""
    live_view.header(transcript)
    live_view.phase_progress(transcript)
    live_view.exports(transcript, Timeline.EXPORTS)
    live_view.cost_view(transcript)
    if transcript.state != "done":
        st.caption(f"This debate is {live_view.STATE_LABELS[transcript.state]}: the timeline shows the turns saved "
                   "so far.")
        st.button("Refresh", key=Timeline.REFRESH, icon=":material/refresh:")
    if transcript.error:
        st.error(esc(transcript.error))
    if transcript.document is not None:  # a finished debate's assembled document: its argument map, read-only
        argmap_view.map_panel(Document.model_validate(transcript.document), where="timeline")

    if not transcript.turns:
        st.info("No finished turns yet.")
        live_view.transcript_view(transcript, key=Timeline.ALL_TURNS)
    elif st.toggle("Show the whole transcript", key=Timeline.WHOLE):
        live_view.transcript_view(transcript, key=Timeline.ALL_TURNS)
    else:
        replay(transcript)


def page() -> None:
    """The page body: the saved live debates to pick from, and the one picked."""
    by_id = choices()
    if by_id is None:
        return
    if not by_id:
        st.info("No saved live debates yet: start one on the Live debate page.")
        st.page_link(page_path("app_pages/live.py"), label="Go to Live debate", icon=":material/record_voice_over:")
        return

    if st.session_state.get(Timeline.PICK) not in by_id:
        st.session_state[Timeline.PICK] = next(iter(by_id))
    st.selectbox("Saved live debate", list(by_id), key=Timeline.PICK, on_change=pick_changed,
                 format_func=lambda i: live_view.summary_label(by_id[i], width=90))
    try:
        transcript = live_view.load_saved(st.session_state[Timeline.PICK])
    except ClearSideError as exc:
        st.error(esc(exc.for_dashboard()))
        return
    shown(transcript)
