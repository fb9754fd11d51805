"""The Regression page's sections, top to bottom: the suite, running it, the batches with the one picked, blessing a
baseline, the deltas against it, time and tokens, trends, two batches compared, the debate against the single pass
(clearside_ui/value_view.py), the bless history and one run.

Every user, model or stored text goes through ``esc``; tables go to ``st.dataframe``, which shows text literally.
"""

from __future__ import annotations

import streamlit as st

from clearside import runtime
from clearside.errors import ClearSideError
from clearside.inputs import shown
from clearside.quality import baseline, metrics
from clearside.quality import batch as quality_batch
from clearside.quality.compare_runs import compare_runs
from clearside.quality.versions import VersionChange
from clearside.runtime import eta
from clearside.static.job import past_runs
from clearside_ui import jobs, page_path, settings, value_view
from clearside_ui import regression_actions as ra
from clearside_ui import regression_run_view as run_view
from clearside_ui import regression_view as rv
from clearside_ui.format import MISSING, esc, when
from clearside_ui.inputs import current_label
from clearside_ui.state import Regression
from clearside_ui.view import POLL_SECONDS, follow, poll_changed


def suite_picker() -> str:
    """The built-in suites and every suite of the user's own the store has runs of (reviewed here, run from the
    command line, where the suite file is read)."""
    names = [name for name in quality_batch.suite_names(jobs.store()) if name != "compare"]
    if st.session_state.get(Regression.SUITE) not in names:
        st.session_state[Regression.SUITE] = names[0]
    st.selectbox("Suite", names, key=Regression.SUITE, format_func=ra.suite_label, on_change=ra.suite_changed)
    suite = st.session_state[Regression.SUITE]
    if suite not in quality_batch.SUITES:
        path = ra.suite_file(jobs.store(), suite)
        st.caption(f"Your own suite{f', from {esc(path)}' if path else ''}. Its batches are reviewed, compared and "
                   "blessed here; run it from the command line, where its file is read: "
                   f"`python -m clearside regress --suite {esc(path or 'FILE')}`.")
        return suite
    items = quality_batch.suite_items(suite)
    st.caption(ra.SUITE_NOTES[suite])
    st.markdown("\n".join(f"- **{esc(item.name)}**: {esc(item.proposition)}" for item in items))
    return suite


# each redraw costs every following tab (bench/ui_load.py): drawn by follow(), slower while nothing moves
def job_panel(job_id: str) -> None:
    job = jobs.registry().get(job_id, "regression")
    if job.snapshot().finished:
        st.rerun()  # the result, the batches table and the buttons beside this panel change
    poll_changed("regression", rv.progress_fingerprint(job))
    rv.progress_view(job)


def estimate(suite: str, provider) -> None:
    """How long the run would take here, from the debates this model finished (none yet: it says so)."""
    if provider is None:
        return
    count = len(quality_batch.suite_items(suite)) * int(st.session_state.get(Regression.RUNS) or 1)
    past = past_runs(jobs.store(), provider)  # drawn when the page is, never polled: one query
    st.caption(eta.batch_line(count, past, concurrency=int(st.session_state.get(Regression.CONCURRENCY) or 1)))


def run_controls(suite: str) -> None:
    st.header("Run the suite")
    provider, why = ra.provider_or_error()
    job = ra.job_here(st.session_state.get(Regression.JOB) or "")
    busy = ra.running()
    if provider is None:
        st.error(esc(f"The sidebar's model cannot be used: {why}"))
    else:
        st.caption(f"Runs with the sidebar's model, **{esc(provider.spec)}**, at temperature "
                   f"{settings.temperature():g}; each debate is saved and scored as it finishes.")
    runs, concurrency, go = st.columns([1, 1, 2], vertical_alignment="bottom")
    runs.number_input("Runs per item", min_value=1, max_value=ra.MAX_RUNS, value=3, step=1, key=Regression.RUNS)
    concurrency.number_input("Concurrency", min_value=1, max_value=16, step=1, key=Regression.CONCURRENCY,
                             value=getattr(provider, "concurrency", 1) if provider is not None else 1,
                             help="Debates run at once (default: what the provider handles well).")
    go.button(f"Run the {suite} suite", key=Regression.START, type="primary", on_click=ra.start, args=(suite,),
              disabled=provider is None or busy, icon=":material/play_arrow:")
    if not busy:
        estimate(suite, provider)
    st.checkbox("Swap check", key=Regression.SWAP_CHECK, value=False,
                help="Also rerun each debate's moderator with FOR and AGAINST exchanged and report the flip rate "
                     "(synthesis items that flipped side or vanished): one more moderator call per debate.")
    if st.session_state.get(Regression.START_ERROR):
        st.error(esc(st.session_state[Regression.START_ERROR]))
    if job is None:
        return
    st.markdown(f"**Batch {job.id[:8]}** · {esc(job.suite)} · {esc(job.provider.spec)} · {job.runs} run(s) per item")
    if busy:
        st.button("Cancel", key=Regression.CANCEL, on_click=job.cancel, icon=":material/stop:",
                  help="Runs already started finish; no new ones start. Finished runs are kept.")
        follow("regression", POLL_SECONDS, job_panel, job.id)
    else:
        rv.result_view(job)
        st.button("Dismiss", key=Regression.DISMISS, on_click=ra.dismiss)


