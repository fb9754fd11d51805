"""The Compare models page's actions: the model rows (a row's text input is ``cmp_model_<id>``, its temperature
``cmp_temp_<id>``), providers from ``provider:model`` strings, starting a comparison, the comparison shown and its
results (from the job that runs here, else from the store), and the earlier comparisons.

Callbacks never raise: a ClearSideError becomes ``cmp_error`` (the page shows it escaped, and every input keeps
what was typed). The comparison on show is ``?compare=<batch>`` (the share link), mirrored in ``cmp_batch`` so it
comes back after a visit to another page.
"""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from clearside import inputs
from clearside.errors import ClearSideError, ConfigError, InputError
from clearside.providers import Provider, build, parse_spec, provider_class
from clearside.quality import compare
from clearside.quality.batch import batches
from clearside.quality.job import CompareJob
from clearside.runtime import eta
from clearside.static.job import past_runs
from clearside_ui import jobs, links, rate, settings
from clearside_ui.format import cut, plural, when
from clearside_ui.state import Compare
from clearside_ui.view import poll_cached

MIN_MODELS, MAX_MODELS = 2, compare.MAX_MODELS


def sidebar_spec() -> str:
    """The sidebar's model as a provider:model string (what it names, even where it cannot be built yet)."""
    try:
        return settings.build_provider().spec
    except ClearSideError:
        name = settings.chosen()
        model = settings.values(provider_class(name)).get("model") or ""
        return f"{name}:{model}" if model else name


def one_model() -> bool:
    """Only the in-process model to hand: the sidebar uses it and no model server was found with a model."""
    return settings.using_demo_model() and not any(server.models for server in settings.detected())


def rows() -> list[int]:
    """The ids of the model rows (a row's text input is ``cmp_model_<id>``); first visit: the sidebar's model
    and an empty row."""
    state = st.session_state
    if Compare.ROWS not in state:
        state[Compare.ROWS], state[Compare.NEXT_ROW] = [0, 1], 2
        state.setdefault(Compare.row("model", 0), sidebar_spec())
        state.setdefault(Compare.row("model", 1), "")
    return state[Compare.ROWS]


def add_row() -> None:
    state = st.session_state
    if len(state[Compare.ROWS]) < MAX_MODELS:
        state[Compare.ROWS] = [*state[Compare.ROWS], state[Compare.NEXT_ROW]]
        state[Compare.NEXT_ROW] += 1


def remove_row(row: int) -> None:
    state = st.session_state
    if len(state[Compare.ROWS]) > MIN_MODELS and row in state[Compare.ROWS]:
        state[Compare.ROWS] = [r for r in state[Compare.ROWS] if r != row]
        state.pop(Compare.row("model", row), None)
        state.pop(Compare.row("temp", row), None)
        state.pop(Compare.row("strategy", row), None)


def typed_specs() -> list[str]:
    return [st.session_state.get(Compare.row("model", row)) or "" for row in rows()]


def row_temperature(row: int) -> float:
    """A row's temperature (each row is a configuration); a new row starts at the sidebar's."""
    return float(st.session_state.setdefault(Compare.row("temp", row), settings.temperature()))


def typed_temperatures() -> list[float]:
    """The temperatures of the rows that name a model, in order."""
    return [row_temperature(row) for row in rows() if (st.session_state.get(Compare.row("model", row)) or "").strip()]


def row_strategy(row: int) -> str:
    """A row's generation strategy (``auto`` or one of the engine's); a new row starts at the sidebar's."""
    return st.session_state.setdefault(Compare.row("strategy", row), settings.strategy() or "auto")


def typed_strategies() -> list[str | None]:
    """The strategies of the rows that name a model, in order (None: automatic)."""
    chosen = [row_strategy(row) for row in rows() if (st.session_state.get(Compare.row("model", row)) or "").strip()]
    return [None if s == "auto" else s for s in chosen]


def provider_for(spec: str) -> Provider:
    """The provider a row names; a server's (OpenAI-compatible, Ollama) takes the sidebar's connection settings for
    that provider and its Concurrency (tests may inject providers as ``compare_providers_override``, a dict of spec
    to provider)."""
    override = st.session_state.get(Compare.OVERRIDE) or {}
    if spec in override:
        return override[spec]
    name, model = parse_spec(spec)
    kind = provider_class(name)
    if kind.address() is None:  # no server (the embedded model, a script): the spec says everything
        return build(name, {"model": model})
    connection = {key: value for key, value in settings.values(kind).items() if key != "model"}
    return build(name, {**connection, "model": model}, secret=settings.secret, concurrency=settings.concurrency())


def providers(specs: list[str], temperatures: list[float] | None = None,
              strategies: list[str | None] | None = None) -> list[Provider]:
    """Each spec's provider (``specs`` as ``compare.check_specs`` cleaned them), each server asked whether it
    answers before anything starts; an error names the row. Two rows naming one model (``embedded`` and that
    GGUF's path, say) at the same temperature with the same strategy are refused."""
    rows_typed = [n for n, typed in enumerate(typed_specs(), 1) if typed.strip()]
    numbers = rows_typed if len(rows_typed) == len(specs) else list(range(1, len(specs) + 1))
    temperatures = temperatures or [settings.temperature()] * len(specs)
    out = []
    for number, spec in zip(numbers, specs, strict=True):
        try:
            out.append(provider_for(spec))
        except ClearSideError as exc:
            raise ConfigError(f"Model {number}: {exc.for_dashboard()}") from exc
    if (pair := compare.same_model(out, temperatures, strategies)) is not None:
        first, second = (f"Model {numbers[n]} ({specs[n]})" for n in pair)
        raise InputError(f"{first} and {second} name the same model at the same temperature "
                         f"({temperatures[pair[0]]:g}) and strategy: choose another model, or give one of them "
                         "another temperature or strategy.")
    for number, spec, provider in zip(numbers, specs, out, strict=True):  # a typo is cheaper to report than a server
        try:
            provider.preflight()
        except ClearSideError as exc:
            raise ConfigError(f"Model {number} ({spec}) cannot run, so nothing was started: "
                              f"{exc.for_dashboard()}") from exc
    return out


