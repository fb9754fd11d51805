"""The Perspectives page's views (docs/design/perspectives.md): the start form, the clarification gate, a running
session followed in a fragment, and a session that is not running (its synthesis, rounds, details and export).

The page polls the job's snapshot in a fragment while a step runs. A session from the address bar that this server
has no job for is followed when the runtime runs it (its progress rows), otherwise loaded from the store and shown
as saved: its questions (when it waits for answers), or what it has so far with Resume. Every user or model string
goes through ``esc``.
"""

from __future__ import annotations

import json

import streamlit as st

from clearside.checks.summary import outcome
from clearside.errors import ClearSideError
from clearside.perspectives import DEFAULT_ROUNDS, MAX_ROUNDS, MAX_SITUATION, MIN_ROUNDS, Session
from clearside.perspectives.job import PerspectivesJob, PerspectivesSnapshot
from clearside.providers import DEFAULT_PROVIDER
from clearside_ui import jobs, settings
from clearside_ui.format import esc, when
from clearside_ui.inputs import question_box
from clearside_ui.perspectives_actions import (
    PARAM,
    READ_ONLY,
    cancel,
    detach,
    followed_job,
    load_saved,
    resume_saved,
    retry,
    start,
    steerable,
    submit_answers,
)
from clearside_ui.perspectives_output_view import (
    in_flight,
    progress_text,
    rounds_view,
    state_label,
    step_label,
    step_name,
    steps_done,
    streaming_view,
    synthesis_view,
)
from clearside_ui.state import Perspectives
from clearside_ui.view import follow, poll_changed

# the clarifier's checks, as the gate names why a question was left out
CHECK_WORDS = {"echoed_question": "it asked your own question back", "generic_question": "it asked nothing specific",
               "duplicate_question": "it asked another question again", "junk": "it was not a question"}
POLL_SECONDS = 1.0  # streamed rounds: each redraw costs every following tab (bench/ui_load.py); slower when idle


def progress(session: Session) -> None:
    done, total = steps_done(session)
    st.progress(min(done / total, 1.0), text=progress_text(session))


def summaries_view(session: Session) -> None:
    if not session.summaries:
        return
    parts = [f"{', '.join(esc(c) for c in s.covers)} for {esc(step_name(s.step))} ({esc(s.reason)})"
             for s in session.summaries]
    st.info("Earlier rounds were summarized to fit the model's context: " + "; ".join(parts) + ".",
            icon=":material/compress:")
    with st.expander("The summaries"):
        for s in session.summaries:
            st.markdown(f"**{', '.join(esc(c) for c in s.covers)}** (for {esc(step_name(s.step))})  \n{esc(s.text)}")


def details(session: Session) -> None:
    """The merged prompt and the state history, each in an expander."""
    with st.expander("Merged prompt (fixed once the questions were answered)"):
        if session.merged_user_prompt:
            st.markdown("  \n".join(esc(line) for line in session.merged_user_prompt.splitlines() if line.strip()))
        else:
            st.caption("Not merged yet: the clarifying questions are not answered.")
    with st.expander("State history"):
        st.markdown(" → ".join(esc("Started" if state == "INIT" else step_label(state, session.max_rounds))
                               for state in session.state_history))


def export_text(session: Session) -> str:
    """The session file (what ``perspectives --out FILE`` writes), as the download holds it."""
    return json.dumps(session.file(), indent=2, ensure_ascii=False)


def export(session: Session) -> None:
    st.download_button("Download session (JSON)", export_text(session),
                       file_name=f"clearside-perspectives-{session.session_id[:8]}.json", mime="application/json",
                       key=Perspectives.EXPORT, on_click="ignore", icon=":material/download:")


def header(session: Session, *, running: bool = False) -> None:
    """The question and the session's settings; a running session's step is shown by its live panel instead
    (a header drawn once would go stale)."""
    demo_notice(session)
    st.markdown(f"## {esc(session.original_user_prompt)}")
    parts = [f"{session.max_rounds} round{'s' if session.max_rounds != 1 else ''}",
             f"observability {'on' if session.observability else 'off'}",
             f"Model: {esc(session.provider or 'not run yet')}", f"Started {when(session.created_at)}"]
    if not running:
        flagged = len(session.checked("flagged")) if session.finished else 0
        parts.append(f"Status: {esc(state_label(session))}" + (f", {flagged} flagged" if flagged else ""))
    st.caption(" · ".join(parts))


