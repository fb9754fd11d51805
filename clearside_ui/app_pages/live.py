"""The Live debate page: start or resume a six-phase live debate, watch it stream, pause, step and intervene."""

import streamlit as st

from clearside.errors import ClearSideError, InputError
from clearside.inputs import MAX_QUESTION
from clearside.live.debate import LiveDebate
from clearside.live.job import LiveJob, resume_job
from clearside.live.protocol import LiveConfig
from clearside.schema import Document
from clearside.sources import MAX_BYTES, MAX_CHARS, MAX_PAGES, read_source
from clearside_ui import jobs, live_view, owner, page_path, rate, scroll, settings, sources_view, view
from clearside_ui.inputs import context_boxes, length_note, question_box

TIMELINE = "app_pages/timeline.py"
RECIPIENTS = {"auto": "", "pro": "Pro", "con": "Con", "moderator": "Moderator"}
# kind → (tab and button label, what "auto" means or None when there is no recipient choice, help)
CONTROLS = {
    "pause_question": ("Pause & ask", "Current speaker",
                       "Halts the debate after the current streamed chunk; the chosen agent answers while it is "
                       "paused. Press Resume to continue the turn from where it stopped."),
    "clarification": ("Ask for clarification", "Whoever spoke last",
                      "Answered inline as a short turn of its own at the next phase break."),
    "inject_evidence": ("Inject evidence", None,
                        "Both advocates must acknowledge it in their next turns (and the moderator in the "
                        "synthesis). Only possible before the last turn."),
    "direct_question": ("Ask directly", None,
                        "Answered right after the current turn, without pausing. Choose who answers."),
}
# the tabs' own labels are short: four long ones do not fit the controls column at 1440 px (the last was cut)
TABS = {"pause_question": "Pause & ask", "clarification": "Clarify", "inject_evidence": "Evidence",
        "direct_question": "Ask"}
AFTER_THE_END = ("clarification", "direct_question")  # still answered once the last turn is over
FILE_LIMITS = (f"One file at a time: text, Markdown, HTML, PDF or CSV, at most {MAX_BYTES // (1024 * 1024)} MB and "
               f"{MAX_CHARS:,} characters of text ({MAX_PAGES} pages for a PDF). The advocates who acknowledge it "
               "quote it, and every quote is checked word for word against your file.")


def evidence_file_key() -> str:
    """The uploader's key: a new one after each injection, so the sent file leaves the uploader."""
    return f"live_iv_file_{st.session_state.get('live_iv_file_n', 0)}"


def attach(job_id: str) -> None:
    st.session_state.update(live_job=job_id, live_error="")
    st.query_params["live"] = job_id


def detach() -> None:
    st.session_state.update(live_job=None, live_error="")
    st.query_params.pop("live", None)


def start_live(from_document: bool = False) -> None:
    state = st.session_state
    try:
        provider = settings.build_provider()
        config = LiveConfig(words_per_minute=int(state.get("live_wpm", 150)), temperature=settings.temperature())
        if from_document:
            document = state.get("document")
            if not isinstance(document, Document):
                raise InputError("There is no debate on the Debate page to run live; generate one there first.")
        with rate.debate_start(state):  # a question create() refuses gives the start back
            if from_document:
                debate = LiveDebate.create("", provider, config=config, document=document, store=jobs.store(),
                                           source_debate=state.get("debate_id"), owner=owner.token())
            else:
                debate = LiveDebate.create(state.get("live_question", ""), provider, config=config,
                                           store=jobs.store(), owner=owner.token(),
                                           context_fields={name: state.get(f"live_{name}")
                                                           for name in ("geography", "timeframe", "domain")})
    except ClearSideError as exc:
        state["live_error"] = exc.for_dashboard()
        return
    job = jobs.registry().add(LiveJob(debate, step_mode=bool(state.get("live_step_start"))).start())
    owner.claim(job.id)
    attach(job.id)


