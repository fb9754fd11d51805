"""The Regression page's logic: the suite's batches as tables, deltas against the baseline, trends and one run.

Callbacks never raise: a ClearSideError becomes ``rg_start_error`` or ``rg_error`` (the page shows it escaped).
A batch picked on the page is written to the URL (``?batch=<id>``), so the address bar is always a share link to
what is shown; a link to a batch of the other suite switches the suite, and a link to no batch at all says so."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from clearside import runtime
from clearside.agents import AGENT_ORDER
from clearside.errors import ClearSideError
from clearside.quality import compare, metrics, references, regress, reports
from clearside.quality.job import RegressionJob
from clearside.quality.references import Reference
from clearside.quality.regress import Batch
from clearside.runtime.status import run_status as stored_run_status
from clearside.schema import Document
from clearside_ui import compare_view as cv
from clearside_ui import jobs, rate, settings, view
from clearside_ui.format import bullets, esc, short, short_spec, when
from clearside_ui.view import context_parts

SUITE_LABELS = {"flagship": "Flagship (spec 000)", "argkp-dev": "ArgKP dev (4 propositions)"}
SUITE_NOTES = {
    "flagship": "The flagship benchmark of spec 000: the AI data-center moratorium debate, scored against its "
                "hand-structured reference document, key points and decision hinges.",
    "argkp-dev": "The four ArgKP dev propositions, each scored against the expert key points of both sides.",
}
# The columns of the batches table (when the batch has them), in this order.
KEY_METRICS = ("schema_valid", "neutrality_violations", "coverage", "stance_margin", "diversity", "duplicate_pairs",
               "hinge_coverage", "off_topic")
DEFAULT_METRIC = "coverage"
MAX_RUNS = 10
DEBATE = "app_pages/debate.py"
LAYOUTS = {"sections": "Section by section", "columns": "Whole debates side by side", "stacked": "One above the other"}
PAGE_LINK = "regression?batch={}"  # relative to the Regression page's own URL (url_path "regression")
FAIL_STYLE = "background-color: rgba(255, 75, 75, 0.18)"



# -- batches -----------------------------------------------------------------------------------------------------


def job_here(batch_id: str) -> RegressionJob | None:
    """The job of this server running that batch, if any."""
    job = jobs.registry().get(batch_id)
    return job if isinstance(job, RegressionJob) else None


def running_here(batch_id: str) -> set[str]:
    """``{batch_id}`` while the batch runs (a job of this server, or the runtime on any host), else nothing
    (for the core's status rules: a run left running by no job was interrupted)."""
    job = job_here(batch_id)
    if job is not None:
        return {batch_id} if job.state == "running" else set()
    try:
        return set() if runtime.state(batch_id, jobs.store().url).finished else {batch_id}
    except ClearSideError:  # a batch the runtime never ran (``regress`` on the command line): the rows say
        return set()


def finished(batch: Batch) -> int:
    return sum(r["status"] in ("done", "failed") for r in batch.rows)


def total(batch: Batch) -> int:
    return batch.planned


def state(batch: Batch) -> str:
    """running (on this server), interrupted (runs a stopped server left unfinished) or done."""
    return batch.state(running_here(batch.id))


def label(batch: Batch, baseline_id: str | None) -> str:
    """A plain-text selectbox label (options are not Markdown)."""
    mark = " · baseline" if batch.id == baseline_id else ""
    return (f"{when(batch.created_at)} · {short_spec(batch.spec, 48)} · {finished(batch)}/{total(batch)} runs{mark} · "
            f"{batch.id[:8]}")


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


def find(batch_id: str) -> Batch | None:
    """A regression batch of any suite (a built-in or the user's own) by its id; not a comparison's."""
    batch = regress.find_batch(jobs.store(), (batch_id or "").strip().lower())
    return batch if batch is not None and batch.suite != compare.SUITE else None


def suite_label(name: str) -> str:
    return SUITE_LABELS.get(name, f"{name} (your suite)")


def suite_file(store: Any, suite: str) -> str:
    """The file a suite of the user's own was run from, as its newest batch recorded it ("" if it did not)."""
    found = regress.batches(store, suite)
    rows = found[-1].rows if found else []
    return next((data["suite_file"] for r in rows if (data := r.get("data") or {}).get("suite_file")), "")


def follow_link() -> None:
    """Open the batch ``?batch=<id>`` names (once per distinct link): its suite, then the batch itself."""
    wanted = st.query_params.get("batch")
    if not wanted or wanted == st.session_state.get("rg_linked"):
        return
    st.session_state["rg_linked"] = wanted
    batch = find(wanted)
    if batch is None:
        st.session_state["rg_link_error"] = wanted
        return
    st.session_state.pop("rg_link_error", None)
    st.session_state.update(rg_suite=batch.suite, rg_batch=batch.id)
    st.session_state.pop("rg_run", None)


def link_error() -> str:
    """The unknown batch id the URL names, while it still names it."""
    wanted = st.session_state.get("rg_link_error")
    return wanted if wanted and st.query_params.get("batch") == wanted else ""


def picked(batches: list[Batch]) -> Batch:
    """The selected batch: a batch just started once it has runs, else the one chosen, else the newest."""
    by_id = {b.id: b for b in batches}
    pending = st.session_state.get("rg_pending")
    if pending in by_id:
        st.session_state["rg_batch"] = st.session_state.pop("rg_pending")
        st.session_state.pop("rg_run", None)
    if st.session_state.get("rg_batch") not in by_id:
        st.session_state["rg_batch"] = batches[-1].id
    chosen = st.session_state["rg_batch"]
    if not link_error() and st.query_params.get("batch") != chosen:
        st.query_params["batch"] = chosen  # the address bar is the share link
        st.session_state["rg_linked"] = chosen
    return by_id[chosen]


# -- callbacks ---------------------------------------------------------------------------------------------------


def suite_changed() -> None:
    for key in ("rg_batch", "rg_run", "rg_confirm", "rg_metric"):
        st.session_state.pop(key, None)
    st.session_state.pop("rg_link_error", None)
    st.query_params.pop("batch", None)
    st.session_state.pop("rg_linked", None)


def batch_changed() -> None:
    st.session_state.pop("rg_run", None)
    st.session_state.pop("rg_confirm", None)
    st.session_state.pop("rg_link_error", None)


def provider_or_error() -> tuple[Any, str]:
    """The sidebar's provider, or ``(None, why it cannot be built)``."""
    try:
        return settings.build_provider(), ""
    except ClearSideError as exc:
        return None, exc.for_dashboard()


def start(suite: str) -> None:
    """Start a batch of ``suite`` with the sidebar's model on a worker; the page polls it by id."""
    st.session_state["rg_start_error"] = ""
    try:
        provider = settings.build_provider()
        jobs.host()  # the runtime runs the batch's debates; this dashboard is one of its hosts
        with rate.debate_start(st.session_state):  # a batch run is one start
            job = RegressionJob(suite, provider, jobs.store(), runs=int(st.session_state.get("rg_runs", 3)),
                                concurrency=int(st.session_state.get("rg_concurrency") or provider.concurrency),
                                temperature=settings.temperature(),
                                swap_check=bool(st.session_state.get("rg_swap_check"))).start()
    except ClearSideError as exc:
        st.session_state["rg_start_error"] = exc.for_dashboard()
        return
    jobs.registry().add(job)
    st.session_state.update(rg_job=job.id, rg_pending=job.id, rg_notice="")


def dismiss() -> None:
    st.session_state.pop("rg_job", None)


def ask_bless(batch_id: str) -> None:
    st.session_state.update(rg_confirm=batch_id, rg_notice="", rg_error="")


def cancel_bless() -> None:
    st.session_state.pop("rg_confirm", None)


def bless(batch_id: str) -> None:
    """Bless with the note typed in "Why this baseline"; a refusal (no note on flagship) keeps the form open, and
    the warnings recorded with the blessing are shown once."""
    try:
        blessed = regress.bless(jobs.store(), batch_id, note=st.session_state.get("rg_bless_note") or "")
    except ClearSideError as exc:
        st.session_state["rg_error"] = exc.for_dashboard()
        return
    st.session_state.pop("rg_confirm", None)
    st.session_state.pop("rg_bless_note", None)
    batch = blessed.batch
    st.session_state["rg_notice"] = (f"Batch {batch.id[:8]} ({batch.spec}, {when(batch.created_at)}) is now the "
                                     f"{batch.suite} baseline.")
    st.session_state["rg_bless_warnings"] = blessed.warnings


# -- versions and the bless history ------------------------------------------------------------------------------


def baseline_line(base: Batch) -> str:
    """The baseline with its age and the versions it was made with (plain text: escape it to show)."""
    return (f"batch {base.id[:8]} ({base.spec}), made {regress.age(base.created_at)} ago "
            f"({when(base.created_at)}) with {regress.versions_text(regress.batch_versions(base))}")


def version_check(batch: Batch, base: Batch | None) -> tuple[list[str], list[str]]:
    """``(changes, notes)`` between the baseline's versions and the batch's (nothing without a baseline)."""
    if base is None or base.id == batch.id:
        return [], []
    return regress.version_differences(regress.batch_versions(base), regress.batch_versions(batch),
                                       ("the baseline", "this batch"))


def history_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The bless history, newest first: when, the batch, the one it replaced, the note, the warnings."""
    return pd.DataFrame([{"Blessed": when(r["created_at"]), "Ago": r["age"], "Blessed batch": r["batch"][:8],
                          "Model": (r.get("detail") or {}).get("provider", ""),
                          "Replaced": (r.get("previous") or "")[:8] or "— (first)", "Note": r["note"],
                          "Warnings": "; ".join(r.get("warnings") or [])} for r in rows],
                        columns=["Blessed", "Ago", "Blessed batch", "Model", "Replaced", "Note", "Warnings"])


# -- the running job ---------------------------------------------------------------------------------------------


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
    for label, agents in running.items():
        st.caption(f"{esc(label)}: {cv.agents_line(agents)}")
    if rows := job.finished:
        st.dataframe(finished_table(rows), hide_index=True, key=f"rg_finished_{job.id}")


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
    if job.state == "failed":
        st.error(esc(f"The run stopped: {job.error}"))
    elif job.state == "cancelled":
        st.warning(f"Cancelled: {done} of {count} runs finished; they are kept as batch {job.id[:8]}.")
    if (report := job.report) is not None:
        verdict_view(report)
        share_buttons(report, f"batch-{report['batch'][:8]}", key=f"rg_share_{job.id}")
    if rows := job.finished:
        st.dataframe(finished_table(rows), hide_index=True, key=f"rg_result_{job.id}")


def share_buttons(report: dict[str, Any], stem: str, *, key: str) -> None:
    """The report to share, as ``regress --report/--junit`` write it: self-contained HTML (opens offline) and
    JUnit XML (one test case per gate)."""
    page = reports.render_html(reports.attach_debates(report, jobs.store()))
    with st.container(horizontal=True):
        st.download_button("Download the HTML report", page, file_name=f"clearside-{stem}.html", mime="text/html",
                           key=f"{key}_html", on_click="ignore", icon=":material/download:")
        st.download_button("JUnit XML", reports.junit_xml(report), file_name=f"clearside-{stem}.xml",
                           mime="application/xml", key=f"{key}_junit", on_click="ignore")


# -- deltas ------------------------------------------------------------------------------------------------------


def rule(name: str) -> str:
    """A metric's gate and tolerance in words (``reported`` when it is never gated)."""
    parts = regress.THRESHOLDS.get(name, {})
    words = []
    if "min" in parts:
        words.append(f"≥ {parts['min']:g}")
    if "max" in parts:
        words.append(f"≤ {parts['max']:g}")
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
        "{:g}", subset=NUMBERS)


