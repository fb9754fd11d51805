"""The Regression page's tables and charts: the batches, a running batch and its verdict, the deltas against the
baseline, trends, time and tokens, and two batches compared run by run (``compare-runs``).

Tables go to ``st.dataframe`` (which shows text literally); every label Plotly draws is HTML-escaped; the rest goes
through ``esc``."""

from __future__ import annotations

import html
import time
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from clearside.agents import AGENT_ORDER
from clearside.quality import batch as quality_batch
from clearside.quality import metrics, reports
from clearside.quality.batch import Batch
from clearside.quality.job import RegressionJob
from clearside.runtime import eta
from clearside.static.job import past_runs
from clearside_ui import compare_view as cv
from clearside_ui import jobs
from clearside_ui.format import MISSING, esc, short_spec, when
from clearside_ui.regression_actions import finished, run_status, runs_of, state, total
from clearside_ui.state import Regression
from clearside_ui.view import poll_cached

# The columns of the batches table (when the batch has them), in this order.
KEY_METRICS = ("schema_valid", "neutrality_violations", "coverage", "stance_margin", "diversity", "duplicate_pairs",
               "hinge_coverage", "off_topic")
DEFAULT_METRIC = "coverage"
PAGE_LINK = "regression?batch={}"  # relative to the Regression page's own URL (url_path "regression")
FAIL_STYLE = "background-color: rgba(255, 75, 75, 0.18)"


def batches_table(batches: list[Batch], baseline_id: str | None) -> pd.DataFrame:
    """Newest first: when, model, runs, failures, baseline marker and the means of the key metrics."""
    aggregates = {b.id: b.aggregate() for b in batches}
    shown = [m for m in KEY_METRICS if any(m in a for a in aggregates.values())]
    rows = []
    for batch in reversed(batches):
        agg = aggregates[batch.id]
        rows.append({"Created": when(batch.created_at), "Model": batch.spec,
                     "Runs": f"{finished(batch)}/{total(batch)}",
                     "Failed": sum(r["status"] == "failed" for r in batch.rows), "State": state(batch),
                     "Baseline": "baseline" if batch.id == baseline_id else "",
                     **{m: agg[m]["mean"] if agg.get(m, {}).get("n") else None for m in shown},
                     "Batch": batch.id, "Link": PAGE_LINK.format(batch.id)})
    return pd.DataFrame(rows)


def history_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The bless history, newest first: when, the batch, the one it replaced, the note, the warnings."""
    return pd.DataFrame([{"Blessed": when(r["created_at"]), "Ago": r["age"], "Blessed batch": r["batch"][:8],
                          "Model": (r.get("detail") or {}).get("provider", ""),
                          "Replaced": (r.get("previous") or "")[:8] or "— (first)", "Note": r["note"],
                          "Warnings": "; ".join(r.get("warnings") or [])} for r in rows],
                        columns=["Blessed", "Ago", "Blessed batch", "Model", "Replaced", "Note", "Warnings"])


def finished_table(results: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame([{"Item": r.get("item"), "#": int(r.get("index", 0)) + 1, "Status": r.get("status"),
                          "Seconds": r.get("wall_seconds"),
                          **{m: (r.get("metrics") or {}).get(m) for m in ("schema_valid", "neutrality_violations",
                                                                          "coverage")},
                          "Error": r.get("error") or ""} for r in results])


def progress_fingerprint(job: RegressionJob) -> tuple:
    """What :func:`progress_view` shows, cheaply: runs finished (so the finished rows), each running one's agents."""
    return job.progress(), tuple((label, tuple(sorted(agents.items()))) for label, agents in job.agents().items())


def progress_view(job: RegressionJob) -> None:
    """Runs finished, and each running one's agents: a one-run batch moves while its debate does."""
    done, count = job.progress()
    running = job.agents()
    share = sum(sum(s == "done" for s in agents.values()) / len(AGENT_ORDER) for agents in running.values())
    st.progress(min((done + share) / count, 1.0) if count else 0.0, text=f"{done} of {count} runs finished")
    snap = job.snapshot()
    if snap.started and not snap.finished:
        past = poll_cached("eta", (job.id, done), lambda: past_runs(jobs.store(), job.provider))  # grows per run
        st.caption(eta.batch_line(count, past, concurrency=job.concurrency or 1, done=done,
                                  elapsed=time.time() - snap.started))
    for label, agents in running.items():
        st.caption(f"{esc(label)}: {cv.agents_line(agents)}")
    if rows := job.finished:
        st.dataframe(finished_table(rows), hide_index=True, placeholder=MISSING, key=Regression.finished(job.id))


