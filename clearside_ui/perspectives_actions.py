"""The Perspectives page's actions (docs/design/perspectives.md): loading a session from its link, starting one,
answering the clarifying questions, retrying, cancelling and resuming, and who may steer it.

A session runs in a :class:`PerspectivesJob` on the durable runtime (``jobs.registry()``, keyed by the session
id, which is also its saved debate's id; any host runs its steps). Callbacks never raise: a ClearSideError is kept
in session state and shown escaped, and every box keeps what was typed.
"""

from __future__ import annotations

import streamlit as st

from clearside.errors import ClearSideError, InputError, NotFound
from clearside.inputs import shown
from clearside.perspectives import DEFAULT_ROUNDS, PerspectivesRun, Session, load
from clearside.perspectives import workflow as flow
from clearside.perspectives.job import PerspectivesJob
from clearside.perspectives.session import blank_answers
from clearside.store import check_id
from clearside_ui import jobs, owner, rate, settings
from clearside_ui.state import Perspectives

PARAM = "perspectives"  # ?perspectives=<session id>: the share link
READ_ONLY = ("Read-only: this session was started in another browser or on another machine. Only that browser "
             "can answer its questions, cancel, retry or resume it.")


def load_saved(session_id: str) -> Session:
    """The saved session for an id from the address bar, or an InputError that says what is wrong."""
    try:
        check_id(session_id)
    except NotFound:
        raise InputError(f"“{shown(session_id)}” in the address is not a perspectives session id "
                         "(ids are 32 letters and digits).") from None
    try:
        session = load(jobs.store(), session_id)
    except NotFound:
        raise InputError(f"No saved perspectives session has the id “{session_id}”: it was deleted, or the address "
                         "is wrong (ids are 32 letters and digits).") from None
    except ClearSideError:
        raise
    except (KeyError, TypeError, ValueError) as exc:  # saved by something else, or damaged
        raise InputError(f"The saved perspectives session “{session_id}” cannot be read: "
                         f"{str(exc).splitlines()[0]}") from None
    return session


def resumed_job(session_id: str) -> PerspectivesJob:
    """A job for a saved session, run by the sidebar's model (it continues from the saved state)."""
    run = PerspectivesRun.resume(session_id, settings.build_provider(), jobs.store(),
                                 temperature=settings.temperature())
    return PerspectivesJob(run)


def attach(session_id: str) -> None:
    st.session_state.update({Perspectives.JOB: session_id, Perspectives.ERROR: "", Perspectives.SAVED_ERROR: ""})
    st.query_params[PARAM] = session_id


def detach() -> None:
    st.session_state.update({Perspectives.JOB: None, Perspectives.ERROR: "", Perspectives.SAVED_ERROR: ""})
    st.query_params.pop(PARAM, None)


def start() -> None:
    """Create the session (saved at once), then ask the clarifier on a worker."""
    state = st.session_state
    state[Perspectives.ERROR] = ""
    try:
        jobs.host()  # the runtime runs the session's steps; this dashboard is one of its hosts
        with rate.debate_start(state):  # a question create() refuses gives the start back
            run = PerspectivesRun.create(state.get(Perspectives.QUESTION, ""), settings.build_provider(),
                                         rounds=int(state.get(Perspectives.ROUNDS, DEFAULT_ROUNDS)), store=jobs.store(),
                                         observability=bool(state.get(Perspectives.OBSERVE, True)),
                                         temperature=settings.temperature(), owner=owner.token())
    except ClearSideError as exc:
        state[Perspectives.ERROR] = exc.for_dashboard()  # the question stays in its box
        return
    job = jobs.registry().add(PerspectivesJob(run))
    job.ask()
    owner.claim(job.id)
    attach(job.id)


def steerable(session_id: str) -> bool:
    """Only the browser that started a session answers and steers it; a link opened elsewhere shows it read-only."""
    try:
        return owner.may_change(session_id, jobs.store().get(session_id).data)
    except ClearSideError:
        return True  # not saved: nothing to protect, and nothing to steer either


def submit_answers(session_id: str, count: int) -> None:
    """Merge the answers (a question is answered or skipped, never left blank), then run the rounds and the
    synthesis."""
    if not steerable(session_id):
        st.session_state[Perspectives.gate_error(session_id)] = READ_ONLY
        return
    state = st.session_state
    answers = [state.get(Perspectives.answer(session_id, n)) or "" for n in range(1, count + 1)]
    skipped = [n for n in range(1, count + 1) if state.get(Perspectives.skip(session_id, n))]
    state[Perspectives.gate_error(session_id)] = ""
    state[Perspectives.gate_blank(session_id)] = [n for n in blank_answers(answers) if n not in skipped]
    try:
        jobs.host()
        job = jobs.registry().get(session_id, "perspectives")
        if job is not None:
            job.answer(answers, skipped)
        else:  # a saved session that waits for answers (opened from a link or after a restart)
            job = resumed_job(session_id)
            job.answer(answers, skipped)
            jobs.registry().add(job)
    except ClearSideError as exc:
        state[Perspectives.gate_error(session_id)] = exc.for_dashboard()  # nothing runs; the answers are kept
        return
    attach(session_id)


def _continue(job: PerspectivesJob) -> None:
    if job.busy:
        return
    try:
        jobs.host()
        job.retry()  # from INIT (the clarifier failed) it asks again and waits for the answers
    except ClearSideError as exc:
        st.session_state[Perspectives.SAVED_ERROR] = exc.for_dashboard()


def followed_job(session_id: str | None) -> PerspectivesJob | None:
    """A job for a session the runtime runs now that this server has no job for (started on another replica,
    by a worker, or before a restart): the page follows it. None when no leg of it is queued or running."""
    if not session_id:
        return None
    try:
        if flow.running_leg(jobs.store(), check_id(session_id)) is None:
            return None
        job = resumed_job(session_id)
    except ClearSideError:
        return None  # not a saved session (the saved view says why), or the runtime is unreachable
    return jobs.registry().add(job)


def retry(session_id: str) -> None:
    """Continue a failed session from its last saved step, with the model it was running with."""
    if not steerable(session_id):
        return
    job = jobs.registry().get(session_id, "perspectives")
    if job is not None:
        _continue(job)
    else:
        resume_saved(session_id)


def cancel(session_id: str) -> None:
    """Stop the step in flight at its next token; finished steps and the answers stay saved."""
    if not steerable(session_id):
        return
    job = jobs.registry().get(session_id, "perspectives")
    if job is not None:
        job.cancel()


def resume_saved(session_id: str) -> None:
    """Continue a saved session that this server is not running, with the sidebar's model."""
    if not steerable(session_id):
        st.session_state[Perspectives.SAVED_ERROR] = READ_ONLY
        return
    st.session_state[Perspectives.SAVED_ERROR] = ""
    job = jobs.registry().get(session_id, "perspectives")
    if job is None:
        try:
            job = resumed_job(session_id)
        except ClearSideError as exc:
            st.session_state[Perspectives.SAVED_ERROR] = exc.for_dashboard()
            return
        jobs.registry().add(job)
    _continue(job)
    attach(session_id)