def steerable(debate_id: str) -> bool:
    """Only the browser that started a live debate steers it; a link opened elsewhere follows it read-only."""
    try:
        return owner.may_change(debate_id, jobs.store().get(debate_id).data)
    except ClearSideError:  # not saved (yet): this session made it
        return True


READ_ONLY = ("Read-only: this live debate was started in another browser or on another machine. You can follow "
             "it and download it; only the browser that started it can pause, step, intervene or resume it.")


def resume_saved(transcript_id: str) -> None:
    """Continue a saved debate: re-attach when this server still runs it, else resume it from the store."""
    if not steerable(transcript_id):
        st.session_state["live_error"] = READ_ONLY
        return
    job = jobs.registry().get(transcript_id)
    if not isinstance(job, LiveJob):
        try:
            job = resume_job(jobs.store(), transcript_id, settings.build_provider(),
                             step_mode=bool(st.session_state.get("live_step_start")))
        except ClearSideError as exc:
            st.session_state["live_error"] = exc.for_dashboard()
            return
        job = jobs.registry().add(job)
    job.resume()
    attach(transcript_id)


def running_elsewhere(debate_id: str | None) -> LiveJob | None:
    """A live debate the runtime runs on another process or replica, followed (and, for its owner, steered)
    from here; None when it is not running."""
    if not debate_id:
        return None
    try:
        if jobs.queued_job(jobs.store().get(debate_id).data) is None:
            return None
        try:
            provider = settings.build_provider()  # for a Retry from this page
        except ClearSideError:
            provider = None
        return jobs.registry().add(LiveJob.follow(jobs.store(), debate_id, provider))
    except ClearSideError:
        return None


def intervene(job: LiveJob, kind: str) -> None:
    state = st.session_state
    text = state.get(f"live_iv_{kind}", "")
    to = state.get(f"live_iv_{kind}_to")
    to = None if to in (None, "auto") else to
    uploaded = state.get(evidence_file_key()) if kind == "inject_evidence" else None
    try:
        # a file is read first, within the Debate page's limits: a refusal names it and queues nothing
        source = read_source(uploaded.name, uploaded.getvalue()) if uploaded is not None else None
        with rate.challenge(state):
            item = job.pause(text, to) if kind == "pause_question" else job.submit(kind, text, to, source)
        if item is not None and kind != "inject_evidence":  # an answer is coming: it is brought into view
            state.setdefault(f"live_asked_{job.id}", set()).add(item.id)
    except ClearSideError as exc:
        state[f"live_iv_error_{kind}"] = exc.for_dashboard()  # what was typed stays in the box
        return
    state.update({f"live_iv_{kind}": "", f"live_iv_error_{kind}": ""})
    if uploaded is not None:
        state["live_iv_file_n"] = state.get("live_iv_file_n", 0) + 1
    state["live_iv_notice"] = f"{CONTROLS[kind][0]}: sent. It appears in the transcript with its outcome."


def next_turn(job: LiveJob) -> None:
    job.step()
    st.session_state[f"live_step_{job.id}"] = True  # step() switches step mode on


def toggle_step(job: LiveJob) -> None:
    job.set_step_mode(bool(st.session_state.get(f"live_step_{job.id}")))


def active(snap) -> bool:
    """Still worth polling: not finished, or a question or clarification is still being answered."""
    if snap.status == "failed":
        return False
    return snap.status != "done" or any(i.status == "queued" and i.type != "inject_evidence"
                                        for i in snap.transcript.interventions)


def structure(snap) -> tuple:
    """What the page around the streaming panel shows: the status (the controls), the finished turns and the
    interventions (the transcript below the panel), a turn kept mid-way by a pause."""
    transcript = snap.transcript
    partial = transcript.partial
    return (snap.status, active(snap), len(transcript.turns), transcript.cursor,
            None if partial is None else (partial.step, len(partial.speech)),
            tuple((i.id, i.status) for i in transcript.interventions))


