"""The Compare models page's logic: the model rows, providers from ``provider:model`` strings, starting, watching
and reopening a comparison, and the tables and charts of its results.

Callbacks never raise: a ClearSideError becomes ``cmp_error`` (the page shows it escaped, and every input keeps
what was typed). The comparison on show is ``?compare=<batch>`` (the share link), mirrored in ``cmp_batch`` so it
comes back after a visit to another page. Tables go to ``st.dataframe`` (which shows text literally); every label
drawn by plotly is HTML-escaped, since plotly reads a few HTML tags (links included) in its text.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from clearside import inputs
from clearside.agents import AGENT_NAMES, AGENT_ORDER, AGENT_TAGS
from clearside.errors import ClearSideError, ConfigError, InputError
from clearside.providers import Provider, build, parse_spec, provider_class
from clearside.quality import compare, regress
from clearside.quality.job import CompareJob
from clearside.quality.metrics import SUMMARY
from clearside_ui import jobs, rate, settings
from clearside_ui.format import cut, when

MIN_MODELS, MAX_MODELS = 2, compare.MAX_MODELS
DEBATE = "app_pages/debate.py"
QUALITY = ("count_ratio", "length_ratio", "assumption_linkage", "conflicts_two_sided", "diversity", "grounding",
           "off_topic")
COST = {"wall_seconds": "Wall time (s)", "seconds": "Model time (s)", "first_token_seconds": "First token (s)",
        "completion_tokens": "Completion tokens"}
SIDES = {side: AGENT_NAMES[side] for side in ("pro", "con")}
ICONS = {"waiting": "○", "pending": "○", "running": "◐", "retrying": "↻", "done": "✓", "failed": "✗",
         "cancelled": "■"}
SPEC_HELP = ("A provider:model string, for example `embedded` (the built-in model), `embedded:/path/model.gguf`, "
             "`ollama:llama3.2` or `openai:gpt-4o-mini`. OpenAI uses the sidebar's base URL and the OPENAI_API_KEY "
             "secret; Ollama uses the sidebar's host.")


# -- model rows ----------------------------------------------------------------------------------------------------


def sidebar_spec() -> str:
    """The sidebar's model as a provider:model string (what it names, even where it cannot be built yet)."""
    try:
        return settings.build_provider().spec
    except ClearSideError:
        name = settings.chosen()
        model = settings.values(provider_class(name)).get("model") or ""
        return f"{name}:{model}" if model else name


def rows() -> list[int]:
    """The ids of the model rows (a row's text input is ``cmp_model_<id>``); first visit: the sidebar's model
    and an empty row."""
    state = st.session_state
    if "cmp_rows" not in state:
        state["cmp_rows"], state["cmp_next"] = [0, 1], 2
        state.setdefault("cmp_model_0", sidebar_spec())
        state.setdefault("cmp_model_1", "")
    return state["cmp_rows"]


def add_row() -> None:
    state = st.session_state
    if len(state["cmp_rows"]) < MAX_MODELS:
        state["cmp_rows"] = [*state["cmp_rows"], state["cmp_next"]]
        state["cmp_next"] += 1


def remove_row(row: int) -> None:
    state = st.session_state
    if len(state["cmp_rows"]) > MIN_MODELS and row in state["cmp_rows"]:
        state["cmp_rows"] = [r for r in state["cmp_rows"] if r != row]
        state.pop(f"cmp_model_{row}", None)
        state.pop(f"cmp_temp_{row}", None)


def typed_specs() -> list[str]:
    return [st.session_state.get(f"cmp_model_{row}") or "" for row in rows()]


def row_temperature(row: int) -> float:
    """A row's temperature (each row is a configuration); a new row starts at the sidebar's."""
    return float(st.session_state.setdefault(f"cmp_temp_{row}", settings.temperature()))


def typed_temperatures() -> list[float]:
    """The temperatures of the rows that name a model, in order."""
    return [row_temperature(row) for row in rows() if (st.session_state.get(f"cmp_model_{row}") or "").strip()]


def provider_for(spec: str) -> Provider:
    """The provider a row names; a server's (OpenAI-compatible, Ollama) takes the sidebar's connection settings for
    that provider and its Concurrency (tests may inject providers as ``compare_providers_override``, a dict of spec
    to provider)."""
    override = st.session_state.get("compare_providers_override") or {}
    if spec in override:
        return override[spec]
    name, model = parse_spec(spec)
    kind = provider_class(name)
    if kind.address() is None:  # no server (the embedded model, a script): the spec says everything
        return build(name, {"model": model})
    connection = {key: value for key, value in settings.values(kind).items() if key != "model"}
    return build(name, {**connection, "model": model}, secret=settings.secret, concurrency=settings.concurrency())


def providers(specs: list[str], temperatures: list[float] | None = None) -> list[Provider]:
    """Each spec's provider (``specs`` as ``compare.check_specs`` cleaned them), each server asked whether it
    answers before anything starts; an error names the row. Two rows naming one model (``embedded`` and that
    GGUF's path, say) at the same temperature are refused."""
    rows_typed = [n for n, typed in enumerate(typed_specs(), 1) if typed.strip()]
    numbers = rows_typed if len(rows_typed) == len(specs) else list(range(1, len(specs) + 1))
    temperatures = temperatures or [settings.temperature()] * len(specs)
    out = []
    for number, spec in zip(numbers, specs, strict=True):
        try:
            out.append(provider_for(spec))
        except ClearSideError as exc:
            raise ConfigError(f"Model {number}: {exc.for_dashboard()}") from exc
    if (pair := compare.same_model(out, temperatures)) is not None:
        first, second = (f"Model {numbers[n]} ({specs[n]})" for n in pair)
        raise InputError(f"{first} and {second} name the same model at the same temperature "
                         f"({temperatures[pair[0]]:g}): choose another model, or give one of them another "
                         "temperature.")
    for number, spec, provider in zip(numbers, specs, out, strict=True):  # a typo is cheaper to report than a server
        try:
            provider.preflight()
        except ClearSideError as exc:
            raise ConfigError(f"Model {number} ({spec}) cannot run, so nothing was started: "
                              f"{exc.for_dashboard()}") from exc
    return out