def dropped_questions(session: Session) -> None:
    """The clarifier's questions its checks dropped (they handed the question back, or asked nothing specific)."""
    dropped = [item for step, item in session.checked("dropped") if step == "INIT"]
    if dropped:
        st.caption(f"{len(dropped)} question{'s' if len(dropped) != 1 else ''} the model wrote "
                   f"{'were' if len(dropped) != 1 else 'was'} left out: "
                   + "; ".join(f"“{esc(item.text or '')}” ({esc(CHECK_WORDS.get(item.check, item.check))})"
                               for item in dropped) + ".")


def demo_notice(session: Session | None = None) -> None:
    """The tiny-model notice (the Debate page's): for a session, when its own model is the embedded demonstration
    one; before a session, when the sidebar's is (settings' rule)."""
    if session is not None and session.provider:
        if session.provider.split(":", 1)[0] == DEFAULT_PROVIDER:
            st.info(settings.DEMO_NOTE, icon=":material/info:")
        return
    settings.demo_model_notice()


def flagged_items(session: Session) -> list[str]:
    """What the checks flagged and kept, in words: "the synthesis · conclusions item 1 is a heading ..."."""
    return [f"{step_name(step)} · {item.message}" for step, item in session.checked("flagged")]


def completion(session: Session, text: str) -> None:
    """Green "Complete" only when the checks flagged nothing; otherwise a neutral status naming what was
    flagged."""
    flagged = flagged_items(session)
    if not flagged:
        st.success(text, icon=":material/check:")
        return
    st.info(f"Finished, but the quality checks flagged {len(flagged)} item{'s' if len(flagged) != 1 else ''} the "
            "model did not get right after its re-asks; read them with care: "
            + "; ".join(esc(f) for f in flagged) + ".", icon=":material/flag:")


def checks_view(session: Session) -> None:
    """Everything the substance checks did, per step (dropped, ended early, re-asked, flagged), in an expander."""
    done = [(step, item) for step, record in session.quality.items() for item in record.items]
    if not done:
        return
    with st.expander(f"Quality checks ({len(done)} item{'s' if len(done) != 1 else ''} caught)"):
        st.markdown("\n".join(f"- {esc(step_name(step))}: {esc(outcome(item))} · {esc(item.message)}"
                               + (f" (“{esc(item.text)}”)" if item.text else "") for step, item in done))


def questions_view(session: Session, *, answerable: bool = True) -> None:
    """The clarification gate: one answer box per question, and Continue (only the questions, read-only)."""
    sid, questions = session.session_id, session.clarification_questions
    if not answerable:
        st.markdown("### Clarifying questions (waiting for the author's answers)")
        st.markdown("\n".join(f"{number}\\. {esc(question)}" for number, question in enumerate(questions, 1)))
        return
    with st.container(border=True, key=Perspectives.GATE):
        st.markdown("### A few questions first")
        st.caption("Your answers are merged with your question and fixed for every round. The perspectives start "
                   "once each question is answered or skipped: Skip a question that makes no sense, and the "
                   "perspectives are told you skipped it.")
        dropped_questions(session)
        blank = st.session_state.get(Perspectives.gate_blank(sid), [])
        for number, question in enumerate(questions, 1):
            st.markdown(f"**{number}\\.** {esc(question)}")
            skipped = st.toggle("Skip this question", key=Perspectives.skip(sid, number), persist_state="session",
                                help="For a question that makes no sense: the session goes on without an answer "
                                     "to it, and the perspectives are told you skipped it.")
            st.text_area(f"Your answer to question {number}", key=Perspectives.answer(sid, number), height=80,
                         label_visibility="collapsed", persist_state="session", disabled=skipped,
                         placeholder="Skipped" if skipped else
                         "Your answer (what you know; “not sure” is an answer too)")
            if number in blank:
                st.error(f"Question {number} needs an answer (“not sure” is an answer too).",
                         icon=":material/edit_note:")
        st.button("Continue", key=Perspectives.CONTINUE, type="primary", on_click=submit_answers,
                  args=(sid, len(questions)), icon=":material/arrow_forward:")
        if st.session_state.get(Perspectives.gate_error(sid)):
            st.error(esc(st.session_state[Perspectives.gate_error(sid)]))