def bless_controls(batch, base) -> None:
    if base is None:
        st.caption("No baseline yet for this suite: only the absolute gates apply until a batch is blessed.")
    else:
        st.caption(f"Baseline now: {esc(ra.baseline_line(base))}")
    if batch.id == (base.id if base else None):
        return
    unfinished = ra.state(batch) in runtime.UNDER_WAY or ra.finished(batch) == 0
    if st.session_state.get(Regression.CONFIRM) != batch.id:
        st.button("Bless as baseline…", key=Regression.BLESS, on_click=ra.ask_bless, args=(batch.id,),
                  disabled=unfinished, icon=":material/verified:",
                  help="Every later run of this suite is judged against the baseline."
                  + (" A batch can be blessed once it has finished." if unfinished else ""))
        return
    st.warning(f"Make batch {batch.id[:8]} ({esc(batch.spec)}, {when(batch.created_at)}) the {batch.suite} "
               "baseline? Every later run of this suite is judged against it"
               + (f", instead of batch {base.id[:8]}." if base else "."))
    required = batch.suite in baseline.NOTE_REQUIRED
    st.text_area("Why this baseline" + (" (required)" if required else " (optional)"), key=Regression.BLESS_NOTE,
                 max_chars=2000, help="Kept in the bless history. "
                 + ("The flagship baseline changes only if reasoning quality improves; say how."
                    if required else ""))
    confirm, cancel = st.columns(2)
    confirm.button("Confirm bless", key=Regression.BLESS_CONFIRM, on_click=ra.bless, args=(batch.id,), type="primary",
                   width="stretch")
    cancel.button("Cancel", key=Regression.BLESS_CANCEL, on_click=ra.cancel_bless, width="stretch")


def deltas(batch, base) -> None:
    st.header("Deltas")
    if base is None:
        st.info("No baseline yet: these are the absolute gates only. Bless a batch to compare later runs with it.")
    elif base.id == batch.id:
        st.info("This batch is the baseline: every later run is judged against it. Absolute gates shown.")
    else:
        st.caption(f"Against the baseline {esc(ra.baseline_line(base))}. A metric fails when it is worse than the "
                   "baseline by more than its tolerance plus the larger spread, or misses an absolute gate.")
        changes, notes = ra.version_check(batch, base)
        if changes:
            st.warning(esc(f"Not comparable with the baseline: {'; '.join(changes)}. Metrics from a different metric "
                           "suite or embedding model measure differently; bless a batch made with the new versions "
                           "to judge later runs against it."))
        if notes:
            st.caption("Version notes: " + esc(" ".join(notes)))
    checks = ra.checks_for(batch, base)
    if not checks:
        st.caption("No finished runs yet.")
        return
    failures = [c for c in checks if c["status"] == "fail"]
    if failures:
        heading = "**REGRESSION**" if base is not None else "**BELOW THE GATES** (no baseline yet)"
        st.error(f"{heading} — " + "; ".join(f"{esc(c['metric'])}: {esc('; '.join(c['reasons']))}"
                                             for c in failures))
    else:
        st.success(f"**PASS** — {ra.finished(batch)} finished run(s), no metric fails.")
    st.dataframe(rv.highlight(rv.deltas_table(checks)), hide_index=True,
                 placeholder=MISSING, key=Regression.DELTAS, width="stretch",
                 height=rv.table_height(len(checks)), column_config={
                     "Reasons": st.column_config.TextColumn(width="large"),
                     "Status": st.column_config.TextColumn(help="fail: misses a gate or is worse than the baseline "
                                                                "beyond what is allowed; info: reported, never gated")})