def show(batch: str | None) -> None:
    links.show("compare", Compare.BATCH, batch)
    st.session_state[Compare.LOADED] = None


def current() -> str | None:
    """The comparison to show: the link's, else the one shown last in this session (and the URL says so)."""
    batch = links.current("compare", Compare.BATCH)
    if not links.synced("compare", Compare.BATCH, batch):
        show(batch)
    return batch


def start() -> None:
    """The Compare button: check everything first, then run the comparison on a worker and show it."""
    st.session_state[Compare.ERROR] = ""
    try:
        question = inputs.question(st.session_state.get(Compare.QUESTION))
        temperatures, strategies = typed_temperatures(), typed_strategies()
        chosen = providers(compare.check_specs(typed_specs()), temperatures, strategies)
        jobs.host()  # the runtime runs every model's debate; this dashboard is one of its hosts
        with rate.debate_start(st.session_state):  # a comparison is one start, checked after its inputs
            job = CompareJob(question, chosen, jobs.store(), temperatures=temperatures,
                             strategies=strategies).start()
    except ClearSideError as exc:
        st.session_state[Compare.ERROR] = exc.for_dashboard()
        return
    jobs.registry().add(job)
    show(job.id)


def find(batch: str | None) -> CompareJob | None:
    """The comparison this server started under that id (its debates may run on any host)."""
    return jobs.registry().get(batch, "comparison")


def timing(job: CompareJob) -> str:
    """How long the comparison has run, and about how long a debate takes here with each model (the median of its
    last finished ones: :mod:`clearside.runtime.eta`); "" once it has ended."""
    snap = job.snapshot()
    if not snap.started or snap.finished:
        return ""
    pasts = poll_cached("eta", job.id, lambda: [past_runs(jobs.store(), p) for p in job.providers])
    each = [f"{label}: " + (f"a debate takes about {eta.clock(past.total)} here" if past else "no estimate yet, no "
                            "debate with it has finished here") for label, past in zip(job.labels, pasts, strict=False)]
    return f"Running for {eta.clock(time.time() - snap.started)} · " + "; ".join(each)


def _stored_rows(batch: str) -> list[dict[str, Any]]:
    return [r for r in jobs.store().runs(compare.SUITE) if (r.get("data") or {}).get("batch") == batch]


def _label(row: dict[str, Any]) -> str:
    return (row.get("data") or {}).get("label") or f"{row['provider']}:{row['model']}"


def signature(batch: str) -> tuple:
    """What the page shows depends on: the status of each model (and, here, of the whole comparison)."""
    job = find(batch)
    if job is not None:
        state = job.snapshot().status  # read first: once finished, the report is complete
        return (state, *((label, r["status"]) for label, r in job.report()["results"].items()))
    return ("stored", *((_label(r), r["status"]) for r in _stored_rows(batch)))


def models(batch: str) -> list[str]:
    """The ``provider:model`` spec of every model the comparison ``batch`` runs (its ``runs`` rows: a label is
    shortened for display and cannot say which model ran)."""
    return [f"{row['provider']}:{row['model']}" for row in jobs.store().runs(batch=batch)]


def result(batch: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]], bool]:
    """``(report, documents, running)``: from the job that runs here, else from the store (cached per status)."""
    job = find(batch)
    if job is not None:
        running = not job.snapshot().finished
        return job.report(), job.documents(), running
    shown = signature(batch)
    cached = st.session_state.get(Compare.LOADED)
    if cached and cached[0] == (batch, shown):
        report, documents = cached[1], cached[2]
    else:
        report, documents = compare.load(jobs.store(), batch)  # InputError for an unknown batch
        st.session_state[Compare.LOADED] = ((batch, shown), report, documents)
    return report, documents, report["state"] != "done"


def statuses(batch: str) -> list[dict[str, Any]]:
    """One line per model for the progress view: label, status, agents' progress (here only), error."""
    job = find(batch)
    if job is None:
        return [{"label": _label(r), "status": r["status"], "agents": {}, "error": ""} for r in _stored_rows(batch)]
    agents = job.agents()
    return [{"label": label, "status": r["status"], "agents": agents.get(label, {}), "error": r.get("error") or ""}
            for label, r in job.report()["results"].items()]


def earlier() -> list[dict[str, Any]]:
    """Every saved comparison, newest first."""
    items = []
    for batch in reversed(batches(jobs.store(), compare.SUITE)):
        counts: dict[str, int] = {}
        for row in batch.rows:
            counts[row["status"]] = counts.get(row["status"], 0) + 1
        question = (batch.rows[0].get("data") or {}).get("question", "")
        # every model it was started with (a row is saved when a model's debate starts; older ones: those saved)
        count = plural(max(batch.planned, len(batch.rows)), "model")
        label = f"{cut(question, 80)} · {count} · {when(batch.created_at)}"
        items.append({"id": batch.id, "label": label,
                      "Question": question,
                      "Models": ", ".join(_label(r) for r in batch.rows),
                      "Status": ", ".join(f"{n} {status}" for status, n in sorted(counts.items())),
                      "Created": when(batch.created_at), "Link": f"compare?compare={batch.id}"})
    return items


def open_batch(batch: str) -> None:
    st.session_state[Compare.ERROR] = ""
    show(batch)