def outcome_view(session: Session, *, key: str) -> None:
    """A session that is not running: the synthesis (when there is one), the rounds as observability allows, the
    details and the export."""
    if session.synthesis is not None:
        synthesis_view(session)
    else:
        progress(session)
    summaries_view(session)
    checks_view(session)
    if session.round_outputs:
        shown = session.observability
        if not shown:
            shown = st.toggle("Show the rounds", key=Perspectives.show_rounds(key),
                              help="Observability was off for this session: only the synthesis is shown unless "
                                   "you open the rounds.")
        if shown:
            st.markdown("### The rounds" if session.synthesis is not None else "### Finished rounds")
            rounds_view(session)
    details(session)
    export(session)


def running_body(snap: PerspectivesSnapshot) -> None:
    session = snap.session
    if session.state == "INIT":
        streaming_view(session, snap.streaming)
        return
    progress(session)
    if session.observability:
        rounds_view(session, snap.streaming)
    elif in_flight(session)[0] == "synthesis":
        streaming_view(session, snap.streaming)  # the synthesis is always shown
    else:
        st.caption("Observability is off: the rounds run without being shown; the synthesis appears when ready.")


def running_panel(job_id: str) -> None:
    job = jobs.registry().get(job_id, "perspectives")
    if job is None:
        st.rerun()
    snap = job.snapshot()
    if not snap.busy:
        st.rerun()  # finished, failed or waiting for answers: the whole page changes
    session = snap.session
    poll_changed("perspectives", (session.state, snap.step, len(session.round_outputs), session.synthesis is None,
                                  len(snap.streaming), snap.notice))
    st.caption(f"Status: {esc(state_label(snap.session, running=True))}")
    if snap.notice:  # a provider fault being asked again: what it had written is gone, the step starts over
        st.caption(f":material/autorenew: {esc(snap.notice)}")
    running_body(snap)


def failure(session_id: str, message: str, state: str) -> None:
    st.error(esc(message or "The session stopped before it finished."))
    st.caption("Every finished step is saved; Retry continues from the step that failed."
               if state != "INIT" else "Retry asks the model for the clarifying questions again.")
    st.button("Retry", key=Perspectives.RETRY, on_click=retry, args=(session_id,), type="primary",
              icon=":material/refresh:")


def cancelled_view(session_id: str, state: str) -> None:
    """A step the user cancelled: what finished is kept, and the button runs the stopped step again, then the rest."""
    if state == "INIT":
        st.info("Cancelled while the clarifying questions were being prepared. Your question is saved; "
                "Ask again requests the questions.", icon=":material/stop_circle:")
    else:
        st.info(f"Cancelled during {esc(step_name(state))}. Every finished step is kept (saved), and so are your "
                "answers; Continue runs the rest from where it stopped.", icon=":material/stop_circle:")
    st.button("Ask again" if state == "INIT" else "Continue", key=Perspectives.RETRY, on_click=retry,
              args=(session_id,), type="primary", icon=":material/play_arrow:")


def job_view(job: PerspectivesJob) -> None:
    snap = job.snapshot()
    session = snap.session
    header(session, running=snap.busy)
    mine = steerable(job.id)
    if not mine:
        st.caption(READ_ONLY)
    if snap.busy and not mine:
        follow("perspectives", POLL_SECONDS, running_panel, job.id)
    elif snap.busy:
        st.button("Cancel", key=Perspectives.CANCEL, on_click=cancel, args=(job.id,), icon=":material/stop_circle:",
                  help="Stop at the next token. Every finished step and your answers stay saved; Continue runs "
                       "the rest.")
        follow("perspectives", POLL_SECONDS, running_panel, job.id)
    elif session.state == "CLARIFICATION_PENDING":
        questions_view(session, answerable=mine)
    elif session.state != "COMPLETE":
        if not mine:
            st.info(f"This session stopped during {esc(step_name(session.state))}.")
        elif session.cancelled:
            cancelled_view(job.id, session.state)
        else:
            failure(job.id, snap.error, session.state)
        if session.state != "INIT":
            outcome_view(session, key=job.id)
    else:
        completion(session, "Complete: every round ran and the synthesis is ready.")
        outcome_view(session, key=job.id)
    st.button("New question", key=Perspectives.NEW, on_click=detach, icon=":material/add:")


