"""The Live debate page's actions: which debate it shows (``?live=<id>``), starting one (from a question or from
the Debate page's debate), resuming, following one another host runs, and steering it: pause, step, interventions.

Only the browser that started a live debate steers it. Callbacks never raise: a ClearSideError is kept in session
state (``live_error``, ``live_iv_error_<kind>``) and shown escaped, and every box keeps what was typed.
"""

from __future__ import annotations

import streamlit as st

from clearside.errors import ClearSideError, InputError
from clearside.live.debate import LiveDebate, Origin
from clearside.live.job import LiveJob, resume_job
from clearside.live.protocol import LiveConfig
from clearside.schema import Document
from clearside.sources import read_source
from clearside_ui import jobs, owner, rate, settings
from clearside_ui.state import Debate, Live

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
AFTER_THE_END = ("clarification", "direct_question")  # still answered once the last turn is over
READ_ONLY = ("Read-only: this live debate was started in another browser or on another machine. You can follow "
             "it and download it; only the browser that started it can pause, step, intervene or resume it.")


def evidence_file_key() -> str:
    """The uploader's key: a new one after each injection, so the sent file leaves the uploader."""
    return Live.evidence_file(st.session_state.get(Live.FILE_COUNT, 0))


def attach(job_id: str) -> None:
    st.session_state.update({Live.JOB: job_id, Live.ERROR: ""})
    st.query_params["live"] = job_id


def detach() -> None:
    st.session_state.update({Live.JOB: None, Live.ERROR: ""})
    st.query_params.pop("live", None)


def current() -> tuple[str | None, LiveJob | None]:
    """The live debate the page shows (the link's, else this session's: the URL re-attaches on reload) and its job,
    here or followed on the runtime (None: not running anywhere)."""
    wanted = st.query_params.get("live")
    if wanted:
        st.session_state[Live.JOB] = wanted
    elif st.session_state.get(Live.JOB):
        st.query_params["live"] = st.session_state[Live.JOB]  # back from another page: the URL re-attaches on reload
    job_id = st.session_state.get(Live.JOB)
    return job_id, jobs.registry().get(job_id, "live") or running_elsewhere(job_id)


def start_live(from_document: bool = False) -> None:
    state = st.session_state
    try:
        provider = settings.build_provider()
        config = LiveConfig(words_per_minute=int(state.get(Live.WPM, 150)), temperature=settings.temperature())
        if from_document:
            document = state.get(Debate.DOCUMENT)
            if not isinstance(document, Document):
                raise InputError("There is no debate on the Debate page to run live; generate one there first.")
        with rate.debate_start(state):  # a question create() refuses gives the start back
            if from_document:
                debate = LiveDebate.create("", provider, config=config, store=jobs.store(),
                                           origin=Origin(document=document, source_debate=state.get(Debate.ID),
                                                         owner=owner.token()))
            else:
                debate = LiveDebate.create(state.get(Live.QUESTION, ""), provider, config=config,
                                           store=jobs.store(), origin=Origin(owner=owner.token()),
                                           context_fields={name: state.get(f"{Live.CONTEXT}{name}")
                                                           for name in ("geography", "timeframe", "domain")})
    except ClearSideError as exc:
        state[Live.ERROR] = exc.for_dashboard()
        return
    job = jobs.registry().add(LiveJob(debate, step_mode=bool(state.get(Live.STEP_START))).start())
    owner.claim(job.id)
    attach(job.id)


def steerable(debate_id: str) -> bool:
    """Only the browser that started a live debate steers it; a link opened elsewhere follows it read-only."""
    try:
        return owner.may_change(debate_id, jobs.store().get(debate_id).data)
    except ClearSideError:  # not saved (yet): this session made it
        return True


def resume_saved(transcript_id: str) -> None:
    """Continue a saved debate: re-attach when this server still runs it, else resume it from the store."""
    if not steerable(transcript_id):
        st.session_state[Live.ERROR] = READ_ONLY
        return
    job = jobs.registry().get(transcript_id, "live")
    if job is None:
        try:
            job = resume_job(jobs.store(), transcript_id, settings.build_provider(),
                             step_mode=bool(st.session_state.get(Live.STEP_START)))
        except ClearSideError as exc:
            st.session_state[Live.ERROR] = exc.for_dashboard()
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
    text = state.get(Live.intervention(kind), "")
    to = state.get(Live.recipient(kind))
    to = None if to in (None, "auto") else to
    uploaded = state.get(evidence_file_key()) if kind == "inject_evidence" else None
    try:
        # a file is read first, within the Debate page's limits: a refusal names it and queues nothing
        source = read_source(uploaded.name, uploaded.getvalue()) if uploaded is not None else None
        with rate.challenge(state):
            item = job.pause(text, to) if kind == "pause_question" else job.submit(kind, text, to, source)
        if item is not None and kind != "inject_evidence":  # an answer is coming: it is brought into view
            state.setdefault(Live.asked(job.id), set()).add(item.id)
    except ClearSideError as exc:
        state[Live.intervention_error(kind)] = exc.for_dashboard()  # what was typed stays in the box
        return
    state.update({Live.intervention(kind): "", Live.intervention_error(kind): ""})
    if uploaded is not None:
        state[Live.FILE_COUNT] = state.get(Live.FILE_COUNT, 0) + 1
    state[Live.NOTICE] = f"{CONTROLS[kind][0]}: sent. It appears in the transcript with its outcome."


def next_turn(job: LiveJob) -> None:
    job.step()
    st.session_state[Live.step_mode(job.id)] = True  # step() switches step mode on


def toggle_step(job: LiveJob) -> None:
    job.set_step_mode(bool(st.session_state.get(Live.step_mode(job.id))))


def active(snap) -> bool:
    """Still worth polling: not finished, or a question or clarification is still being answered."""
    if snap.status in ("failed", "cancelled"):
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
