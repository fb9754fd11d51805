"""One input policy on every page for the text a user types or pastes.

No ``max_chars`` on user text: the browser would cut a longer paste silently. The box
keeps everything, a note under it says as soon as the text is over its limit and by how
much to shorten it, and the page's own check (``clearside.inputs``) refuses it with the
same numbers: once refused, the note under the question box turns into the error, said once (not again
beside the buttons). Editing a box clears the page's last input error, so a stale error never
stays after the input is fixed.
"""

from __future__ import annotations

import re

import streamlit as st

from clearside.inputs import MAX_CONTEXT_FIELD, MAX_QUESTION, clean, over_limit

CONTEXT_FIELDS = (("geography", "Geography", "United States"), ("timeframe", "Timeframe", "2025-2030"),
                  ("domain", "Domain", "Public policy & AI governance"))


def _clear(error_key: str | None) -> None:
    if error_key:
        st.session_state[error_key] = ""


_COUNTS = re.compile(r"is (\d+) characters long; the limit is (\d+)\.")


def _says_the_same(error: object, note: str) -> bool:
    """Whether the page's refusal ``error`` is the length ``note`` again (the same numbers, whatever the label)."""
    found = _COUNTS.search(error) if isinstance(error, str) else None
    return found is not None and found.groups() == _COUNTS.search(note).groups()


def length_note(key: str, limit: int, label: str, error_key: str | None = None) -> None:
    """A warning under the box while its text is over ``limit`` (counted as the input rules count it). Once the
    page refused the text for that (its ``error_key`` says the same numbers), the note is that error, said once:
    the page's own copy is cleared."""
    message = over_limit(clean(str(st.session_state.get(key) or "")), limit, label)
    if not message:
        return
    if error_key and _says_the_same(st.session_state.get(error_key), message):
        st.session_state[error_key] = ""
        st.error(message, icon=":material/content_cut:")
    else:
        st.warning(message, icon=":material/content_cut:")


def question_box(key: str, *, label: str = "Question or claim", limit: int = MAX_QUESTION, height: int = 90,
                 placeholder: str = "", help: str | None = None, error_key: str | None = None) -> None:
    st.text_area(label, key=key, height=height, persist_state="session", placeholder=placeholder,
                 help=help or f"At most {limit} characters.", on_change=_clear, args=(error_key,))
    length_note(key, limit, label, error_key)


def context_boxes(prefix: str, *, error_key: str | None = None, placeholders: bool = True) -> None:
    """Geography, timeframe and domain side by side; keys ``{prefix}geography`` and so on."""
    columns = st.columns(len(CONTEXT_FIELDS))
    for column, (name, label, example) in zip(columns, CONTEXT_FIELDS, strict=True):
        with column:
            st.text_input(label, key=f"{prefix}{name}", persist_state="session",
                          placeholder=example if placeholders else "", on_change=_clear, args=(error_key,),
                          help=f"Optional. At most {MAX_CONTEXT_FIELD} characters.")
            length_note(f"{prefix}{name}", MAX_CONTEXT_FIELD, label)


def current_label(key: str) -> None:
    """Called just before a picker whose options' labels change as work goes on (a count of runs, a status): its
    choice set again, so the browser shows the chosen option's label as it is now. Streamlit sends a kept
    choice's label only when the choice changes, and the browser showed the label it was picked under ("0/1
    runs" after the run finished)."""
    if key in st.session_state:
        st.session_state[key] = st.session_state[key]