# the speech streams at the debate's pace: redrawn each second while it grows, slower while nothing moves (a paused
# or waiting debate), each redraw costing every following tab (view.follow). The finished turns are drawn below
# this panel by the page, once per turn, not every second.
def live_panel(job_id: str, shown: tuple) -> None:
    snap = jobs.registry().get(job_id).snapshot()
    if structure(snap) != shown:
        st.rerun()  # a turn finished, an intervention moved, the status changed: the page around this panel did
    view.poll_changed("live", (snap.speaker, snap.activity, len(snap.speech), len(snap.raw)))
    answered(job_id, snap.transcript)
    live_view.phase_progress(snap.transcript, snap.status)
    live_view.now_speaking(snap.speaker, snap.activity, snap.speech, snap.status, snap.raw)


def answered(job_id: str, transcript) -> None:
    """The newest answer to a question asked in this session: a notice with a jump link, and one scroll to it."""
    asked = st.session_state.get(f"live_asked_{job_id}") or set()
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
    pause.button("Pause", key="live_pause", on_click=job.pause, icon=":material/pause:", width="stretch",
                 disabled=status not in ("running", "waiting"))
    resume.button("Resume", key="live_resume", on_click=job.resume, icon=":material/play_arrow:", width="stretch",
                  disabled=status not in ("paused", "pausing"), type="primary")
    step_key = f"live_step_{job.id}"
    if step_key not in st.session_state:
        st.session_state[step_key] = snap.step_mode
    toggle, step = st.columns(2)
    toggle.toggle("Step mode", key=step_key, on_change=toggle_step, args=(job,),
                  help="Run one turn at a time: after each turn the debate waits for Next turn.")
    step.button("Next turn", key="live_next", on_click=next_turn, args=(job,), icon=":material/skip_next:",
                width="stretch", disabled=status not in ("waiting", "paused"),
                help="Run exactly one more turn, then wait (switches step mode on).")


def intervention_controls(job: LiveJob, snap) -> None:
    st.markdown("**Intervene**")
    # after the end only what can still be answered is offered, and any box the user already typed into
    kinds = [k for k in CONTROLS if snap.status != "done" or k in AFTER_THE_END
             or (st.session_state.get(f"live_iv_{k}") or "").strip()]
    for tab, kind in zip(st.tabs([TABS[k] for k in kinds]), kinds, strict=True):
        label, auto, help_text = CONTROLS[kind]
        with tab:
            st.caption(help_text)
            st.text_area("Your question" if kind != "inject_evidence" else "Evidence or a source to consider",
                         key=f"live_iv_{kind}", height=80, help=f"At most {MAX_QUESTION} characters.")
            length_note(f"live_iv_{kind}", MAX_QUESTION, "Your text")
            if kind == "inject_evidence":
                st.file_uploader("Or attach a source file", type=sources_view.TYPES, key=evidence_file_key(),
                                 on_change=lambda: st.session_state.update(live_iv_error_inject_evidence=""),
                                 help="The text above becomes your note on the file (optional with a file).")
                st.caption(FILE_LIMITS)
            if kind == "direct_question":
                st.radio("Ask", ["pro", "con", "moderator"], key=f"live_iv_{kind}_to", index=None, horizontal=True,
                         format_func=RECIPIENTS.get)
            elif auto is not None:
                st.radio("Ask", list(RECIPIENTS), key=f"live_iv_{kind}_to", horizontal=True,
                         format_func=lambda r, auto=auto: RECIPIENTS[r] or auto)
            st.button(label, key=f"live_do_{kind}", on_click=intervene, args=(job, kind), width="stretch")
            if st.session_state.get(f"live_iv_error_{kind}"):
                st.error(sources_view.lines(st.session_state[f"live_iv_error_{kind}"]), icon=":material/block:")
    if st.session_state.get("live_iv_notice"):
        st.caption(view.esc(st.session_state.pop("live_iv_notice")))