# -- starting, showing and watching a comparison -----------------------------------------------------------------


def show(batch: str | None) -> None:
    st.session_state.update(cmp_batch=batch, cmp_loaded=None)
    if batch:
        st.query_params["compare"] = batch
    else:
        st.query_params.pop("compare", None)


def current() -> str | None:
    """The comparison to show: the link's, else the one shown last in this session (and the URL says so)."""
    linked = st.query_params.get("compare")
    batch = linked or st.session_state.get("cmp_batch")
    if batch != st.session_state.get("cmp_batch") or linked != batch:
        show(batch)
    return batch


def start() -> None:
    """The Compare button: check everything first, then run the comparison on a worker and show it."""
    st.session_state["cmp_error"] = ""
    try:
        question = inputs.question(st.session_state.get("cmp_question"))
        temperatures = typed_temperatures()
        chosen = providers(compare.check_specs(typed_specs()), temperatures)
        jobs.host()  # the runtime runs every model's debate; this dashboard is one of its hosts
        with rate.debate_start(st.session_state):  # a comparison is one start, checked after its inputs
            job = CompareJob(question, chosen, jobs.store(), temperatures=temperatures).start()
    except ClearSideError as exc:
        st.session_state["cmp_error"] = exc.for_dashboard()
        return
    jobs.registry().add(job)
    show(job.id)


def find(batch: str | None) -> CompareJob | None:
    """The comparison this server started under that id (its debates may run on any host)."""
    job = jobs.registry().get(batch)
    return job if isinstance(job, CompareJob) else None


def _stored_rows(batch: str) -> list[dict[str, Any]]:
    return [r for r in jobs.store().runs(compare.SUITE) if (r.get("data") or {}).get("batch") == batch]


def _label(row: dict[str, Any]) -> str:
    return (row.get("data") or {}).get("label") or f"{row['provider']}:{row['model']}"


def signature(batch: str) -> tuple:
    """What the page shows depends on: the status of each model (and, here, of the whole comparison)."""
    job = find(batch)
    if job is not None:
        state = job.state  # read first: once "done", the report is complete
        return (state, *((label, r["status"]) for label, r in job.report()["results"].items()))
    return ("stored", *((_label(r), r["status"]) for r in _stored_rows(batch)))


def result(batch: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]], bool]:
    """``(report, documents, running)``: from the job that runs here, else from the store (cached per status)."""
    job = find(batch)
    if job is not None:
        running = job.state != "done"
        return job.report(), job.documents(), running
    shown = signature(batch)
    cached = st.session_state.get("cmp_loaded")
    if cached and cached[0] == (batch, shown):
        report, documents = cached[1], cached[2]
    else:
        report, documents = compare.load(jobs.store(), batch)  # InputError for an unknown batch
        st.session_state["cmp_loaded"] = ((batch, shown), report, documents)
    return report, documents, report["state"] != "done"


def statuses(batch: str) -> list[dict[str, Any]]:
    """One line per model for the progress view: label, status, agents' progress (here only), error."""
    job = find(batch)
    if job is None:
        return [{"label": _label(r), "status": r["status"], "agents": {}, "error": ""} for r in _stored_rows(batch)]
    agents = job.agents()
    return [{"label": label, "status": r["status"], "agents": agents.get(label, {}), "error": r.get("error") or ""}
            for label, r in job.report()["results"].items()]


def agents_line(agents: dict[str, str]) -> str:
    """``✓ proposition · ◐ FOR · ○ AGAINST · ○ moderator`` (then ``· scoring…`` while its metrics are computed)."""
    line = " · ".join(f"{ICONS.get(agents.get(a, 'pending'), '○')} {AGENT_TAGS[a]}" for a in AGENT_ORDER)
    return line + (" · scoring…" if all(agents.get(a) == "done" for a in AGENT_ORDER) else "")


# -- results -----------------------------------------------------------------------------------------------------


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



def earlier() -> list[dict[str, Any]]:
    """Every saved comparison, newest first."""
    items = []
    for batch in reversed(regress.batches(jobs.store(), compare.SUITE)):
        counts: dict[str, int] = {}
        for row in batch.rows:
            counts[row["status"]] = counts.get(row["status"], 0) + 1
        question = (batch.rows[0].get("data") or {}).get("question", "")
        label = f"{cut(question, 80)} · {len(batch.rows)} models · {when(batch.created_at)}"
        items.append({"id": batch.id, "label": label,
                      "Question": question,
                      "Models": ", ".join(_label(r) for r in batch.rows),
                      "Status": ", ".join(f"{n} {status}" for status, n in sorted(counts.items())),
                      "Created": when(batch.created_at), "Link": f"compare?compare={batch.id}"})
    return items


def open_batch(batch: str) -> None:
    st.session_state["cmp_error"] = ""
    show(batch)
