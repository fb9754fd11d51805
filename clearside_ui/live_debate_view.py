"""The Live debate page's views: the start form (with the unfinished debates to resume), a running debate (its
streaming panel, the controls and the interventions beside the transcript) and a saved one.

Every user or model string goes through ``esc``; the transcript's own views are :mod:`clearside_ui.live_view`'s.
"""

from __future__ import annotations

import streamlit as st

from clearside.errors import ClearSideError, InputError
from clearside.inputs import MAX_QUESTION
from clearside.live.job import LiveJob
from clearside.schema import Document
from clearside.sources import MAX_BYTES, MAX_CHARS, MAX_PAGES
from clearside_ui import jobs, live_view, page_path, scroll, settings, sources_view, view
from clearside_ui.format import esc, lines
from clearside_ui.inputs import context_boxes, length_note, question_box
from clearside_ui.live_actions import (
    AFTER_THE_END,
    CONTROLS,
    READ_ONLY,
    active,
    current,
    detach,
    evidence_file_key,
    intervene,
    next_turn,
    resume_saved,
    start_live,
    steerable,
    structure,
    toggle_step,
)
from clearside_ui.state import Debate, Live

TIMELINE = "app_pages/timeline.py"
RECIPIENTS = {"auto": "", "pro": "Pro", "con": "Con", "moderator": "Moderator"}
# the tabs' own labels are short: four long ones do not fit the controls column at 1440 px (the last was cut)
TABS = {"pause_question": "Pause & ask", "clarification": "Clarify", "inject_evidence": "Evidence",
        "direct_question": "Ask"}
FILE_LIMITS = (f"One file at a time: text, Markdown, HTML, PDF or CSV, at most {MAX_BYTES // (1024 * 1024)} MB and "
               f"{MAX_CHARS:,} characters of text ({MAX_PAGES} pages for a PDF). The advocates who acknowledge it "
               "quote it, and every quote is checked word for word against your file.")


# the speech streams at the debate's pace: redrawn each second while it grows, slower while nothing moves (a paused
# or waiting debate), each redraw costing every following tab (view.follow). The finished turns are drawn below
# this panel by the page, once per turn, not every second.
def live_panel(job_id: str, shown: tuple) -> None:
    snap = jobs.registry().get(job_id, "live").snapshot()
    if structure(snap) != shown:
        st.rerun()  # a turn finished, an intervention moved, the status changed: the page around this panel did
    view.poll_changed("live", (snap.speaker, snap.activity, len(snap.speech), len(snap.raw)))
    answered(job_id, snap.transcript)
    live_view.phase_progress(snap.transcript, snap.status)
    live_view.now_speaking(snap.speaker, snap.activity, snap.speech, snap.status, snap.raw)


def answered(job_id: str, transcript) -> None:
    """The newest answer to a question asked in this session: a notice with a jump link, and one scroll to it."""
    asked = st.session_state.get(Live.asked(job_id)) or set()
    done = [i for i in transcript.interventions if i.id in asked and i.status in ("answered", "failed")]
    if not done:
        return
    item = done[-1]
    name = live_view.intervention_anchor(item)
    word = "answered" if item.status == "answered" else "could not be answered"
    when = f"after turn {item.after_turn}" if item.after_turn else "before the first turn"
    st.success(f"Your question {when} {word}. [Jump to it ↓](#{name})",
               icon=":material/question_answer:")
    scroll.into_view(name, once=f"live-answer:{job_id}:{item.id}")


