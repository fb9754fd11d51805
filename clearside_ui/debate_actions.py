"""The Debate page's actions: which debate it shows (the URL is its share link), starting, resuming and copying a
debate, asking and cancelling a challenge.

Callbacks never raise: a ClearSideError becomes ``input_error``, ``challenge_error`` or the sources' error (the page
shows it escaped), and every box keeps what was typed.
"""

from __future__ import annotations

import streamlit as st

from clearside.errors import ClearSideError, InputError
from clearside.quality.references import flagship
from clearside.static.job import ChallengeJob, Snapshot, StaticJob, resume_job
from clearside.static.run import DebateRun
from clearside_ui import jobs, links, owner, personas_view, rate, settings, sources_view, understanding_actions
from clearside_ui.state import Challenge, Debate, Sources


def show(debate_id: str | None) -> None:
    # a challenge's notices belong to the debate they were asked on
    st.session_state.update({Challenge.JOB: None, Challenge.ERROR: "", Challenge.LANDED: None,
                             Challenge.CANCELLED: None})
    st.query_params.pop("example", None)
    links.show("debate", Debate.ID, debate_id)


def open_example() -> None:
    show(None)
    st.query_params["example"] = "flagship"


def current() -> tuple[str | None, StaticJob | None, Snapshot | None]:
    """The debate the page shows (the link's, else this session's; the URL is kept its share link), the job this
    server runs for it, and that job's snapshot."""
    debate_id = links.current("debate", Debate.ID)
    if not links.synced("debate", Debate.ID, debate_id):
        show(debate_id)  # opened from a link, or back from another page: the URL is the share link
    job = jobs.registry().get(debate_id, "static")
    return debate_id, job, job.snapshot() if job is not None else None


def shown_model() -> dict[str, str] | None:
    """The provider and model of what the page shows: the example's stored ``meta.model_info``, a saved or running
    debate's (as its record keeps them); ``None`` when nothing is open (the sidebar's model is the one to name)."""
    debate_id = links.current("debate", Debate.ID)
    if not debate_id:
        if st.query_params.get("example") == "flagship":
            return flagship().document["meta"]["model_info"]
        return None
    try:
        record = jobs.store().get(debate_id)
    except ClearSideError:  # an unknown link: the page says so below
        return None
    info = (record.document or {}).get("meta", {}).get("model_info")
    return info or {"provider": record.provider, "model": record.model}


def debate_run(**extra) -> DebateRun:
    state = st.session_state
    context = {name: state.get(Debate.context(name)) for name in ("geography", "timeframe", "domain")}
    return DebateRun.from_input(state.get(Debate.QUESTION, ""), **context, **extra)


def start_debate() -> None:
    st.session_state[Sources.ERROR] = ""
    try:
        picked = personas_view.chosen()
        run = debate_run(personas=picked)  # the question, context and personas first: no file is read in vain
    except ClearSideError as exc:
        st.session_state[Debate.INPUT_ERROR] = exc.for_dashboard()
        return
    st.session_state[Debate.INPUT_ERROR] = ""
    ready, before = understanding_actions.before_answer()  # refused: said under its form, the debate waits
    if not ready:
        return
    try:  # the sources, read all or nothing; a refusal (or sources with personas) is shown under the uploader
        attached, cite = sources_view.chosen()
        if attached:
            run = debate_run(personas=picked, sources=attached, cite=cite)
    except ClearSideError as exc:
        st.session_state[Sources.ERROR] = exc.for_dashboard()
        return
    try:
        with rate.debate_start(st.session_state):  # refused: the message says when; nothing typed is lost
            job = jobs.start_static(run, settings.build_provider(), temperature=settings.temperature(),
                                    strategy=settings.strategy(), owner=owner.token())
    except ClearSideError as exc:
        st.session_state[Debate.INPUT_ERROR] = exc.for_dashboard()
        return
    owner.claim(job.id)
    understanding_actions.keep_before(job.id, before)
    show(job.id)


def resume(debate_id: str) -> None:
    """Complete an unfinished saved debate: only its missing sections are generated."""
    try:
        job = resume_job(jobs.store(), debate_id, settings.build_provider(), temperature=settings.temperature(),
                         strategy=settings.strategy(), owner=owner.token())
        jobs.start_job(job)
    except ClearSideError as exc:
        st.session_state[Debate.INPUT_ERROR] = exc.for_dashboard()
        return
    owner.claim(debate_id)


def copy_to_edit(debate_id: str) -> None:
    try:
        copy_id = jobs.store().duplicate(debate_id, owner=owner.token())
    except ClearSideError as exc:
        st.session_state[Debate.INPUT_ERROR] = exc.for_dashboard()
        return
    owner.claim(copy_id)
    show(copy_id)
    st.session_state[Debate.COPIED] = copy_id  # the page says the user is now on the copy


def start_challenge(action: str, target: str) -> None:
    debate_id = st.session_state.get(Debate.ID)
    try:
        if not target or not target.strip():
            raise InputError("Choose an element to challenge, or type one.")
        with rate.challenge(st.session_state):
            job = ChallengeJob(jobs.store(), debate_id, action, target, settings.build_provider(),
                               temperature=settings.temperature())
            jobs.start_job(job)
    except ClearSideError as exc:
        st.session_state[Challenge.ERROR] = exc.for_dashboard()
        return
    st.session_state.update({Challenge.JOB: job.id, Challenge.ERROR: "", Challenge.LANDED: None,
                             Challenge.CANCELLED: None})


def challenge_element(action: str, target: str) -> None:
    """A challenge asked beside its element: the panel's picker shows that element too, so its notices (and a
    second challenge) are about the element the user tapped."""
    st.session_state[Challenge.CHOICE] = target
    start_challenge(action, target)


def cancel_challenge() -> None:
    job = jobs.registry().get(st.session_state.get(Challenge.JOB), "challenge")
    if job is not None:
        job.cancel()


def saved_record(debate_id: str):
    try:
        return jobs.store().get(debate_id)
    except ClearSideError:
        return None  # saved_debate says why the link opens nothing