def table_height(rows: int) -> int:
    """Tall enough to show every row without scrolling (35 px a row, plus the header)."""
    return 35 * (rows + 1) + 3


def checks_for(batch: Batch, base: Batch | None) -> list[dict[str, Any]]:
    """The batch's checks against the baseline (absolute gates only without one, or when it is the baseline)."""
    against = base.aggregate() if base is not None and base.id != batch.id else None
    return regress.check(batch.aggregate(), against)


# -- trends ------------------------------------------------------------------------------------------------------


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


# -- one run -----------------------------------------------------------------------------------------------------


def run_status(row: dict[str, Any]) -> str:
    """The stored status, except that a run saved as running which no job here runs was interrupted."""
    return stored_run_status(row, running_here((row.get("data") or {}).get("batch", "")))


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


def runs_of(batch: Batch) -> dict[str, dict[str, Any]]:
    """The batch's runs by id, in item then run order."""
    ordered = sorted(batch.rows, key=lambda r: ((r.get("data") or {}).get("item", ""),
                                                (r.get("data") or {}).get("index", 0)))
    return {r["id"]: r for r in ordered}


def run_label(row: dict[str, Any]) -> str:
    data = row.get("data") or {}
    number = int(data.get("index", 0)) + 1
    return f"{data.get('item', '?')} #{number} · {run_status(row)} · {short(data.get('question', ''))}"


