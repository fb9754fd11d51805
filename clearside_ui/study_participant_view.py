"""The Participate page's views: a participant's way through a study from their link. The join link draws their
question and arm and gives them their own link; then the "before" answer, the arm's material (the debate or the
single pass as a document, or the creator's files), the "after" answer, and the re-test with the same link later.
A participant sees only their own question and material, never anyone's answers. Every string goes through
``esc``; where they are is read from the store, so a closed tab or a rerun loses nothing.
"""

from __future__ import annotations

import streamlit as st

from clearside.errors import ClearSideError
from clearside.quality.understanding import MAX_REASON, MAX_REASONS
from clearside.schema import Document
from clearside_ui import study_actions as actions
from clearside_ui import understanding_view
from clearside_ui.format import esc
from clearside_ui.view import document_view

TITLES = {"before": "Before you read: what do you know already?", "after": "After reading: what do you know now?",
          "retest": "Re-test: what do you remember now?"}
LONG_SOURCE = 3_000  # characters: a longer file scrolls in a box of its own
BUTTONS = {"before": "Save and read", "after": "Save my answer", "retest": "Save my re-test"}


def welcome(study_id: str, join_key: str) -> None:
    """The join link: what taking part means, and the button that draws the participant's arm."""
    st.markdown("You are invited to take part in a short study. You will write the reasons you know for and against "
                "a question, read some material, and write them again; a few days later, a short re-test. No name is "
                "asked or kept; nothing is graded.")
    st.button("Take part", type="primary", on_click=actions.join, args=(study_id, join_key),
              key=actions.PREFIX + "join")
    if st.session_state.get(actions.error_key("join")):
        st.error(esc(st.session_state[actions.error_key("join")]))


def joined(study_id: str | None) -> str | None:
    """The token this session already drew for the study (a join link opened again here joins no one new)."""
    return (st.session_state.get(actions.TOKENS) or {}).get(study_id) if study_id else None


def own_link() -> None:
    st.caption("Your own link: keep it (bookmark this page) to come back for the re-test. It is the only way back to "
               "your answers; anyone holding it can answer as you.")
    st.code(actions.own_link(), language=None)


def form(stage: str) -> None:
    """The understanding check's boxes: reasons for and against (one a line), lean, confidence."""
    st.markdown(f"#### {TITLES[stage]}")
    st.caption(f"One reason a line, up to {MAX_REASONS} a side, {MAX_REASON} characters each. Nothing is graded.")
    understanding_view.boxes(lambda field: actions.key(stage, field), actions.error_key(stage))


def _save(study_id: str, token: str, stage: str) -> None:
    st.button(BUTTONS[stage], type="primary", on_click=actions.answer, args=(study_id, token, stage),
              key=actions.PREFIX + f"save_{stage}")


def material(study_id: str, where: dict) -> None:
    """The arm's reading: the document, or the creator's files as plain text."""
    found = actions.material(study_id, where["question"], where["arm"])
    st.markdown("#### Read this")
    if found["kind"] == "document":
        document_view(Document.model_validate(found["document"]), level=3)
        return
    for source in found["sources"]:
        with st.container(border=True):
            st.markdown(f"**{esc(source['ref'])} · {esc(source['name'])}**")
            long = len(source["text"]) > LONG_SOURCE
            with st.container(height=480 if long else "content", border=False):  # a long file scrolls in place
                st.text(source["text"])  # shown as text: never Markdown, never HTML


def taking_part(study_id: str, token: str) -> None:
    """The participant's next step, from the store."""
    try:
        where = actions.where(study_id, token)
    except ClearSideError as exc:
        st.error(esc(exc.for_dashboard()))
        return
    st.markdown(f"### {esc(where['question_text'])}")
    step = where["step"]
    if step == "before":
        own_link()
        form("before")
        _save(study_id, token, "before")
    elif step == "after":
        material(study_id, where)
        st.divider()
        form("after")
        _save(study_id, token, "after")
    elif step == "retest":
        st.success("Thank you: your answers are saved.", icon=":material/check_circle:")
        st.markdown("**Come back in a few days** with this page's link (keep it: bookmark it or copy it from the "
                    "address bar) for a short re-test, without the reading. Or take it now if you were asked to.")
        own_link()
        form("retest")
        _save(study_id, token, "retest")
    else:
        st.success("Thank you: you have finished this study, re-test included. You may close this page.",
                   icon=":material/task_alt:")


def page() -> None:
    """The page from its address: the participant's own link, the join link (opened again in the session that
    joined, it is their own link), or neither."""
    params = st.query_params
    study_id = params.get("study")
    token = params.get("p") or joined(study_id)
    if study_id and token and not params.get("p"):
        params.pop("join", None)
        params["p"] = token
    if study_id and token:
        taking_part(study_id, token)
    elif study_id and (join_key := params.get("join")):
        welcome(study_id, join_key)
    else:
        st.info("Open the participant link you were sent: this page needs it.")