def finished_links(transcript) -> None:
    st.page_link(page_path(TIMELINE), label="Open in Timeline", icon=":material/timeline:",
                 query_params={"debate": transcript.id})
    live_view.exports(transcript, "live_")


def job_view(job: LiveJob) -> None:
    snap = job.snapshot()
    mine = steerable(job.id)
    live_view.header(snap.transcript)
    if snap.status == "failed":
        st.error(view.esc(snap.error or "The live debate stopped."))
        if mine:
            st.caption("Every finished turn is saved; Retry continues from the turn that failed.")
            st.button("Retry", key="live_retry", on_click=job.retry, type="primary")
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
        elif snap.status != "failed":
            controls(job, snap)
        if mine and snap.status != "failed":  # an intervention would restart the worker: that is what Retry is for
            intervention_controls(job, snap)
        st.divider()
        st.button("New live debate", key="live_new", on_click=detach, icon=":material/add:")
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
        st.error(view.esc(exc.for_dashboard()))
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
        st.button("Resume", key="live_resume_saved", on_click=resume_saved, args=(transcript_id,), type="primary")
    st.button("New live debate", key="live_new", on_click=detach, icon=":material/add:")
    live_view.phase_progress(transcript)
    live_view.transcript_view(transcript)
    return True


def start_view() -> None:
    question_box("live_question", error_key="live_error",
                 placeholder="e.g. Should cities ban private cars from their centres?")
    with st.expander("Context (optional)"):
        context_boxes("live_", error_key="live_error", placeholders=False)
    pace, mode = st.columns(2)
    pace.number_input("Pace (words per minute)", min_value=20, max_value=300, value=150, step=10, key="live_wpm",
                      persist_state="session",
                      help="Sets each turn's length: a 2-minute opening gets about 2 × pace words, a 30-second "
                           "question half a minute's worth. Speech past 120% of its budget is cut.")
    pace.caption("Sets each turn's length (time × pace). Lower is shorter and faster.")
    mode.toggle("Step mode", key="live_step_start", persist_state="session",
                help="Run one turn at a time: the debate waits for Next turn before every turn.")
    st.button("Start live debate", type="primary", key="live_start", on_click=start_live)
    document = st.session_state.get("document")
    if isinstance(document, Document):
        with st.container(border=True):
            st.markdown(f"**From the Debate page:** {view.esc(document.proposition.normalized_question)}")
            st.button("Run live on this debate's question", key="live_from_document", on_click=start_live,
                      args=(True,))
    if st.session_state.get("live_error"):
        st.error(view.esc(st.session_state["live_error"]))
    try:
        unfinished = [s for s in live_view.saved_summaries(unfinished=True) if steerable(s.id)]  # only yours
    except ClearSideError as exc:
        st.error(view.esc(exc.for_dashboard()))
        unfinished = []
    if unfinished:
        st.markdown("## Unfinished live debates")
        for summary in unfinished:
            text, button = st.columns([5, 1], vertical_alignment="center")
            running = isinstance(jobs.registry().get(summary.id), LiveJob)
            text.markdown(f"{view.esc(live_view.summary_label(summary))}"
                          + (" :blue-badge[on this server]" if running else ""))
            button.button("Resume", key=f"live_resume_{summary.id}", on_click=resume_saved,
                          args=(summary.id,), width="stretch")


st.title("Live debate")
st.caption("Six phases, 21 timed turns: openings, constructive rounds, cross-examination, rebuttals, closings and "
           "the moderator's synthesis. Pause, step through or intervene at any time.")

wanted = st.query_params.get("live")
if wanted:
    st.session_state["live_job"] = wanted
elif st.session_state.get("live_job"):
    st.query_params["live"] = st.session_state["live_job"]  # back from another page: the URL re-attaches on reload
job_id = st.session_state.get("live_job")
job = jobs.registry().get(job_id) or running_elsewhere(job_id)
if isinstance(job, LiveJob):
    job_view(job)
elif not job_id or not saved_view(job_id):
    start_view()