def controls(job: LiveJob, snap) -> None:
    status = snap.status
    st.markdown("**Controls**")
    pause, resume = st.columns(2)
    pause.button("Pause", key=Live.PAUSE, on_click=job.pause, icon=":material/pause:", width="stretch",
                 disabled=status not in ("queued", "running", "interrupted", "waiting"))
    resume.button("Resume", key=Live.RESUME, on_click=job.resume, icon=":material/play_arrow:", width="stretch",
                  disabled=status not in ("paused", "pausing"), type="primary")
    step_key = Live.step_mode(job.id)
    if step_key not in st.session_state:
        st.session_state[step_key] = snap.step_mode
    toggle, step = st.columns(2)
    toggle.toggle("Step mode", key=step_key, on_change=toggle_step, args=(job,),
                  help="Run one turn at a time: after each turn the debate waits for Next turn.")
    step.button("Next turn", key=Live.NEXT, on_click=next_turn, args=(job,), icon=":material/skip_next:",
                width="stretch", disabled=status not in ("waiting", "paused"),
                help="Run exactly one more turn, then wait (switches step mode on).")


def intervention_controls(job: LiveJob, snap) -> None:
    st.markdown("**Intervene**")
    # after the end only what can still be answered is offered, and any box the user already typed into
    kinds = [k for k in CONTROLS if snap.status != "done" or k in AFTER_THE_END
             or (st.session_state.get(Live.intervention(k)) or "").strip()]
    for tab, kind in zip(st.tabs([TABS[k] for k in kinds]), kinds, strict=True):
        label, auto, help_text = CONTROLS[kind]
        with tab:
            st.caption(help_text)
            st.text_area("Your question" if kind != "inject_evidence" else "Evidence or a source to consider",
                         key=Live.intervention(kind), height=80, help=f"At most {MAX_QUESTION} characters.")
            length_note(Live.intervention(kind), MAX_QUESTION, "Your text")
            if kind == "inject_evidence":
                st.file_uploader("Or attach a source file", type=sources_view.TYPES, key=evidence_file_key(),
                                 on_change=lambda: st.session_state.update(
                                     {Live.intervention_error("inject_evidence"): ""}),
                                 help="The text above becomes your note on the file (optional with a file).")
                st.caption(FILE_LIMITS)
            if kind == "direct_question":
                st.radio("Ask", ["pro", "con", "moderator"], key=Live.recipient(kind), index=None, horizontal=True,
                         format_func=RECIPIENTS.get)
            elif auto is not None:
                st.radio("Ask", list(RECIPIENTS), key=Live.recipient(kind), horizontal=True,
                         format_func=lambda r, auto=auto: RECIPIENTS[r] or auto)
            st.button(label, key=Live.send(kind), on_click=intervene, args=(job, kind), width="stretch")
            if st.session_state.get(Live.intervention_error(kind)):
                st.error(lines(st.session_state[Live.intervention_error(kind)]), icon=":material/block:")
    if st.session_state.get(Live.NOTICE):
        st.caption(esc(st.session_state.pop(Live.NOTICE)))


def finished_links(transcript) -> None:
    st.page_link(page_path(TIMELINE), label="Open in Timeline", icon=":material/timeline:",
                 query_params={"debate": transcript.id})
    live_view.exports(transcript, Live.EXPORTS)


def job_view(job: LiveJob) -> None:
    snap = job.snapshot()
    mine = steerable(job.id)
    live_view.header(snap.transcript)
    stopped = snap.status in ("failed", "cancelled")
    if stopped:
        st.error(esc(snap.error or "The live debate stopped."))
        if mine:
            st.caption("Every finished turn is saved; Retry continues from the turn that failed.")
            st.button("Retry", key=Live.RETRY, on_click=job.retry, type="primary")
    # the controls come first: on a phone the columns stack, and Pause and Next turn stay at the top of the
    # page instead of drifting below a transcript that grows with every turn
    side, main = st.columns([2, 3], gap="large")
    with side:
        if snap.status == "done":
            st.success(f"The live debate is finished: all {len(snap.transcript.turns)} turns and the moderator's "
                       "synthesis.")
            finished_links(snap.transcript)
        elif not mine:
            st.caption(READ_ONLY)
        elif not stopped:
            controls(job, snap)
        if mine and not stopped:  # an intervention would restart the worker: that is what Retry is for
            intervention_controls(job, snap)
        st.divider()
        st.button("New live debate", key=Live.NEW, on_click=detach, icon=":material/add:")
    with main:
        if active(snap):
            view.follow("live", 1.0, live_panel, job.id, structure(snap))
            live_view.transcript_view(snap.transcript)
        else:
            answered(job.id, snap.transcript)
            live_view.phase_progress(snap.transcript, snap.status)
            live_view.transcript_view(snap.transcript)


