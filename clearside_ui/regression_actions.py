"""The Regression page's state and actions: the suite's batches and the one picked (kept in the URL), starting a
batch, blessing a baseline, and the facts the views read (a batch's state, its runs, their statuses).

Callbacks never raise: a ClearSideError becomes ``rg_start_error`` or ``rg_error`` (the page shows it escaped).
A batch picked on the page is written to the URL (``?batch=<id>``), so the address bar is always a share link to
what is shown; a link to a batch of the other suite switches the suite, and a link to no batch at all says so."""

from __future__ import annotations

from typing import Any

import streamlit as st

from clearside import runtime
from clearside.errors import ClearSideError
from clearside.quality import baseline, compare, references, versions
from clearside.quality import batch as quality_batch
from clearside.quality.batch import Batch
from clearside.quality.job import RegressionJob
from clearside.quality.references import Reference
from clearside.runtime.status import run_status as stored_run_status
from clearside_ui import jobs, rate, settings
from clearside_ui.format import short, short_spec, when
from clearside_ui.state import Regression

SUITE_LABELS = {"flagship": "Flagship (reference debate)", "argkp-dev": "ArgKP dev (4 propositions)"}
SUITE_NOTES = {
    "flagship": "The flagship benchmark: the AI data-center moratorium debate, scored against its "
                "hand-structured reference document, key points and decision hinges.",
    "argkp-dev": "The four ArgKP dev propositions, each scored against the expert key points of both sides.",
}
MAX_RUNS = 10


def job_here(batch_id: str) -> RegressionJob | None:
    """The job of this server running that batch, if any."""
    return jobs.registry().get(batch_id, "regression")


def running() -> bool:
    """A batch this session started is still under way (one at a time: the Start buttons wait for it)."""
    job = job_here(st.session_state.get(Regression.JOB) or "")
    return job is not None and not job.snapshot().finished


def batch_job(batch_id: str) -> runtime.JobState | None:
    """The batch's job as the runtime has it (on any host); None for a batch it never ran (an older release's
    ``regress``) or when it cannot be asked: the rows say then (the core's rules: :mod:`clearside.runtime.status`)."""
    try:
        return runtime.state(batch_id, jobs.store().url)
    except ClearSideError:
        return None


def finished(batch: Batch) -> int:
    return sum(r["status"] in ("done", "failed") for r in batch.rows)


def total(batch: Batch) -> int:
    return batch.planned


def state(batch: Batch) -> str:
    """Its job's status while under way (queued, running, interrupted), else interrupted (runs a stopped process
    left unfinished) or done."""
    return batch.state(batch_job(batch.id))


def label(batch: Batch, baseline_id: str | None) -> str:
    """A plain-text selectbox label (options are not Markdown)."""
    mark = " · baseline" if batch.id == baseline_id else ""
    return (f"{when(batch.created_at)} · {short_spec(batch.spec, 48)} · {finished(batch)}/{total(batch)} runs{mark} · "
            f"{batch.id[:8]}")


def find(batch_id: str) -> Batch | None:
    """A regression batch of any suite (a built-in or the user's own) by its id; not a comparison's."""
    batch = quality_batch.find_batch(jobs.store(), (batch_id or "").strip().lower())
    return batch if batch is not None and batch.suite != compare.SUITE else None


def suite_label(name: str) -> str:
    return SUITE_LABELS.get(name, f"{name} (your suite)")


def suite_file(store: Any, suite: str) -> str:
    """The file a suite of the user's own was run from, as its newest batch recorded it ("" if it did not)."""
    found = quality_batch.batches(store, suite)
    rows = found[-1].rows if found else []
    return next((data["suite_file"] for r in rows if (data := r.get("data") or {}).get("suite_file")), "")


def follow_link() -> None:
    """Open the batch ``?batch=<id>`` names (once per distinct link): its suite, then the batch itself."""
    wanted = st.query_params.get("batch")
    if not wanted or wanted == st.session_state.get(Regression.LINKED):
        return
    st.session_state[Regression.LINKED] = wanted
    batch = find(wanted)
    if batch is None:
        st.session_state[Regression.LINK_ERROR] = wanted
        return
    st.session_state.pop(Regression.LINK_ERROR, None)
    st.session_state.update({Regression.SUITE: batch.suite, Regression.BATCH: batch.id})
    st.session_state.pop(Regression.RUN, None)


def link_error() -> str:
    """The unknown batch id the URL names, while it still names it."""
    wanted = st.session_state.get(Regression.LINK_ERROR)
    return wanted if wanted and st.query_params.get("batch") == wanted else ""


def picked(batches: list[Batch]) -> Batch:
    """The selected batch: a batch just started once it has runs, else the one chosen, else the newest."""
    by_id = {b.id: b for b in batches}
    pending = st.session_state.get(Regression.PENDING)
    if pending in by_id:
        st.session_state[Regression.BATCH] = st.session_state.pop(Regression.PENDING)
        st.session_state.pop(Regression.RUN, None)
    if st.session_state.get(Regression.BATCH) not in by_id:
        st.session_state[Regression.BATCH] = batches[-1].id
    chosen = st.session_state[Regression.BATCH]
    if not link_error() and st.query_params.get("batch") != chosen:
        st.query_params["batch"] = chosen  # the address bar is the share link
        st.session_state[Regression.LINKED] = chosen
    return by_id[chosen]


