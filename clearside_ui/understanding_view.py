"""The understanding check's views: the sidebar's switch, the forms (before a debate starts, after it is read, at a
re-test), a debate's summary in words (never a grade), and the Understanding page's gains across debates with the
CSV and each debate's re-test link. Every user and model string goes through ``esc``.
"""

from __future__ import annotations

import streamlit as st

from clearside.errors import ClearSideError
from clearside.quality.understanding import LEANS, MAX_REASON, MAX_REASONS
from clearside_ui import page_path
from clearside_ui import understanding_actions as actions
from clearside_ui.format import MISSING, esc

PAGE = "app_pages/understanding.py"
TITLES = {"before": "Before you read: what do you know already?", "after": "After reading: what do you know now?",
          "retest": "Re-test: what do you remember now?"}
COMPARISON_LABELS = {"after-before": "After reading, minus before", "retest-before": "At the re-test, minus before"}


def switch() -> None:
    """The one switch (in the sidebar): off by default."""
    st.toggle("Understanding check", key=actions.SWITCH,
              help="Before a debate, write the reasons you know for and against; after reading, again. ClearSide "
                   "counts the reasons that match the debate's arguments. Nothing is graded; no name is kept.")


def form(stage: str) -> None:
    """The stage's boxes: reasons for and against (one a line), lean, confidence."""
    st.markdown(f"##### {TITLES[stage]}")
    st.caption(f"One reason a line, up to {MAX_REASONS} a side, {MAX_REASON} characters each. Nothing is graded; "
               "it is kept with the debate in this store, under this browser, with no name.")
    boxes(lambda field: actions.key(stage, field), actions.error_key(stage))


def boxes(key, error_key: str) -> None:
    """The check's boxes (reasons for and against, lean, confidence) under the session keys ``key(field)``, and the
    refusal kept at ``error_key``: the Debate page's check and a study's participant answer the same form."""
    left, right = st.columns(2)
    left.text_area("Reasons FOR you know", key=key("for"), height=120)
    right.text_area("Reasons AGAINST you know", key=key("against"), height=120)
    left.select_slider("Your lean", options=[None, *LEANS], key=key("lean"),
                       format_func=lambda v: "not given" if v is None else LEANS[v])
    right.number_input("Your confidence (0-100)", min_value=0, max_value=100, step=5, value=None,
                       key=key("confidence"), placeholder="not given")
    if st.session_state.get(error_key):
        st.error(esc(st.session_state[error_key]))


def before() -> None:
    """On the Debate page while no debate is open, with the switch on: the optional "before" form."""
    if not actions.on():
        return
    with st.expander("Understanding check: before you read (optional)", expanded=True):
        form("before")
        st.caption("Leave it empty to skip. It is saved when you press Generate.")


def after(debate_id: str) -> None:
    """Under a finished debate, with the switch on: the "after" form, then the summary."""
    if not actions.on():
        return
    st.divider()
    st.markdown("#### Understanding check")
    known = actions.summary(debate_id)
    if "after" in known["stages"]:
        summary_view(known)
        retest_link(debate_id)
        return
    form("after")
    st.button("Save my answer", key=actions.save_key("after"), on_click=actions.save, args=("after", debate_id),
              type="primary")


def summary_view(known: dict) -> None:
    """The counts in words and the hinges named; never a grade."""
    st.markdown(esc(known["sentence"]))
    if known["hinges_named"]:
        st.markdown("The hinges you named: " + "; ".join(f"“{esc(h)}”" for h in known["hinges_named"]))
    st.caption("These count the reasons you wrote that match this debate's arguments (an approximate match). A "
               "reason that matches none is not wrong: it is not among this debate's arguments. Not a grade.")


def retest_link(debate_id: str) -> None:
    st.page_link(page_path(PAGE), label="Re-test later: answer again in a few days", icon=":material/event_repeat:",
                 query_params={"debate": debate_id, "retest": "1"})


def retest(debate_id: str) -> None:
    """The Understanding page opened by a re-test link: the form, then the updated summary."""
    st.markdown("#### Re-test")
    try:
        known = actions.summary(debate_id)
    except ClearSideError as exc:  # a wrong link is named, the page goes on
        st.error(esc(f"This re-test link does not open a debate: {exc.for_dashboard()}"))
        return
    st.markdown(f"**{esc(known['title'] or 'This debate')}**")
    if st.session_state.get(actions.saved_key("retest")) == debate_id:
        st.success("Saved. Your answers so far:", icon=":material/check_circle:")
        summary_view(known)
        return
    form("retest")
    st.button("Save my re-test", key=actions.save_key("retest"), on_click=actions.save, args=("retest", debate_id),
              type="primary")


def _interval(row: dict) -> str:
    if row["ci_low"] is None:
        return "needs 2 debates" if row["n"] else ""
    return f"{row['ci_low']:+.2f} to {row['ci_high']:+.2f}"


def gains() -> None:
    """Mean gain, 95 % interval and n per measure, after and at the re-test against before; the CSV."""
    result = actions.gains()
    st.markdown(f"{result['debates']} debate{'s' if result['debates'] != 1 else ''} answered, "
                f"{result['answers']} answer{'s' if result['answers'] != 1 else ''}.")
    for name, table in result["comparisons"].items():
        st.markdown(f"##### {COMPARISON_LABELS[name]}")
        st.dataframe([{"Measure": row["label"], "Mean gain": row["mean"], "95 % interval": _interval(row),
                       "n": row["n"]} for row in table.values()], hide_index=True,
                     placeholder=MISSING, key=actions.table_key(name))
    st.download_button("Download CSV", actions.csv_text(), file_name="clearside-understanding.csv", mime="text/csv",
                       key=actions.CSV, on_click="ignore", disabled=not result["answers"])


def answered() -> None:
    """Each answered debate: its counts in words and its re-test link."""
    for item in actions.debates():
        with st.container(border=True):
            st.markdown(f"**{esc(item['title'])}**")
            st.markdown(esc(item["summary"]["sentence"]))
            retest_link(item["id"])