def costs(batch, base) -> None:
    """Time and tokens of the batch's runs, beside its baseline's."""
    shown = [batch] if base is None or base.id == batch.id else [batch, base]
    summary = rv.cost_summary(shown)
    if summary is None:
        return
    with st.expander("Time and tokens", icon=":material/timer:"):
        st.caption("Means per run: wall time from start to finish, model time over every call, the mean wait for a "
                   "call's first token (where the backend reports it), tokens generated. Reported, never gated.")
        st.dataframe(summary, hide_index=True, placeholder=MISSING, key=Regression.COSTS, width="stretch")
        if st.toggle("Chart of wall time per run", key=Regression.COSTS_SHOW_CHART):
            st.plotly_chart(rv.cost_figure(shown), key=Regression.COSTS_CHART, width="stretch")
        st.dataframe(rv.cost_rows(batch), hide_index=True,
                     placeholder=MISSING, key=Regression.COSTS_RUNS, width="stretch")


def trends(batches, baseline_id: str | None, selected: str) -> None:
    st.header("Trends")
    names = rv.metric_names(batches)
    if len(batches) < 2 or not names:
        st.caption("The trend chart appears once the suite has two batches with finished runs.")
        return
    if st.session_state.get(Regression.METRIC) not in names:
        st.session_state[Regression.METRIC] = rv.DEFAULT_METRIC if rv.DEFAULT_METRIC in names else names[0]
    metric = st.selectbox("Metric", names, key=Regression.METRIC,
                          format_func=lambda n: f"{n} — {metrics.SUMMARY[n][1]}")
    st.plotly_chart(rv.trend_figure(rv.trend_rows(batches, metric, baseline_id), metric, selected),
                    key=Regression.TREND, width="stretch")


def drill_down(batch) -> None:
    st.header("One run")
    runs = ra.runs_of(batch)
    if st.session_state.get(Regression.RUN) not in runs:
        st.session_state[Regression.RUN] = next(iter(runs))
    labels = {run_id: ra.run_label(row) for run_id, row in runs.items()}
    current_label(Regression.RUN)  # its status moves while it runs
    st.selectbox("Run", list(labels), key=Regression.RUN, format_func=labels.get)
    row = runs[st.session_state[Regression.RUN]]
    status = ra.run_status(row)
    if status == "failed":
        st.error(esc(f"This run failed: {(row.get('data') or {}).get('error', 'no error was recorded')}"))
    elif status != "done":
        st.info(f"This run is {status}: its debate is shown as far as it got.")
    debate_id = row.get("debate_id")
    if debate_id:
        st.page_link(page_path(run_view.DEBATE), label="Open this debate on the Debate page",
                     icon=":material/open_in_new:", query_params={"debate": debate_id})
    layouts = run_view.LAYOUTS
    layout = st.radio("Layout", list(layouts), format_func=layouts.get, key=Regression.LAYOUT, horizontal=True)
    reference = ra.reference_of(row)
    document = run_view.run_document(debate_id)
    if layout == "sections" and document is not None:
        run_view.by_section(document, reference)
    else:
        run_view.whole(document, debate_id, reference, stacked=layout == "stacked")
    st.markdown("#### Its metrics")
    run_view.detail_view(row)