def verdict_view(report: dict[str, Any]) -> None:
    """PASS or REGRESSION with the failures, as a finished batch's report says."""
    base = report.get("baseline")
    against = (f"against the baseline batch {base['batch'][:8]} ({esc(base['provider'])}, {when(base['created_at'])})"
               if base else "no baseline yet: only the absolute gates apply")
    if report["passed"]:
        st.success(f"**PASS** — {report['runs']} run(s) per item, {against}.")
        return
    lines = "\n".join(f"- {esc(f)}" for f in report["failures"])
    if not base:  # nothing to have regressed from: the batch misses an absolute gate
        st.error(f"**BELOW THE GATES** — no baseline yet, and this batch misses an absolute gate:\n\n{lines}\n\n"
                 "Bless a batch that passes to judge later ones against it.")
        return
    st.error(f"**REGRESSION** — {against}.\n\n{lines}")


def result_view(job: RegressionJob) -> None:
    done, count = job.progress()
    snap = job.snapshot()
    if snap.status == "failed":
        st.error(esc(f"The run stopped: {snap.error}"))
    elif snap.status == "cancelled":
        st.warning(f"Cancelled: {done} of {count} runs finished; they are kept as batch {job.id[:8]}.")
    if (report := job.report) is not None:
        verdict_view(report)
        share_buttons(report, f"batch-{report['batch'][:8]}", key=Regression.share(job.id))
    if rows := job.finished:
        st.dataframe(finished_table(rows), hide_index=True, placeholder=MISSING, key=Regression.result(job.id))


def share_buttons(report: dict[str, Any], stem: str, *, key: str) -> None:
    """The report to share, as ``regress --report/--junit`` write it: self-contained HTML (opens offline) and
    JUnit XML (one test case per gate)."""
    page = reports.render_html(reports.attach_debates(report, jobs.store()))
    with st.container(horizontal=True):
        st.download_button("Download the HTML report", page, file_name=f"clearside-{stem}.html", mime="text/html",
                           key=f"{key}_html", on_click="ignore", icon=":material/download:")
        st.download_button("JUnit XML", reports.junit_xml(report), file_name=f"clearside-{stem}.xml",
                           mime="application/xml", key=f"{key}_junit", on_click="ignore")