def reference_of(row: dict[str, Any]) -> Reference | None:
    try:
        return references.load((row.get("data") or {}).get("item", ""))
    except ClearSideError:
        return None


def key_points(reference: Reference, side: str) -> None:
    title, colour = {"pro": ("FOR", "green"), "con": ("AGAINST", "red")}[side]
    st.markdown(f"### :{colour}[{title}]")
    st.markdown("**Reference key points**\n\n" + bullets(reference.key_points[side]))


def hinges(reference: Reference) -> None:
    st.markdown("### :gray[DECISION HINGES]")
    if reference.decision_hinges:
        st.markdown(bullets(reference.decision_hinges))
    else:
        st.caption(f"Reference {esc(reference.name)} has no decision hinges: only key points per side.")


def key_points_view(reference: Reference) -> None:
    """A reference without a document: its proposition, key points per side and hinges."""
    st.markdown(f"#### {esc(reference.proposition)}")
    st.caption(f"Reference {esc(reference.name)}: expert key points per side")
    for side in ("pro", "con"):
        key_points(reference, side)
    if reference.decision_hinges:
        hinges(reference)


def header(document: Document) -> None:
    """The question and context line that tops a debate (as ``document_view`` shows them)."""
    prop, meta = document.proposition, document.meta
    st.markdown(f"#### {esc(prop.normalized_question)}")
    st.caption(" · ".join([f"Asked: {esc(prop.raw_input)}", *context_parts(document),
                           f"Model: {esc(meta.model_info.provider)}:{esc(meta.model_info.model)}"]))