def compare_two(batches, baseline_id: str | None) -> None:
    """Two batches of the suite, run by run: the paired statistics of `compare-runs`."""
    st.header("Compare two batches")
    if len(batches) < 2:
        st.caption("Two batches of the suite are compared run by run once it has two.")
        return
    ids, default_a, default_b = ra.compare_choices(batches, baseline_id)
    labels = {b.id: ra.label(b, baseline_id) for b in batches}
    left, right = st.columns(2)
    a = left.selectbox("A (compared against)", ids, index=ids.index(default_a), key=Regression.COMPARE_A,
                       format_func=labels.get)
    b = right.selectbox("B (under review)", ids, index=ids.index(default_b), key=Regression.COMPARE_B,
                        format_func=labels.get)
    allow = bool(st.session_state.get(Regression.COMPARE_ALLOW))
    try:
        report = compare_runs(jobs.store(), a, b, allow_version_change=allow)
    except VersionChange as exc:  # another metric suite or embedding model: refused unless asked for
        st.warning(esc(exc.for_dashboard()))
        st.checkbox("Compare across the version change", key=Regression.COMPARE_ALLOW)
        return
    except ClearSideError as exc:  # the same batch twice, one still running, no case in common
        st.info(esc(exc.for_dashboard()))
        return
    if report["version_changes"]:
        st.checkbox("Compare across the version change", key=Regression.COMPARE_ALLOW)
    st.caption(f"{report['pairs']} pair(s) of runs over {len(report['cases'])} item(s), paired by item and repeat. "
               "B − A with a 95% bootstrap interval; p from a sign-flip permutation test, Holm-corrected across "
               "the metrics. A regression is significant (Holm p < 0.05) and worse by more than the tolerance.")
    for warning in report["warnings"]:
        st.warning(esc(warning))
    if report["regression"]:
        st.error(f"**REGRESSION** — B is significantly worse beyond tolerance on "
                 f"{esc(', '.join(report['regressions']))}.")
    else:
        st.success("**NO REGRESSION** — no metric is significantly worse than A by more than its tolerance.")
    table = rv.paired_table(report)
    st.dataframe(rv.paired_highlight(table), hide_index=True,
                 placeholder=MISSING, key=Regression.PAIRED, width="stretch",
                 height=rv.table_height(len(table)))
    if st.toggle("Chart of the differences", key=Regression.PAIRED_SHOW_CHART):
        st.plotly_chart(rv.paired_figure(report), key=Regression.PAIRED_CHART, width="stretch")
    rv.share_buttons(report, f"compare-{a[:8]}-{b[:8]}", key=Regression.PAIRED_SHARE)
    if report["version_notes"]:
        st.caption("Version notes:\n" + "\n".join(f"- {esc(note)}" for note in report["version_notes"]))
    notes = rv.too_few_notes(report)
    if notes:
        st.markdown("**Too few repeats to tell** (alpha 0.05, power 80%, for the spread observed):\n"
                    + "\n".join(f"- {esc(note)}" for note in notes))
    if not report["flips"]:
        st.caption("No run flipped between passing and failing its gates.")
    for n, flip in enumerate(report["flips"]):
        st.markdown(f"**{esc(flip['case'])} #{flip['repeat'] + 1}: {esc(flip['change'])}**")
        sides = st.columns(2)
        for column, side in zip(sides, ("a", "b"), strict=True):
            run = flip[side]
            column.markdown(f"{side.upper()}: " + ("passes" if run["passed"] else
                                                   "fails — " + esc("; ".join(run["failures"]))))
        st.dataframe(rv.flip_table(flip), hide_index=True, placeholder=MISSING, key=Regression.flip(n), width="stretch")


def bless_history(suite: str) -> None:
    st.header("Bless history")
    rows = baseline.history(jobs.store(), suite)
    if not rows:
        st.caption(f"No batch of the {suite} suite has been blessed yet.")
        return
    st.dataframe(rv.history_table(rows), hide_index=True, placeholder=MISSING, key=Regression.HISTORY, width="stretch",
                 column_config={"Note": st.column_config.TextColumn(width="large"),
                                "Warnings": st.column_config.TextColumn(width="large")})


def messages() -> None:
    if st.session_state.get(Regression.NOTICE):
        st.success(esc(st.session_state.pop(Regression.NOTICE)))
    for warning in st.session_state.pop(Regression.BLESS_WARNINGS, None) or []:
        st.warning(esc(f"Recorded with the blessing: {warning}"))
    if st.session_state.get(Regression.ERROR):
        st.error(esc(st.session_state.pop(Regression.ERROR)))


def page() -> None:
    """The page body: the suite, running it, then the batches and everything about the one picked."""
    ra.follow_link()
    wrong = ra.link_error()
    if wrong:
        st.error(esc(f"This link does not open a regression batch: no batch of any suite has the id {shown(wrong)}. "
                     "The newest batch is shown instead."))
    suite = suite_picker()
    if suite in quality_batch.SUITES:
        run_controls(suite)
    st.divider()
    store = jobs.store()
    batches = quality_batch.batches(store, suite)
    st.header("Batches")
    if not batches:
        st.info(f"No runs of the {suite} suite yet: run it above, or with `python -m clearside regress --suite "
                f"{suite}`.")
        return
    base = quality_batch.baseline(store, suite)
    baseline_id = base.id if base else None
    batch = ra.picked(batches)
    st.dataframe(rv.batches_table(batches, baseline_id), hide_index=True,
                 placeholder=MISSING, key=Regression.BATCHES, width="stretch",
                 column_config={"Link": st.column_config.LinkColumn(
                     "Share link", display_text="Open ↗", help="A link to this batch on this page.")})
    labels = {b.id: ra.label(b, baseline_id) for b in reversed(batches)}
    current_label(Regression.BATCH)  # its count of finished runs moves while it runs
    st.selectbox("Batch", list(labels), key=Regression.BATCH, format_func=labels.get, on_change=ra.batch_changed)
    messages()
    settings.demo_model_notice({"provider": batch.provider, "model": batch.model})  # the batch's model's debates
    bless_controls(batch, base)
    deltas(batch, base)
    costs(batch, base)
    trends(batches, baseline_id, batch.id)
    compare_two(batches, baseline_id)
    value_view.section(suite, batches)
    bless_history(suite)
    drill_down(batch)
