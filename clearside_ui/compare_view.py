"""The Compare models page's views: the model rows, a comparison running and its results side by side (a column
per model), the metrics table and charts, which arguments the models share ("in k of n models"), and the earlier
comparisons.

Tables go to ``st.dataframe`` (which shows text literally); every label drawn by plotly is HTML-escaped, since
plotly reads a few HTML tags (links included) in its text; the rest goes through ``esc``.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from clearside.agents import AGENT_NAMES, AGENT_ORDER, AGENT_TAGS
from clearside.errors import InputError
from clearside.quality import compare
from clearside.quality.metrics import SUMMARY
from clearside.schema import Document
from clearside_ui import compare_actions as ca
from clearside_ui import page_path, settings
from clearside_ui.format import MISSING, esc
from clearside_ui.inputs import question_box
from clearside_ui.state import Compare
from clearside_ui.view import POLL_SECONDS, document_view, follow, poll_changed

DEBATE = "app_pages/debate.py"
QUALITY = ("count_ratio", "length_ratio", "assumption_linkage", "conflicts_two_sided", "diversity", "grounding",
           "off_topic")
COST = {"wall_seconds": "Wall time (s)", "seconds": "Model time (s)", "first_token_seconds": "First token (s)",
        "completion_tokens": "Completion tokens"}
SIDES = {side: AGENT_NAMES[side] for side in ("pro", "con")}
ICONS = {"waiting": "◔", "pending": "○", "running": "◐", "retrying": "↻", "done": "✓", "failed": "✗",
         "cancelled": "■"}
# a model's debate not started yet (its queue's turn: the in-process model runs one debate at a time), and an agent
# started whose model has not written yet (the Debate page's words)
MODEL_WORDS = {"waiting": "waiting: it starts when the model is free"}
AGENT_WORDS = {"waiting": " (waiting for the model)"}
ONE_MODEL = (
    "**Only the built-in model here?** Compare it with itself: give both rows the same model (`embedded`) at two "
    "temperatures, say 0.2 and 0.9, to see how much its cases change by chance, or make one row's strategy "
    "*Single pass* to see what the debate adds. To compare other models, connect Ollama or an OpenAI-compatible "
    "server in the sidebar.")
SPEC_HELP = ("A provider:model string, for example `embedded` (the built-in model), `embedded:/path/model.gguf`, "
             "`ollama:llama3.2` or `openai:gpt-4o-mini`. OpenAI uses the sidebar's base URL and the OPENAI_API_KEY "
             "secret; Ollama uses the sidebar's host.")


def agents_line(agents: dict[str, str]) -> str:
    """``✓ proposition · ◐ FOR · ◔ AGAINST (waiting for the model) · ○ moderator`` (then ``· scoring…`` while its
    metrics are computed)."""
    line = " · ".join(f"{ICONS.get(state := agents.get(a, 'pending'), '○')} {AGENT_TAGS[a]}"
                      f"{AGENT_WORDS.get(state, '')}" for a in AGENT_ORDER)
    return line + (" · scoring…" if all(agents.get(a) == "done" for a in AGENT_ORDER) else "")


def status_label(result: dict[str, Any]) -> str:
    return f"{ICONS.get(result['status'], '')} {result['status']}"


def scored(report: dict[str, Any]) -> list[dict[str, Any]]:
    """``compare.table`` rows of the models that have metrics."""
    return [row for row in compare.table(report) if set(row) - {"model", "status"}]


def metrics_frame(report: dict[str, Any]) -> pd.DataFrame | None:
    """Metrics as rows, models as columns, and which way is better."""
    rows = scored(report)
    if not rows:
        return None
    names = [name for name in SUMMARY if any(name in row for row in rows)]
    data: dict[str, list[Any]] = {"metric": names}
    for row in rows:
        data[row["model"]] = [row.get(name) for name in names]
    data["better"] = [SUMMARY[name][0] for name in names]
    data["meaning"] = [SUMMARY[name][1] for name in names]
    return pd.DataFrame(data)


def _plot_label(text: str) -> str:
    return html.escape(text, quote=True)


def quality_figure(report: dict[str, Any]) -> go.Figure | None:
    """Grouped bars: the headline quality metrics that lie in 0..1, one bar per model."""
    rows = scored(report)
    names = [name for name in QUALITY if any(name in row for row in rows)]
    if not names:
        return None
    ticks = [f"{name} (lower is better)" if SUMMARY[name][0] == "lower" else name for name in names]
    figure = go.Figure([go.Bar(name=_plot_label(row["model"]), x=ticks, y=[row.get(n) for n in names],
                               customdata=[SUMMARY[n][1] for n in names],
                               hovertemplate="%{x}: %{y:.3f}<br>%{customdata}<extra>%{fullData.name}</extra>")
                        for row in rows])
    figure.update_layout(barmode="group", title="Quality metrics (0 to 1)", yaxis={"range": [0, 1.05]},
                         legend={"orientation": "h", "y": -0.3}, margin={"t": 50})
    return figure


def cost_frame(report: dict[str, Any]) -> pd.DataFrame | None:
    """Time and tokens per model as a table: wall time (start to finish), model time (all calls), the mean time
    to a call's first token and the tokens generated; None when nothing was recorded."""
    rows = scored(report)
    names = [name for name in COST if any(row.get(name) for row in rows)]
    if not names:
        return None
    return pd.DataFrame([{"Model": row["model"], **{COST[name]: row.get(name) for name in names}} for row in rows])