def saved_view(session_id: str) -> bool:
    """A session from the address bar that this server is not running. False when it cannot be loaded."""
    try:
        session = load_saved(session_id)
    except ClearSideError as exc:
        st.error(esc(exc.for_dashboard()))
        return False
    header(session)
    mine = steerable(session_id)
    if not mine:
        st.caption(READ_ONLY)
    if st.session_state.get(Perspectives.SAVED_ERROR):
        st.error(esc(st.session_state[Perspectives.SAVED_ERROR]))
    if session.state == "COMPLETE":
        completion(session, "This saved session is complete.")
        outcome_view(session, key=session_id)
    elif session.state == "CLARIFICATION_PENDING":
        if mine:
            st.caption("This session is saved and waits for your answers; Continue runs it with the sidebar's "
                       "model.")
        questions_view(session, answerable=mine)
    elif not mine:
        st.info(f"This session is saved, stopped at {esc(step_name(session.state))}.")
        if session.state != "INIT":
            outcome_view(session, key=session_id)
    else:
        if session.error:
            st.error(esc(session.error))
        if session.state == "INIT":
            st.info("This session has no clarifying questions yet. Resume asks for them with the sidebar's model.")
        elif session.cancelled:
            st.info(f"This session was cancelled during {esc(step_name(session.state))}. Every finished step and "
                    "your answers are kept; Resume continues from there with the model chosen in the sidebar.")
        else:
            st.info("This session is saved but not running on this server (it failed, or the server restarted). "
                    "Resume continues it from its last finished step with the model chosen in the sidebar.")
        st.button("Resume", key=Perspectives.RESUME, on_click=resume_saved, args=(session_id,), type="primary",
                  icon=":material/play_arrow:")
        if session.state != "INIT":
            outcome_view(session, key=session_id)
    st.button("New question", key=Perspectives.NEW, on_click=detach, icon=":material/add:")
    return True


def start_view() -> None:
    demo_notice()
    question_box(Perspectives.QUESTION, label="Your question or situation", limit=MAX_SITUATION, height=120,
                 error_key=Perspectives.ERROR,
                 placeholder="e.g. My partner reads my messages without asking. Should I say something?",
                 help=f"At most {MAX_SITUATION} characters. You will be asked a few questions before anything else.")
    rounds, observe = st.columns(2, vertical_alignment="center")
    rounds.number_input("Rounds", min_value=MIN_ROUNDS, max_value=MAX_ROUNDS, value=DEFAULT_ROUNDS, step=1,
                        key=Perspectives.ROUNDS, persist_state="session",
                        help="Each round: perspective A widens the possibilities, then perspective B narrows them.")
    observe.toggle("Show every round (observability)", value=True, key=Perspectives.OBSERVE, persist_state="session",
                   help="On: watch each perspective as it is written. Off: only the progress, then the synthesis.")
    st.button("Ask clarifying questions", key=Perspectives.START, type="primary", on_click=start,
              icon=":material/help:")
    if st.session_state.get(Perspectives.ERROR):
        st.error(esc(st.session_state[Perspectives.ERROR]))


def page() -> None:
    """The page body: attach to ``?perspectives=<id>``, then the job, the saved session or the start form."""
    state = st.session_state
    wanted = st.query_params.get(PARAM)
    if wanted:
        state[Perspectives.JOB] = wanted
    elif state.get(Perspectives.JOB):
        st.query_params[PARAM] = state[Perspectives.JOB]  # back from another page: the URL re-attaches on reload
    session_id = state.get(Perspectives.JOB)
    job = jobs.registry().get(session_id, "perspectives")
    if job is None:
        job = followed_job(session_id)
    if job is not None:
        job_view(job)
    elif not session_id or not saved_view(session_id):
        start_view()