def run_document(debate_id: str | None) -> Document | None:
    """The run's finished debate; None (with a note) when it was not saved, is gone or did not finish."""
    if not debate_id:
        st.caption("No debate was saved for this run.")
        return None
    try:
        record = jobs.store().get(debate_id)
    except ClearSideError as exc:
        st.warning(esc(f"The debate is gone: {exc}"))
        return None
    if record.document is None:
        st.caption("The debate did not finish: the sections that did are shown.")
        return None
    return Document.model_validate(record.document)


def whole(document: Document | None, debate_id: str | None, reference: Reference | None, *, stacked: bool) -> None:
    """The run's whole debate (or its finished sections) and the whole reference, side by side or stacked."""
    mine, theirs = (st.container(), st.container()) if stacked else st.columns(2, gap="large")
    with mine:
        st.markdown("### This run's debate")
        if document is not None:
            view.document_view(document, level=4)  # under "This run's debate" (h3)
        elif debate_id and jobs.store().exists(debate_id):
            view.sections_view(jobs.store().sections(debate_id), level=4)
    with theirs:
        st.markdown("### The reference")
        if reference is None:
            st.caption("This run's item has no reference.")
        elif reference.document:
            view.document_view(Document.model_validate(reference.document), level=4)
        else:
            key_points_view(reference)


def by_section(document: Document, reference: Reference | None) -> None:
    """The run's debate and the reference in two aligned columns, one row per section (FOR, AGAINST, moderator)."""
    ref_doc = Document.model_validate(reference.document) if reference and reference.document else None
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown("### This run's debate")
        header(document)
    with right:
        st.markdown("### The reference")
        if ref_doc is not None:
            header(ref_doc)
        elif reference is not None:
            st.markdown(f"#### {esc(reference.proposition)}")
            st.caption(f"Reference {esc(reference.name)}: expert key points per side")
        else:
            st.caption("This run's item has no reference.")
    responses = view.responses_by_target(document)
    for side, title, colour in (("pro", "FOR", "green"), ("con", "AGAINST", "red")):
        left, right = st.columns(2, gap="large")
        with left.container(border=True):
            view.side_view(getattr(document, side), title, colour, responses)
        if reference is not None:
            with right.container(border=True):
                if ref_doc is not None:
                    view.side_view(getattr(ref_doc, side), title, colour, {})
                else:
                    key_points(reference, side)
    left, right = st.columns(2, gap="large")
    with left.container(border=True):
        view.moderator_view(document, responses)
    if reference is not None:
        with right.container(border=True):
            if ref_doc is not None:
                view.moderator_view(ref_doc, {})
            else:
                hinges(reference)