def cost_figure(report: dict[str, Any]) -> go.Figure | None:
    """Bars of model time and completion tokens per model, where recorded (a metric that is 0 for every model,
    as with a scripted provider's time, is left out)."""
    rows = scored(report)
    names = [name for name in COST if any(row.get(name) for row in rows)]
    if not names:
        return None
    figure = make_subplots(rows=1, cols=len(names), subplot_titles=[COST[name] for name in names])
    labels = [_plot_label(row["model"]) for row in rows]
    for column, name in enumerate(names, 1):
        figure.add_trace(go.Bar(x=labels, y=[row.get(name) for row in rows], name=COST[name], showlegend=False),
                         row=1, col=column)
    figure.update_layout(title="Cost per model", margin={"t": 70})
    return figure


def agreement_frame(report: dict[str, Any], side: str) -> pd.DataFrame | None:
    """One row per point: how many models made it, which, and each model's wording."""
    points = [p for p in report.get("agreement") or [] if p["side"] == side]
    if not points:
        return None
    agreeing = {m for p in report["agreement"] for m in p["models"]}  # the models that finished
    models = [m for m in report["models"] if m in agreeing]
    return pd.DataFrame([{"Point": p["claim"], "Appears in": f"{p['k']} of {p['n']} models",
                          "Models": ", ".join(p["models"]), **{m: p["wording"].get(m, "") for m in models}}
                         for p in points])


def _who(k: int, n: int) -> str:
    if k == n:
        return "both models" if n == 2 else f"all {n} models"
    return "one model" if k == 1 else f"{k} models"


def agreement_caption(report: dict[str, Any]) -> str:
    """``FOR: 2 points made by all 3 models, 5 by one model. AGAINST: ...`` (n: the models that finished)"""
    if not report.get("agreement"):
        return ""
    n = report["agreement"][0]["n"]
    parts = []
    for side, counts in compare.k_of_n(report).items():
        found = [(k, counts[k]) for k in sorted(counts, reverse=True)]
        if not found:
            continue
        text = ", ".join((f"{c} point{'s' if c != 1 else ''} made by " if i == 0 else f"{c} by ") + _who(k, n)
                         for i, (k, c) in enumerate(found))
        parts.append(f"{SIDES[side]}: {text}.")
    return " ".join(parts)