def saved_view(transcript_id: str) -> bool:
    """A debate from the URL that this server is not running (e.g. after a restart). False if it cannot load."""
    try:
        transcript = live_view.load_saved(transcript_id)
    except InputError as exc:
        st.error(esc(exc.for_dashboard()))
        return False
    live_view.header(transcript)
    if transcript.state == "done":
        st.success("This live debate is finished.")
        finished_links(transcript)
    elif not steerable(transcript_id):
        st.info("This live debate is saved but not running on this server.")
        st.caption(READ_ONLY)
    else:
        st.info("This live debate is saved but not running on this server (it may have been restarted). "
                "Resume continues it from its last finished turn with the model chosen in the sidebar.")
        st.button("Resume", key=Live.RESUME_SAVED, on_click=resume_saved, args=(transcript_id,), type="primary")
    st.button("New live debate", key=Live.NEW, on_click=detach, icon=":material/add:")
    live_view.phase_progress(transcript)
    live_view.transcript_view(transcript)
    return True


def start_view() -> None:
    settings.demo_model_notice()  # the sidebar's model: the one a new live debate uses
    question_box(Live.QUESTION, error_key=Live.ERROR,
                 placeholder="e.g. Should cities ban private cars from their centres?")
    with st.expander("Context (optional)"):
        context_boxes(Live.CONTEXT, error_key=Live.ERROR, placeholders=False)
    pace, mode = st.columns(2)
    pace.number_input("Pace (words per minute)", min_value=20, max_value=300, value=150, step=10, key=Live.WPM,
                      persist_state="session",
                      help="Sets each turn's length: a 2-minute opening gets about 2 × pace words, a 30-second "
                           "question half a minute's worth. Speech past 120% of its budget is cut.")
    pace.caption("Sets each turn's length (time × pace). Lower is shorter and faster.")
    mode.toggle("Step mode", key=Live.STEP_START, persist_state="session",
                help="Run one turn at a time: the debate waits for Next turn before every turn.")
    st.button("Start live debate", type="primary", key=Live.START, on_click=start_live)
    document = st.session_state.get(Debate.DOCUMENT)
    if isinstance(document, Document):
        with st.container(border=True):
            st.markdown(f"**From the Debate page:** {esc(document.proposition.normalized_question)}")
            st.button("Run live on this debate's question", key=Live.FROM_DOCUMENT, on_click=start_live,
                      args=(True,))
    if st.session_state.get(Live.ERROR):
        st.error(esc(st.session_state[Live.ERROR]))
    try:
        unfinished = [s for s in live_view.saved_summaries(unfinished=True) if steerable(s.id)]  # only yours
    except ClearSideError as exc:
        st.error(esc(exc.for_dashboard()))
        unfinished = []
    if unfinished:
        st.markdown("## Unfinished live debates")
        for summary in unfinished:
            text, button = st.columns([5, 1], vertical_alignment="center")
            running = jobs.registry().get(summary.id, "live") is not None
            text.markdown(f"{esc(live_view.summary_label(summary))}"
                          + (" :blue-badge[on this server]" if running else ""))
            button.button("Resume", key=Live.resume_one(summary.id), on_click=resume_saved,
                          args=(summary.id,), width="stretch")


def page() -> None:
    """The page body: the live debate the link or this session names, running or saved, else the start form."""
    job_id, job = current()
    if job is not None:
        job_view(job)
    elif not job_id or not saved_view(job_id):
        start_view()