def suite_changed() -> None:
    for key in ("rg_batch", "rg_run", "rg_confirm", "rg_metric"):
        st.session_state.pop(key, None)
    st.session_state.pop(Regression.LINK_ERROR, None)
    st.query_params.pop("batch", None)
    st.session_state.pop(Regression.LINKED, None)


def batch_changed() -> None:
    st.session_state.pop(Regression.RUN, None)
    st.session_state.pop(Regression.CONFIRM, None)
    st.session_state.pop(Regression.LINK_ERROR, None)


def provider_or_error() -> tuple[Any, str]:
    """The sidebar's provider, or ``(None, why it cannot be built)``."""
    try:
        return settings.build_provider(), ""
    except ClearSideError as exc:
        return None, exc.for_dashboard()


def start(suite: str, strategy: str | None = None) -> None:
    """Start a batch of ``suite`` with the sidebar's model on a worker (``strategy``: instead of the sidebar's, as
    the single-pass control is run); the page polls it by id."""
    st.session_state[Regression.START_ERROR] = ""
    try:
        provider = settings.build_provider()
        jobs.host()  # the runtime runs the batch's debates; this dashboard is one of its hosts
        with rate.debate_start(st.session_state):  # a batch run is one start
            job = RegressionJob(suite, provider, jobs.store(), runs=int(st.session_state.get(Regression.RUNS, 3)),
                                concurrency=int(st.session_state.get(Regression.CONCURRENCY) or provider.concurrency),
                                temperature=settings.temperature(), strategy=strategy or settings.strategy(),
                                swap_check=bool(st.session_state.get(Regression.SWAP_CHECK))).start()
    except ClearSideError as exc:
        st.session_state[Regression.START_ERROR] = exc.for_dashboard()
        return
    jobs.registry().add(job)
    st.session_state.update({Regression.JOB: job.id, Regression.PENDING: job.id, Regression.NOTICE: ""})


def dismiss() -> None:
    st.session_state.pop(Regression.JOB, None)


def ask_bless(batch_id: str) -> None:
    st.session_state.update({Regression.CONFIRM: batch_id, Regression.NOTICE: "", Regression.ERROR: ""})


def cancel_bless() -> None:
    st.session_state.pop(Regression.CONFIRM, None)


def bless(batch_id: str) -> None:
    """Bless with the note typed in "Why this baseline"; a refusal (no note on flagship) keeps the form open, and
    the warnings recorded with the blessing are shown once."""
    try:
        blessed = baseline.bless(jobs.store(), batch_id, note=st.session_state.get(Regression.BLESS_NOTE) or "")
    except ClearSideError as exc:
        st.session_state[Regression.ERROR] = exc.for_dashboard()
        return
    st.session_state.pop(Regression.CONFIRM, None)
    st.session_state.pop(Regression.BLESS_NOTE, None)
    batch = blessed.batch
    st.session_state[Regression.NOTICE] = (f"Batch {batch.id[:8]} ({batch.spec}, {when(batch.created_at)}) is now the "
                                     f"{batch.suite} baseline.")
    st.session_state[Regression.BLESS_WARNINGS] = blessed.warnings


def baseline_line(base: Batch) -> str:
    """The baseline with its age and the versions it was made with (plain text: escape it to show)."""
    return (f"batch {base.id[:8]} ({base.spec}), made {quality_batch.age(base.created_at)} ago "
            f"({when(base.created_at)}) with {versions.versions_text(versions.batch_versions(base))}")


def version_check(batch: Batch, base: Batch | None) -> tuple[list[str], list[str]]:
    """``(changes, notes)`` between the baseline's versions and the batch's (nothing without a baseline)."""
    if base is None or base.id == batch.id:
        return [], []
    return versions.version_differences(versions.batch_versions(base), versions.batch_versions(batch),
                                       ("the baseline", "this batch"))


def checks_for(batch: Batch, base: Batch | None) -> list[dict[str, Any]]:
    """The batch's checks against the baseline (absolute gates only without one, or when it is the baseline)."""
    against = base.aggregate() if base is not None and base.id != batch.id else None
    return quality_batch.check(batch.aggregate(), against)


def compare_choices(batches: list[Batch], baseline_id: str | None) -> tuple[list[str], str, str]:
    """The batch ids newest first, and the default A (the baseline, else the second newest) and B (the newest)."""
    ids = [b.id for b in reversed(batches)]
    newest = ids[0]
    a = baseline_id if baseline_id and baseline_id != newest else ids[1]
    return ids, a, newest


def run_status(row: dict[str, Any]) -> str:
    """The stored status, except that a run saved as running whose batch is not under way was interrupted."""
    return stored_run_status(row, batch_job((row.get("data") or {}).get("batch", "")) if row["status"] == "running"
                             else None)


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