def model_rows() -> None:
    rows = ca.rows()
    st.markdown(f"**Models** ({ca.MIN_MODELS} to {ca.MAX_MODELS})")
    if ca.one_model():
        st.info(ONE_MODEL, icon=":material/thermostat:")
    for number, row in enumerate(rows, 1):
        field, heat, remove = st.columns([5, 2, 2], vertical_alignment="bottom")
        field.text_input(f"Model {number}", key=Compare.row("model", row), max_chars=300, persist_state="session",
                         placeholder="provider:model, e.g. ollama:llama3.2", help=SPEC_HELP)
        ca.row_temperature(row)  # a new row starts at the sidebar's temperature
        heat.number_input(f"Temperature {number}", min_value=0.0, max_value=1.5, step=0.05, format="%.2f",
                          key=Compare.row("temp", row), persist_state="session",
                          help="Each row is a configuration: the same model may be compared at two temperatures.")
        remove.button("Remove", key=Compare.row("remove", row), on_click=ca.remove_row, args=(row,), width="stretch",
                      disabled=len(rows) <= ca.MIN_MODELS, help=f"A comparison needs at least {ca.MIN_MODELS} "
                      "models.")
        way, _ = st.columns([5, 4])  # under the model: a fourth column left Remove no room on a narrow screen
        ca.row_strategy(row)  # a new row starts at the sidebar's strategy
        way.selectbox(f"Strategy {number}", list(settings.STRATEGIES), format_func=settings.STRATEGIES.get,
                      key=Compare.row("strategy", row), persist_state="session",
                      help="Each row is a configuration: the same model may run as a debate and as the single-pass "
                           "control, which shows what the debate adds.")
    st.button("Add a model", key=Compare.ADD, on_click=ca.add_row, icon=":material/add:",
              disabled=len(rows) >= ca.MAX_MODELS, help=f"Up to {ca.MAX_MODELS} models.")


def inputs(batch: str | None, job) -> None:
    busy = job is not None and not job.snapshot().finished
    question_box(Compare.QUESTION, error_key=Compare.ERROR,
                 placeholder="e.g. Should the U.S. impose a temporary moratorium on new AI data centers?")
    model_rows()
    with st.container(horizontal=True):  # at their own width, wrapping on a narrow screen: never cut off
        st.button("Compare", key=Compare.START, type="primary", on_click=ca.start, disabled=busy,
                  icon=":material/view_column:", help="Runs every model's debate at once; each is saved as it goes.")
        st.button("New comparison", key=Compare.NEW, on_click=ca.show, args=(None,), disabled=not batch)
    if busy:
        st.button("Cancel", key=Compare.CANCEL, on_click=job.cancel, icon=":material/stop_circle:",
                  help="Stop every model's debate. Finished debates and sections stay saved; each unfinished one "
                       "can be resumed from the Library.")
    if st.session_state.get(Compare.ERROR):
        st.error(esc(st.session_state[Compare.ERROR]))


# each redraw costs every following tab (bench/ui_load.py): drawn by follow(), slower while nothing moves
def watch(batch: str, shown: tuple) -> None:
    """While the debates run: each model's status; the whole page redraws when one changes."""
    if ca.signature(batch) != shown:
        st.rerun()
    elsewhere = ca.find(batch) is None
    lines = ca.statuses(batch)
    poll_changed("compare", (elsewhere, *((line["label"], line["status"], tuple(sorted(line["agents"].items())))
                                          for line in lines)))
    st.markdown("**Debating…**" if not elsewhere else
                "**Still running elsewhere** (another app or the command line), or it was interrupted.")
    if not elsewhere and (line := ca.timing(ca.find(batch))):
        st.caption(esc(line))
    for line in lines:
        agents = f" — {agents_line(line['agents'])}" if line["agents"] and line["status"] == "running" else ""
        words = MODEL_WORDS.get(line["status"], line["status"])
        st.markdown(f"{ICONS.get(line['status'], '')} **{esc(line['label'])}**: {words}{agents}")


def model_column(label: str, result: dict, document: dict | None) -> None:
    st.markdown(f"**{esc(label)}**")
    st.caption(status_label(result))
    if result["status"] == "failed":
        st.error(esc(result.get("error") or "This model's debate failed."))
    elif result["status"] == "cancelled":
        st.info("Cancelled. Whatever finished is saved: open it to resume it." if result.get("debate_id")
                else "Cancelled before it started.")
    elif result["status"] == "done" and document is None:
        st.warning("This debate is no longer in the store (deleted from the Library?).")
    if document is not None:
        doc = Document.model_validate(document)
        for side, title, colour in ((doc.pro, "FOR", "green"), (doc.con, "AGAINST", "red")):
            st.markdown(f"**:{colour}[{title}]**\n\n" + "\n".join(f"- {esc(a.claim)}" for a in side.arguments))
        st.markdown("**Decision hinges**\n\n" + "\n".join(f"- {esc(h)}" for h in doc.moderator.decision_hinges))
    if result.get("debate_id"):
        text = "Open what was saved" if result["status"] in ("failed", "cancelled") else "Open the full debate"
        st.page_link(page_path(DEBATE), label=text, icon=":material/open_in_new:",
                     query_params={"debate": result["debate_id"]})


