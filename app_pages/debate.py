"""The Debate page: question, context, live progress, the three-column debate, challenges and exports."""

import streamlit as st

from clearside.engine import DebateRun
from clearside.errors import ClearSideError, InputError
from clearside.inputs import MAX_QUESTION
from clearside.jobs import ChallengeJob, DebateJob, JobRegistry
from clearside.render import render
from clearside.schema import ACTIONS
from ui import settings, view

OTHER = "__other__"
EXPORTS = {"json": ("JSON", "json", "application/json"), "md": ("Markdown report", "md", "text/markdown"),
           "quick": ("Quick View", "md", "text/markdown"), "script": ("Debate Script", "md", "text/markdown")}


@st.cache_resource
def registry() -> JobRegistry:
    return JobRegistry()


def start_debate() -> None:
    try:
        run = DebateRun.from_input(st.session_state.get("question", ""),
                                   geography=st.session_state.get("geography"),
                                   timeframe=st.session_state.get("timeframe"),
                                   domain=st.session_state.get("domain"))
        provider = settings.build_provider()
    except ClearSideError as exc:
        st.session_state["input_error"] = str(exc)
        return
    job = registry().add(DebateJob(run, provider, temperature=settings.temperature()).start())
    st.session_state.update(debate_job=job.id, input_error="", challenge_job=None, challenge_error="")


def start_challenge(action: str, target: str) -> None:
    document = st.session_state.get("document")
    try:
        if not target or not target.strip():
            raise InputError("Choose an element to challenge, or type one.")
        job = ChallengeJob(document, action, target, settings.build_provider(), temperature=settings.temperature())
    except ClearSideError as exc:
        st.session_state["challenge_error"] = str(exc)
        return
    registry().add(job.start())
    st.session_state.update(challenge_job=job.id, challenge_error="")


@st.fragment(run_every=0.5)
def live_debate(job_id: str) -> None:
    snap = registry().get(job_id).snapshot()
    view.progress_view(snap)
    if snap.finished:
        st.rerun()


@st.fragment(run_every=0.5)
def live_challenge(job_id: str) -> None:
    job = registry().get(job_id)
    state, document, error = job.result()
    if state == "running":
        st.info(f"Working on: {view.ACTION_LABELS[job.action]}…")
        return
    st.session_state.update(challenge_job=None, challenge_error=error)
    if document is not None:
        st.session_state["document"] = document
    st.rerun()


def challenge_panel(document) -> None:
    st.markdown("#### Challenge the reasoning")
    targets = view.challenge_targets(document)
    choice = st.selectbox("Element to challenge", [*targets, OTHER], key="challenge_choice",
                          format_func=lambda t: "Other (type it below)" if t == OTHER else targets[t])
    typed = st.text_input("Your own target", key="challenge_typed", max_chars=500) if choice == OTHER else ""
    target = typed if choice == OTHER else choice
    busy = bool(st.session_state.get("challenge_job"))
    for column, action in zip(st.columns(3), ACTIONS, strict=True):
        column.button(view.ACTION_LABELS[action], key=f"challenge_{action}", on_click=start_challenge,
                      args=(action, target), disabled=busy, width="stretch")
    if st.session_state.get("challenge_error"):
        st.error(view.esc(st.session_state["challenge_error"]))
    if busy:
        live_challenge(st.session_state["challenge_job"])


def exports(document) -> None:
    st.markdown("#### Export")
    for column, (fmt, (label, ext, mime)) in zip(st.columns(len(EXPORTS)), EXPORTS.items(), strict=True):
        column.download_button(label, render(document, fmt), file_name=f"clearside-debate-{fmt}.{ext}",
                               mime=mime, key=f"export_{fmt}", on_click="ignore", width="stretch")


st.title("ClearSide")
st.caption("Think both sides. Decide with clarity.")
st.text_area("Question or claim", key="question", max_chars=MAX_QUESTION, height=90, persist_state="session",
             placeholder="e.g. Should the U.S. impose a temporary moratorium on new AI data centers?")
with st.expander("Context (optional)"):
    geo, time_, dom = st.columns(3)
    geo.text_input("Geography", key="geography", max_chars=120, persist_state="session", placeholder="United States")
    time_.text_input("Timeframe", key="timeframe", max_chars=120, persist_state="session", placeholder="2025-2030")
    dom.text_input("Domain", key="domain", max_chars=120, persist_state="session",
                   placeholder="Public policy & AI governance")

job = registry().get(st.session_state.get("debate_job"))
running = job is not None and not job.snapshot().finished
st.button("Generate Pro & Con Debate", type="primary", key="generate", on_click=start_debate, disabled=running)
if st.session_state.get("input_error"):
    st.error(view.esc(st.session_state["input_error"]))

if job is not None:
    snap = job.snapshot()
    if not snap.finished:
        live_debate(job.id)
    elif snap.state == "failed":
        st.error(view.esc(snap.error))
        st.caption("Your question and context are kept; the sections that finished are kept too.")
        st.button("Retry", key="retry", on_click=job.retry)
    elif st.session_state.get("document_for") != job.id:
        st.session_state.update(document=snap.document, document_for=job.id)

document = st.session_state.get("document")
if document is not None and not running:
    st.divider()
    view.document_view(document)
    challenge_panel(document)
    exports(document)
