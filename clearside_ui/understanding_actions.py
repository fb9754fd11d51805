"""The understanding check's session keys and actions (docs/quality/understanding.md): the sidebar's switch, the
answers typed before, after and at a re-test, saved under this browser's token (clearside_ui/owner.py), never a
name.

The keys live here, not in ``state``: they belong to this check alone. Callbacks never raise: a ClearSideError
becomes the stage's error (shown escaped under its form), and every box keeps what was typed until the answer is
saved.
"""

from __future__ import annotations

import streamlit as st

from clearside.errors import ClearSideError
from clearside.quality import understanding
from clearside.quality.understanding import Answer
from clearside.store.records import now
from clearside_ui import jobs, owner

PREFIX = "understanding_"  # every key of this check begins with it (no other page's prefix does)
SWITCH = PREFIX + "on"  # the sidebar's switch, off by default
CSV = PREFIX + "csv"
FIELDS = ("for", "against", "lean", "confidence")


def key(stage: str, field: str) -> str:
    """A form's widget key: ``understanding_before_for``, ``understanding_retest_confidence``..."""
    return f"{PREFIX}{stage}_{field}"


def error_key(stage: str) -> str:
    return f"{PREFIX}{stage}_error"


def saved_key(stage: str) -> str:
    """The debate whose answer of this stage this session saved last (the page then shows the summary)."""
    return f"{PREFIX}{stage}_saved"


def save_key(stage: str) -> str:
    return f"{PREFIX}{stage}_save"


def table_key(name: str) -> str:
    return f"{PREFIX}table_{name}"


def on() -> bool:
    return bool(st.session_state.get(SWITCH))


def typed(stage: str) -> Answer | None:
    """The stage's form as an answer; None when left empty (skipped). Refused input raises InputError."""
    state = st.session_state
    values = {field: state.get(key(stage, field)) for field in FIELDS}
    if not any(v not in (None, "") and (not isinstance(v, str) or v.strip()) for v in values.values()):
        return None
    return understanding.answer(stage, values["for"], values["against"], lean_value=values["lean"],
                                confidence_value=values["confidence"])


def clear(stage: str) -> None:
    for field in FIELDS:
        st.session_state[key(stage, field)] = "" if field in ("for", "against") else None


def before_answer() -> tuple[bool, Answer | None]:
    """Called as a debate starts: (ok, the "before" answer to save once it has an id). Not ok: the form holds
    something refused, its error is shown and the debate should not start (nothing typed is lost)."""
    st.session_state[error_key("before")] = ""
    if not on():
        return True, None
    try:
        return True, typed("before")
    except ClearSideError as exc:
        st.session_state[error_key("before")] = exc.for_dashboard()
        return False, None


def keep_before(debate_id: str, answer: Answer | None) -> None:
    """Save the "before" answer with the debate just started, and empty its form for the next debate."""
    if answer is None:
        return
    try:
        understanding.record(jobs.store(), debate_id, answer, owner=owner.token(), created_at=now())
    except ClearSideError as exc:
        st.session_state[error_key("before")] = exc.for_dashboard()
        return
    clear("before")


def save(stage: str, debate_id: str) -> None:
    """Save the "after" or "retest" form's answer to ``debate_id`` (the summary shows next)."""
    st.session_state[error_key(stage)] = ""
    try:
        answer = typed(stage)
        if answer is None:
            understanding.answer(stage)  # the empty answer's message
        understanding.record(jobs.store(), debate_id, answer, owner=owner.token())
    except ClearSideError as exc:
        st.session_state[error_key(stage)] = exc.for_dashboard()
        return
    clear(stage)
    st.session_state[saved_key(stage)] = debate_id


def summary(debate_id: str) -> dict:
    return understanding.summary(jobs.store(), debate_id, owner=owner.token())


def gains() -> dict:
    return understanding.gains(jobs.store(), owner=owner.token())


def csv_text() -> str:
    return understanding.csv_text(understanding.csv_rows(jobs.store(), owner=owner.token()))


def debates() -> list[dict]:
    """This browser's answered debates, the newest first: id, title, its summary's sentence."""
    seen: dict[str, str] = {}
    for row in jobs.store().all_answers(owner=owner.token()):
        seen.setdefault(row.debate_id, row.title)
    return [{"id": debate_id, "title": title, "summary": summary(debate_id)} for debate_id, title in seen.items()]