def full_debate(documents: dict) -> None:
    if not documents:
        return
    options = list(documents)
    if st.session_state.get(Compare.FULL) not in options:
        st.session_state[Compare.FULL] = options[0]
    with st.expander("Read one debate in full"):
        label = st.selectbox("Model", options, key=Compare.FULL)
        document_view(Document.model_validate(documents[label]))


def metrics_section(report: dict) -> None:
    frame = metrics_frame(report)
    if frame is None:
        return
    st.header("Metrics")
    st.caption("Headline metrics of each debate (the column *better* says which way is better); no reference "
               "answers exist for a free question, so coverage and stance are absent.")
    st.dataframe(frame, hide_index=True, placeholder=MISSING, width="stretch", height=35 * (len(frame) + 1) + 3)
    for figure in (quality_figure(report), cost_figure(report)):
        if figure is not None:
            st.plotly_chart(figure, width="stretch")
    costs = cost_frame(report)
    if costs is not None:
        st.caption("Time and tokens: wall time from start to finish, model time summed over every call, the mean "
                   "wait for a call's first token (where the backend reports it) and the tokens generated.")
        st.dataframe(costs, hide_index=True, placeholder=MISSING, width="stretch", key=Compare.COSTS)


def agreement_section(report: dict, running: bool) -> None:
    st.header("Arguments across models")
    if report.get("agreement") is None or running:
        st.info("Shown when every model's debate has finished.")
        return
    if not report["agreement"]:
        st.info("Needs at least two finished debates.")
        return
    st.caption(esc(agreement_caption(report)))
    for side, title in SIDES.items():
        frame = agreement_frame(report, side)
        if frame is not None:
            st.markdown(f"**{title}**")
            st.dataframe(frame, hide_index=True, placeholder=MISSING, width="stretch")


def comparison(batch: str) -> None:
    shown = ca.signature(batch)  # before the report: a status that changes in between reruns the page, not lost
    report, documents, running = ca.result(batch)
    st.divider()
    settings.demo_model_notice(*ca.models(batch))
    st.markdown(f"**Question:** {esc(report['question'])}")
    st.caption(f"Comparison `{esc(batch)}` · share this page's address to reopen it.")
    if report.get("error"):
        st.error(esc(report["error"]))
    if running:
        follow("compare", POLL_SECONDS, watch, batch, shown)
    for column, label in zip(st.columns(len(report["models"]), border=True), report["models"], strict=True):
        with column:
            model_column(label, report["results"][label], documents.get(label))
    full_debate(documents)
    metrics_section(report)
    agreement_section(report, running)


def earlier_view() -> None:
    items = ca.earlier()
    if not items:
        return
    st.divider()
    st.header("Earlier comparisons")
    share = st.column_config.LinkColumn("Share link", display_text="Open ↗", help="A link that reopens it.")
    st.dataframe([{k: v for k, v in item.items() if k not in ("id", "label")} for item in items], hide_index=True,
                 placeholder=MISSING,
                 width="stretch", column_config={"Link": share})
    labels = {item["id"]: item["label"] for item in items}
    pick, open_ = st.columns([5, 1], vertical_alignment="bottom")
    chosen = pick.selectbox("Comparison", list(labels), key=Compare.PICK, format_func=labels.get)
    open_.button("Open", key=Compare.OPEN, on_click=ca.open_batch, args=(chosen,), width="stretch")


def page() -> None:
    """The page body: the inputs, the comparison shown (a link to an unknown one says so), the earlier ones."""
    batch = ca.current()
    job = ca.find(batch)
    inputs(batch, job)
    if batch:
        try:
            comparison(batch)
        except InputError as exc:  # a link to a comparison this store does not have
            st.error(esc(f"This link does not open a saved comparison. {exc.for_dashboard()}"))
    earlier_view()
