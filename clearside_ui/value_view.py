"""The Regression page's section "Did the debate add anything?": a single-pass batch of the suite against a debate
batch, run by run (what ``python -m clearside value`` prints; :mod:`clearside.quality.value`).

The figures are shown as they come out, whichever way they point, and never as a green verdict: on a small model
the debate may add nothing a single pass does not.
"""

from __future__ import annotations

import streamlit as st

from clearside.errors import ClearSideError
from clearside.quality import batch as quality_batch
from clearside.quality import value
from clearside.quality.batch import Batch
from clearside_ui import jobs
from clearside_ui import regression_actions as ra
from clearside_ui import regression_view as rv
from clearside_ui.format import MISSING, esc
from clearside_ui.state import Regression

KEY = Regression.VALUE
WHAT = ("The same items, run as ClearSide debates and as the single-pass control (one call writes both cases and "
        "the synthesis, with the same token budget and the same checks), paired run by run. Debate − single pass "
        "with a 95% bootstrap interval; p from a sign-flip test, Holm-corrected across the metrics.")


def section(suite: str, batches: list[Batch]) -> None:
    st.header("Did the debate add anything?")
    st.caption(WHAT)
    controls, debates = value.arms(batches)
    if not controls:
        here = suite in quality_batch.SUITES  # a suite the page can run (as "Run the suite" above)
        st.caption(f"No single-pass batch of the {suite} suite yet. "
                   + ("Run one with the sidebar's model (as many runs as set above), or " if here else "")
                   + f"from the command line: `python -m clearside value --suite {'FILE' if not here else suite}` "
                     "runs both arms.")
        if here:
            st.button("Run the single pass", key=f"{KEY}_run", on_click=ra.start, args=(suite, value.CONTROL),
                      disabled=ra.running(), icon=":material/play_arrow:",
                      help="A batch of this suite in which one call writes each whole document: the control the "
                           "debates are measured against. One batch runs at a time.")
        return
    if not debates:
        st.caption(f"Every batch of the {suite} suite is a single pass: run the suite with a debate strategy (the "
                   "sidebar's Generation strategy) to pair it.")
        return
    labels = {b.id: ra.label(b, None) for b in (*controls, *debates)}
    left, right = st.columns(2)
    control = left.selectbox("Single pass (the control)", [b.id for b in controls], key=f"{KEY}_a",
                             format_func=labels.get)
    picked = next(b for b in controls if b.id == control)
    ids = [b.id for b in debates]
    debate = right.selectbox("Debate", ids, index=ids.index(value.partner(picked, debates).id), key=f"{KEY}_b",
                             format_func=labels.get)
    try:
        report = value.paired(jobs.store(), control, debate)
    except ClearSideError as exc:  # one still running, no item in common, another metric suite
        st.info(esc(exc.for_dashboard()))
        return
    figures(report)
    rv.share_buttons(report, f"value-{control[:8]}-{debate[:8]}", key=f"{KEY}_share")


def figures(report: dict) -> None:
    """What the figures say, then the whole paired table."""
    for warning in report["warnings"]:
        st.warning(esc(warning))
    st.markdown("**What the figures say**\n\n" + "\n".join(f"- {esc(line)}" for line in value.findings(report)))
    if report["regression"]:
        st.warning(f"The debate does significantly worse than the single pass on "
                   f"{esc(', '.join(report['regressions']))}.")
    table = rv.paired_table(report).rename(columns={"Mean A": "Single pass", "Mean B": "Debate",
                                                    "B − A": "Debate − single pass"})
    st.dataframe(table, hide_index=True,
                 placeholder=MISSING, key=f"{KEY}_table", width="stretch", height=rv.table_height(len(table)))
