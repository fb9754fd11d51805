"""Study mode's session keys and actions (docs/quality/study.md): the creator's (create a study under this browser's
token, its status, participant link, results and CSV, refused to any other browser) and the participant's (join
from the link, answer before, after and at the re-test).

The keys live here, not in ``state``: they belong to study mode alone, and all begin with ``study_``. Callbacks never
raise: a ClearSideError becomes the form's error (shown escaped), and every box keeps what was typed until its answer
is saved.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from clearside.errors import ClearSideError
from clearside.quality import study
from clearside_ui import jobs, owner, rate, settings

PREFIX = "study_"
TITLE, QUESTIONS = PREFIX + "title", PREFIX + "questions"
CREATE_ERROR, CREATED = PREFIX + "create_error", PREFIX + "created"
TOKENS = PREFIX + "tokens"  # study id -> this session's participant token (the link's p= as well)
CSV, SAMPLE_D = PREFIX + "csv", PREFIX + "sample_d"
DELETE, DELETED = PREFIX + "delete", PREFIX + "deleted"
FIELDS = ("for", "against", "lean", "confidence")


def arm_key(arm: str) -> str:
    """The form's checkbox of an arm: ``study_arm_debate``..."""
    return f"{PREFIX}arm_{arm}"


def chosen_arms() -> list[str]:
    return [arm for arm in study.ARM_LABELS if st.session_state.get(arm_key(arm))]


def files_key(question: int) -> str:
    return f"{PREFIX}files_{question}"


def key(stage: str, field: str) -> str:
    """A participant form's widget key: ``study_before_for``, ``study_retest_confidence``..."""
    return f"{PREFIX}{stage}_{field}"


def error_key(stage: str) -> str:
    return f"{PREFIX}{stage}_error"


def table_key(name: str) -> str:
    return f"{PREFIX}table_{name}"


# -- the creator --------------------------------------------------------------------------------------------------

def question_lines() -> list[str]:
    return [line for line in (st.session_state.get(QUESTIONS) or "").splitlines() if line.strip()]


def _files() -> dict[int, list[tuple[str, bytes]]]:
    found = {}
    for number in range(1, len(question_lines()) + 1):
        uploads = st.session_state.get(files_key(number)) or []
        found[number] = [(u.name, u.getvalue()) for u in uploads]
    return found


def create() -> None:
    """The form's study saved under this browser and its documents queued on the runtime (this dashboard hosts
    them); the page then shows it (``?study=<id>``). Refused input keeps every box as typed."""
    state = st.session_state
    state[CREATE_ERROR] = ""
    try:
        arms = chosen_arms()
        files = _files() if "sources" in arms else {}
        plan = study.plan(state.get(TITLE), question_lines(), arms, files)
        with rate.debate_start(state):  # one start, as a debate's (clearside_ui/rate.py): refused, it says when
            provider = settings.build_provider()
            jobs.host()
            made = study.create(jobs.store(), plan, owner=owner.token(), provider=provider.spec)
            study.queue(jobs.store(), made.id, provider, temperature=settings.temperature())
    except ClearSideError as exc:
        state[CREATE_ERROR] = exc.for_dashboard()
        return
    state[CREATED] = made.id
    st.query_params["study"] = made.id


def mine() -> list[Any]:
    return jobs.store().studies(owner=owner.token())


def owned(study_id: str) -> Any:
    """The study if this browser created it; else raises (the refusal, never the data)."""
    return study.owned(jobs.store(), study_id, owner.token())


def status(study_id: str) -> dict[str, Any]:
    owned(study_id)
    return study.status(jobs.store(), study_id)


def results(study_id: str) -> dict[str, Any]:
    return study.results(jobs.store(), study_id, owner=owner.token())


def csv_text(study_id: str) -> str:
    return study.csv_text(study.csv_rows(jobs.store(), study_id, owner=owner.token()))


def retry(study_id: str) -> None:
    """Continue the documents that failed or were cancelled."""
    try:
        owned(study_id)
        jobs.host()
        study.queue(jobs.store(), study_id, settings.build_provider(), temperature=settings.temperature())
    except ClearSideError as exc:
        st.session_state[CREATE_ERROR] = exc.for_dashboard()


def delete(study_id: str) -> None:
    """Delete this browser's study with its participants and answers (its debates stay in the Library)."""
    try:
        owned(study_id)
        jobs.store().delete_study(study_id)
    except ClearSideError as exc:
        st.session_state[CREATE_ERROR] = exc.for_dashboard()
        return
    st.query_params.pop("study", None)
    st.session_state[DELETED] = study_id


def join_link(study_id: str) -> str:
    """The participant link of an owned study, on the address this page was opened at."""
    made = owned(study_id)
    return f"{_base()}/participate?study={made.id}&join={made.join_key}"


def _base() -> str:
    """This dashboard's address as the browser opened it (empty in a test without one)."""
    url = st.context.url or ""
    return url.split("?")[0].rsplit("/", 1)[0] if url else ""


# -- the participant ----------------------------------------------------------------------------------------------

def join(study_id: str, join_key: str) -> None:
    """Draw this participant's question and arm and put their own link (``p=``) in the address bar."""
    st.session_state[error_key("join")] = ""
    try:
        token, _ = study.join(jobs.store(), study_id, join_key)
    except ClearSideError as exc:
        st.session_state[error_key("join")] = exc.for_dashboard()
        return
    st.session_state.setdefault(TOKENS, {})[study_id] = token
    st.query_params.pop("join", None)
    st.query_params["p"] = token


def own_link() -> str:
    """The participant's own link (the page's address with ``p=``)."""
    params = st.query_params
    return f"{_base()}/participate?study={params.get('study')}&p={params.get('p') or ''}"


def where(study_id: str, token: str) -> dict[str, Any]:
    return study.where(jobs.store(), study_id, token)


def material(study_id: str, question: int, arm: str) -> dict[str, Any]:
    return study.material(jobs.store(), study_id, question, arm)


def clear(stage: str) -> None:
    for field in FIELDS:
        st.session_state[key(stage, field)] = "" if field in ("for", "against") else None


def answer(study_id: str, token: str, stage: str) -> None:
    """Save the stage's form; refused input is named under the form and nothing typed is lost."""
    state = st.session_state
    state[error_key(stage)] = ""
    values = {field: state.get(key(stage, field)) for field in FIELDS}
    try:
        study.answer(jobs.store(), study_id, token, stage, values["for"], values["against"], lean=values["lean"],
                     confidence=values["confidence"])
    except ClearSideError as exc:
        state[error_key(stage)] = exc.for_dashboard()
        return
    clear(stage)