def headline_table(headline: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame([{"Metric": name, "Value": headline[name], "Better": better, "Meaning": meaning}
                         for name, (better, meaning) in metrics.SUMMARY.items() if name in headline])


def _unavailable(detail: dict[str, Any], name: str) -> str:
    part = detail.get(name)
    if isinstance(part, dict) and part.get("available") is False:
        return part.get("reason", "not available")
    return ""


def coverage_view(detail: dict[str, Any]) -> None:
    st.markdown("**Coverage of the reference key points**")
    why = _unavailable(detail, "coverage")
    if why or "mean" not in detail.get("coverage", {}):
        st.caption(esc(why or "Not computed."))
        return
    cov = detail["coverage"]
    for side, title in (("pro", "FOR"), ("con", "AGAINST")):
        part = cov.get(side, {})
        covered = [f"{p['point']} ← {p['by']} ({p.get('centred', 0):g})" for p in part.get("covered", [])]
        points = len(covered) + len(part.get("missed", []))
        st.markdown(f"*{title}: {len(covered)} of {points} key points expressed ({part.get('coverage', 0):g})*")
        if covered:
            st.markdown("Covered:\n\n" + bullets(covered))
        if part.get("missed"):
            st.markdown("Missed:\n\n" + bullets(part["missed"]))
    hinges = detail.get("hinges", {})
    if "coverage" in hinges:
        st.markdown(f"*Reference decision hinges raised: {hinges['coverage']:g}*")
        if hinges.get("missed"):
            st.markdown("Hinges missed:\n\n" + bullets(hinges["missed"]))


def neutrality_view(detail: dict[str, Any]) -> None:
    st.markdown("**Moderator neutrality**")
    part = detail.get("neutrality", {})
    if "violations" not in part:
        st.caption(esc(_unavailable(detail, "neutrality") or "Not computed."))
        return
    if not part["violations"] and not part.get("warnings"):
        st.caption("No verdict, recommendation or certainty phrases in the moderator's text.")
    for title, hits in (("Violations (verdict or recommendation)", part["violations"]),
                        ("Warnings (certainty or dismissal)", part.get("warnings", []))):
        if hits:
            st.markdown(f"*{title}:*\n\n" + "\n".join(
                f"- {esc(h.get('field', ''))} · {esc(h.get('kind', ''))} · “{esc(h.get('phrase', ''))}” in: "
                f"{esc(h.get('text', ''))}" for h in hits))


def duplicates_view(detail: dict[str, Any]) -> None:
    st.markdown("**Repeated claims**")
    part = detail.get("diversity", {})
    if "pro" not in part:
        st.caption(esc(_unavailable(detail, "diversity") or "Not computed."))
        return
    lines = [f"{title}: “{d['a']}” ≈ “{d['b']}” ({d['similarity']:g})"
             for side, title in (("pro", "FOR"), ("con", "AGAINST")) for d in part[side].get("duplicates", [])]
    lines += [f"Both sides: FOR “{d['pro']}” ≈ AGAINST “{d['con']}” ({d['similarity']:g})"
              for d in part.get("cross_side_duplicates", [])]
    if lines:
        st.markdown(bullets(lines))
    else:
        st.caption("No near-duplicate claims.")
    flagged = [f"{side.upper()}: {f['claim']} ({f['similarity']:g})" for side in ("pro", "con")
               for f in detail.get("relevance", {}).get(side, {}).get("flagged", [])]
    if flagged:
        st.markdown("*Claims far from the proposition:*\n\n" + bullets(flagged))


def detail_view(row: dict[str, Any]) -> None:
    """A run's headline metrics and the detail behind them: coverage, neutrality hits, duplicates."""
    data = row.get("data") or {}
    headline = row.get("metrics") or {}
    if headline:
        table = headline_table(headline)
        st.dataframe(table, hide_index=True, key=f"rg_headline_{row['id']}", height=table_height(len(table)))
    detail = data.get("detail")
    if not detail:
        st.caption("No metrics detail was saved for this run.")
        return
    coverage, neutrality = st.columns(2, gap="large")
    with coverage:
        coverage_view(detail)
    with neutrality:
        neutrality_view(detail)
        duplicates_view(detail)
    errors = detail.get("schema_validity", {}).get("errors") or []
    if errors:
        st.markdown("**Schema errors**\n\n" + bullets([str(e) for e in errors]))


# -- compare two batches (the paired comparison of ``compare-runs``) -----------------------------------------------

PAIRED_COLUMNS = {"metric": "Metric", "better": "Better", "n": "Pairs", "mean_a": "Mean A", "mean_b": "Mean B",
                  "diff": "B − A", "ci": "95% interval", "p": "p", "p_holm": "p (Holm)", "tolerance": "Tolerance",
                  "verdict": "Verdict"}


def compare_choices(batches: list[Batch], baseline_id: str | None) -> tuple[list[str], str, str]:
    """The batch ids newest first, and the default A (the baseline, else the second newest) and B (the newest)."""
    ids = [b.id for b in reversed(batches)]
    newest = ids[0]
    a = baseline_id if baseline_id and baseline_id != newest else ids[1]
    return ids, a, newest


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
    return table.style.apply(lambda row: [FAIL_STYLE if row["Verdict"] == "regression" else ""] * len(row), axis=1)


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