def headline_table(headline: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame([{"Metric": name, "Value": headline[name], "Better": better, "Meaning": meaning}
                         for name, (better, meaning) in metrics.SUMMARY.items() if name in headline])


def rule(name: str) -> str:
    """A metric's gate and tolerance in words (``reported`` when it is never gated)."""
    parts = quality_batch.THRESHOLDS.get(name, {})
    words = []
    if "min" in parts:
        words.append(f"≥ {parts['min']:g}")
    if "max" in parts:
        words.append(f"≤ {parts['max']:g}")
    if "above" in parts:
        words.append(f"> {parts['above']:g}")
    if "tolerance" in parts:
        words.append(f"tolerance {parts['tolerance']:g}")
    return ", ".join(words) or "reported"


NUMBERS = ["Mean", "± spread", "Baseline mean", "Baseline ±", "Delta", "Allowed"]


def deltas_table(checks: list[dict[str, Any]]) -> pd.DataFrame:
    table = pd.DataFrame([{"Metric": c["metric"], "Status": c["status"], "Mean": c["mean"], "± spread": c["stdev"],
                           "Baseline mean": c.get("baseline_mean"), "Baseline ±": c.get("baseline_stdev"),
                           "Delta": c.get("delta"), "Allowed": c.get("allowed"), "Better": c["better"],
                           "Rule": rule(c["metric"]), "Reasons": "; ".join(c["reasons"]),
                           "Meaning": metrics.SUMMARY[c["metric"]][1]} for c in checks])
    return table.astype({name: float for name in NUMBERS})  # None → NaN, so the columns stay numeric


def highlight(table: pd.DataFrame):
    """The table with failing rows tinted and numbers in short form."""
    return table.style.apply(lambda row: [FAIL_STYLE if row["Status"] == "fail" else ""] * len(row), axis=1).format(
        "{:g}", subset=NUMBERS, na_rep=MISSING).format(na_rep=MISSING, subset=[c for c in table if c not in NUMBERS])


def table_height(rows: int) -> int:
    """Tall enough to show every row without scrolling (35 px a row, plus the header)."""
    return 35 * (rows + 1) + 3


def metric_names(batches: list[Batch]) -> list[str]:
    present = {name for b in batches for name, value in b.aggregate().items() if value.get("n")}
    return [name for name in metrics.SUMMARY if name in present]


def trend_rows(batches: list[Batch], metric: str, baseline_id: str | None) -> pd.DataFrame:
    rows = []
    for batch in batches:
        value = batch.aggregate().get(metric, {})
        if value.get("n"):
            rows.append({"created": pd.to_datetime(batch.started_at), "model": batch.spec, "mean": value["mean"],
                         "stdev": value["stdev"], "n": value["n"], "batch": batch.id,
                         "baseline": batch.id == baseline_id})
    return pd.DataFrame(rows, columns=["created", "model", "mean", "stdev", "n", "batch", "baseline"])


def _points(rows: pd.DataFrame, name: str, **style: Any) -> go.Scatter:
    """Plain lists (readable in the figure's JSON); the name HTML-escaped, since Plotly renders tags in labels."""
    return go.Scatter(x=rows["created"].tolist(), y=rows["mean"].tolist(), name=html.escape(name), **style)


def trend_figure(rows: pd.DataFrame, metric: str, selected: str | None = None) -> go.Figure:
    """Per-batch mean over time with ±stdev error bars, one trace per provider:model; the baseline starred."""
    figure = go.Figure()
    for model, group in rows.groupby("model", sort=False):
        figure.add_trace(_points(
            group, short_spec(str(model)), mode="lines+markers",
            error_y={"type": "data", "array": group["stdev"].tolist(), "visible": True},
            customdata=[[batch[:8], int(n)] for batch, n in zip(group["batch"], group["n"], strict=True)],
            hovertemplate="%{x}<br>mean %{y:.4g} ± %{error_y.array:.3g}<br>batch %{customdata[0]}, "
                          "%{customdata[1]} runs<extra>%{fullData.name}</extra>"))
    base = rows[rows["baseline"]]
    if not base.empty:
        figure.add_trace(_points(base, "baseline", mode="markers", hoverinfo="skip", marker={
            "symbol": "star", "size": 16, "color": "gold", "line": {"width": 1, "color": "black"}}))
        figure.add_hline(y=float(base["mean"].iloc[0]), line_dash="dash", line_color="gray",
                         annotation_text="baseline", annotation_position="top left")
    chosen = rows[rows["batch"] == selected]
    if selected and not chosen.empty:
        figure.add_trace(_points(chosen, "selected", mode="markers", hoverinfo="skip",
                                 marker={"symbol": "circle-open", "size": 18, "line": {"width": 2}}))
    better = metrics.SUMMARY[metric][0]
    figure.update_layout(title=f"{metric}: batch mean ± spread ({better} is better)", xaxis_title="batch created",
                         yaxis_title=metric, height=380, margin={"t": 50, "b": 40}, legend={"orientation": "h"})
    return figure


COSTS = {"wall_seconds": "Wall time (s)", "seconds": "Model time (s)", "first_token_seconds": "First token (s)",
         "completion_tokens": "Tokens"}


def cost_rows(batch: Batch) -> list[dict[str, Any]]:
    """Each finished run's time and tokens: wall time (its debate start to finish), model time (every call),
    the mean wait for a call's first token (where the backend reports it) and the tokens generated."""
    out = []
    for row in runs_of(batch).values():
        data, values = row.get("data") or {}, row.get("metrics") or {}
        if run_status(row) != "done":
            continue
        out.append({"Run": f"{data.get('item', '?')} #{int(data.get('index', 0)) + 1}",
                    COSTS["wall_seconds"]: data.get("wall_seconds"),
                    **{label: values.get(name) for name, label in COSTS.items() if name != "wall_seconds"}})
    return out


def cost_summary(batches: list[Batch]) -> pd.DataFrame | None:
    """The mean time and tokens of each of ``batches`` (the batch, its baseline), one row each."""
    rows = []
    for batch in batches:
        runs = cost_rows(batch)
        if runs:
            means = {label: round(float(np.mean(values)), 2) if (values := [r[label] for r in runs
                                                                            if r[label] is not None]) else None
                     for label in COSTS.values()}
            rows.append({"Batch id": batch.id[:8], "Runs": len(runs), **means})
    return pd.DataFrame(rows) if rows else None


def cost_figure(batches: list[Batch]) -> go.Figure:
    """Wall time per run, one trace per batch (the batch beside its baseline)."""
    figure = go.Figure()
    for batch in batches:
        runs = cost_rows(batch)
        figure.add_trace(go.Bar(x=[r["Run"] for r in runs], y=[r[COSTS["wall_seconds"]] for r in runs],
                                name=f"batch {batch.id[:8]}"))
    figure.update_layout(barmode="group", yaxis_title="wall time (s)", margin={"t": 20}, height=300,
                         legend={"orientation": "h", "y": -0.3})
    return figure


PAIRED_COLUMNS = {"metric": "Metric", "better": "Better", "n": "Pairs", "mean_a": "Mean A", "mean_b": "Mean B",
                  "diff": "B − A", "ci": "95% interval", "p": "p", "p_holm": "p (Holm)", "tolerance": "Tolerance",
                  "verdict": "Verdict"}


def paired_table(report: dict[str, Any]) -> pd.DataFrame:
    """One row per metric, as the ``compare-runs`` table: means, difference, interval, p, Holm p, verdict."""
    rows = []
    for m in report["metrics"]:
        rows.append({"Metric": m["metric"], "Better": m["better"], "Pairs": m["n"], "Mean A": round(m["mean_a"], 4),
                     "Mean B": round(m["mean_b"], 4), "B − A": round(m["diff"], 4),
                     "95% interval": f"[{m['ci_low']:+.3g}, {m['ci_high']:+.3g}]", "p": round(m["p"], 4),
                     "p (Holm)": round(m["p_holm"], 4),
                     "Tolerance": "not gated" if m["tolerance"] is None else f"{m['tolerance']:g}",
                     "Verdict": m["verdict"]})
    return pd.DataFrame(rows, columns=list(PAIRED_COLUMNS.values()))


def paired_highlight(table: pd.DataFrame):
    """The table with regressions shaded."""
    return table.style.apply(lambda row: [FAIL_STYLE if row["Verdict"] == "regression" else ""] * len(row),
                             axis=1).format(na_rep=MISSING)


def too_few_notes(report: dict[str, Any]) -> list[str]:
    """One plain sentence per metric with too few repeats to tell, with the repeats that would be needed."""
    notes = []
    for m in report["metrics"]:
        if m["too_few"]:
            size = f"{m['tolerance']:g} (its tolerance)" if m["tolerance"] else f"{abs(m['diff']):.3g} (as observed)"
            notes.append(f"{m['metric']}: {m['n']} pair(s), spread ±{m['sd']:.3g}; a difference of {size} needs "
                         f"about {m['pairs_needed']} pairs, {m['repeats_needed']} run(s) per item.")
    return notes


def paired_figure(report: dict[str, Any]) -> go.Figure:
    """Each gated metric's mean difference B − A with its bootstrap interval; regressions a red cross (a shape as
    well as a colour: WCAG 1.4.1)."""
    shown = [m for m in report["metrics"] if m["tolerance"] is not None]
    colours = ["#d62728" if m["verdict"] == "regression" else "#1f77b4" for m in shown]
    symbols = ["x" if m["verdict"] == "regression" else "circle" for m in shown]
    figure = go.Figure(go.Scatter(
        x=[m["diff"] for m in shown], y=[m["metric"] for m in shown], mode="markers",
        marker={"color": colours, "symbol": symbols, "size": 9},
        error_x={"type": "data", "symmetric": False, "array": [m["ci_high"] - m["diff"] for m in shown],
                 "arrayminus": [m["diff"] - m["ci_low"] for m in shown]},
        customdata=[[m["better"], m["verdict"]] for m in shown],
        hovertemplate="%{y}: B − A %{x:.3g} (%{customdata[0]} is better)<br>%{customdata[1]}<extra></extra>"))
    figure.add_vline(x=0, line_dash="dash", line_color="gray")
    figure.update_layout(title="B − A per metric, with its 95% bootstrap interval", height=120 + 26 * len(shown),
                         margin={"t": 50, "b": 40}, xaxis_title="mean difference", yaxis={"autorange": "reversed"})
    return figure


def flip_table(flip: dict[str, Any]) -> pd.DataFrame:
    """A flipped pair's metrics that differ, A beside B."""
    return pd.DataFrame([{"Metric": m["metric"], "A": m["a"], "B": m["b"]} for m in flip["metrics"]],
                        columns=["Metric", "A", "B"])
