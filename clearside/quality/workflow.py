"""Regression batches and comparisons as durable workflows, fanned out over every host (``--enqueue``).

A batch is a parent workflow on the batch queue (``clearside.regress`` or ``clearside.compare``): it queues one
child workflow per item on that item's provider queue (``clearside.batch.item``, child ids ``<batch>:<n>``),
waits for them all and returns the batch's report. Each child is one step that debates and scores its item with
:func:`clearside.quality.scored.run_scored` under the item's own debate id: a child rerun after a crash completes that
debate (only its missing sections), and an item already done is never run again. Any number of hosts
(``python -m clearside worker``, dashboards) share the items; each runs as many as its queues allow.

- A regression item is one (case, repeat) of a suite on one provider. The batch's job carries the suite's cases (a
  built-in's or a suite file's, so any host runs a suite file it cannot read); a case with context fields is
  debated with them, and scored against its own reference. The runs are filed under the suite's name, so the
  Regression page, ``runs``, ``bless`` and ``compare-runs`` read every batch alike; the report is
  :func:`clearside.quality.regress.batch_report`.
- A comparison item is the question on one provider:model at its temperature (suite ``compare``), so
  ``?compare=<batch>`` and :func:`clearside.quality.compare.load` reopen it; the report is ``compare.load``'s.

The ``regress`` and ``compare`` commands without ``--enqueue`` run the same workflows in their own process
(``here``: the batch and its items start on this process's host, not on the queues).
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dbos import DBOS, SetWorkflowID
from dbos._error import DBOSAwaitedWorkflowCancelledError  # what awaiting a cancelled item raises

from .. import prompts, runtime
from ..errors import ClearSideError, InputError
from ..providers import Provider
from ..runtime import steps
from ..static import workflow as static_workflow
from ..static.run import STRATEGIES
from ..store import Store
from . import compare
from .batch import baseline, builtin_suite, find_batch
from .regress import BatchRun, batch_report, item_result
from .scored import PROMPTS, RunOptions, run_scored
from .suites import Case, Suite
from .versions import batch_versions, pinned_versions, refuse_against_baseline

log = logging.getLogger("clearside.jobs")

REGRESS = "clearside.regress"
COMPARE = "clearside.compare"
ITEM = "clearside.batch.item"
CANCEL_TOPIC = "cancel"  # cancel_batch's message to a batch that has not yet queued all its items
KINDS = (REGRESS, COMPARE)


def _scored(job: dict[str, Any], task: dict[str, Any], provider: Provider, sink: steps.Sink) -> dict[str, Any]:
    """Debate and score one item; its row of the report."""
    if job["kind"] == COMPARE:
        data = {"batch": job["batch"], "question": job["question"], "label": task["label"],
                "position": task.get("position"),  # the model's place in the user's list (the report's order)
                "spec": task["provider"]["spec"], "temperature": task["temperature"],
                "strategy": task.get("strategy"), "started_at": job["started_at"], "planned": len(job["tasks"])}
        options = RunOptions(suite=compare.SUITE, data=data, retries=job["retries"], temperature=task["temperature"],
                             debate_id=task["debate_id"], strategy=task.get("strategy"))
        scored = run_scored(job["question"], provider, steps.store(), options, on_event=sink)
    else:
        case = _case(job, task)
        context = case.context_fields()
        data = {"batch": job["batch"], "item": case.name, "index": task["index"], "question": case.proposition,
                "started_at": job["started_at"], "planned": len(job["tasks"]),
                "versions": pinned_versions(provider, temperature=job["temperature"], retries=job["retries"],
                                            concurrency=job["concurrency"], swap_check=bool(job.get("swap_check")),
                                            strategy=job.get("strategy")),
                **({"suite_file": job["suite_file"]} if job.get("suite_file") else {}),
                **({"context": context} if context else {})}
        options = RunOptions(suite=job["suite"], data=data, retries=job["retries"], temperature=job["temperature"],
                             reference=case.scoring_reference(), context=context, debate_id=task["debate_id"],
                             swap_check=bool(job.get("swap_check")), strategy=job.get("strategy"))
        scored = run_scored(case.proposition, provider, steps.store(), options, on_event=sink)
    result = item_result(scored, data)
    result.pop("detail", None)  # the metrics' detail stays in the store's run row, not in the checkpoint
    return result


def _cases(job: dict[str, Any]) -> list[Case]:
    """A regression batch's cases: those its job carries (a batch queued before jobs carried them: its built-in
    suite's)."""
    if "cases" in job:
        return [Case.model_validate(case) for case in job["cases"]]
    return list(builtin_suite(job["suite"]).cases)


def _case(job: dict[str, Any], task: dict[str, Any]) -> Case:
    """The case a regression item debates: the one its task carries, else its job's case of that id."""
    if "case" in task:
        return Case.model_validate(task["case"])
    return next(case for case in _cases(job) if case.name == task["item"])


@DBOS.step(name=f"{ITEM}.run")
def run_item(job: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
    """Debate and score one item, saved under its own ids; its row of the report."""
    job_id = DBOS.workflow_id or task["debate_id"]
    sink = static_workflow.events(job_id)  # progress rows; a cancel stops at the next token
    try:
        provider = steps.provider_for(job_id, {"provider": task["provider"]})
        return _scored(job, task, provider, sink)
    except ClearSideError as exc:  # a provider this host cannot build, a store refusing a write
        return {"id": task["debate_id"], "debate_id": task["debate_id"], "status": "failed",
                "error": exc.for_dashboard(), "metrics": {"schema_valid": 0.0},
                **{k: task[k] for k in ("item", "index", "label") if k in task}}  # counted against the gates
    finally:
        sink.close()
        steps.LOCAL.pop(job_id, None)
        steps.LOCAL_PROVIDERS.pop(job_id, None)


@DBOS.workflow(name=ITEM)
def batch_item(job: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
    log.info("job %s started: %s of batch %s", DBOS.workflow_id, task.get("label") or
             f"{task['item']} #{task['index'] + 1}", job["batch"])
    with steps.running(DBOS.workflow_id or ""):
        result = run_item(job, task)
    log.info("job %s %s%s", DBOS.workflow_id, result["status"], f": {result['error']}" if result.get("error") else "")
    return result


@DBOS.step(name="clearside.batch.report")
def report_step(job: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    store = steps.store()
    if job["kind"] == COMPARE:
        report, _ = compare.load(store, job["batch"])
        return {**report, "passed": all(r["status"] == "done" for r in report["results"].values())}
    seconds = round(time.time() - job["queued_at"], 2)
    made = find_batch(store, job["batch"])  # the versions its runs recorded
    pinned = {**batch_versions(made), "prompts": job["prompt_versions"]} if made else None
    batch = BatchRun(suite=job["suite"], spec=job["tasks"][0]["provider"]["spec"],
                     items=tuple(case.name for case in _cases(job)), runs=job["runs"], batch_id=job["batch"],
                     concurrency=job["concurrency"], prompt_versions=job["prompt_versions"],
                     started_at=job["started_at"], thresholds=job.get("thresholds"))
    return batch_report(batch, results, baseline(store, job["suite"]), wall_seconds=seconds, pinned=pinned)


def _fan_out(job: dict[str, Any]) -> dict[str, Any]:
    log.info("job %s started: %s, %d item(s)", job["batch"], job.get("suite") or "comparison", len(job["tasks"]))
    tasks = job["tasks"]
    window = job.get("window") or len(tasks)  # items under way at once, across every host
    with steps.running(job["batch"]):
        handles: list[Any] = []
        results: list[dict[str, Any]] = []
        stop = None
        for n, task in enumerate(tasks):
            if n >= window:  # wait for the oldest item under way before queueing the next
                results.append(_result(handles[n - window], tasks[n - window]))
            if (stop := DBOS.recv(CANCEL_TOPIC, timeout_seconds=0)) is not None:
                break  # cancelled: queue no more
            item_job, item_task = _for_item(job, task)
            with SetWorkflowID(item_id(job["batch"], n)):  # a batch run here (a command) runs its items here too
                handles.append(DBOS.start_workflow(batch_item, item_job, item_task) if job.get("here") else
                               DBOS.retrieve_queue(task["queue"]).enqueue(batch_item, item_job, item_task))
        if stop is None and (stop := DBOS.recv(CANCEL_TOPIC, timeout_seconds=0)) is not None:
            cancel_step(job["batch"], bool(stop["in_flight"]))  # cancelled while the last items were queued
        results += [_result(handle, task) for handle, task in zip(handles[len(results):], tasks[len(results):],
                                                                   strict=False)]
        results += [{"status": "cancelled"} for _ in tasks[len(handles):]]  # never queued
        report = report_step(job, results)
    failures = report.get("failures") or [f"{label}: {r['status']}" for label, r in
                                          (report.get("results") or {}).items() if r["status"] != "done"]
    log.info("job %s %s: %s", job["batch"], "cancelled" if any(r["status"] == "cancelled" for r in results)
             else "done", "passed" if report["passed"] else "; ".join(failures))
    cancelled = any(r["status"] == "cancelled" for r in results)  # cancel_batch stopped some of its items
    return {"status": "cancelled" if cancelled else "done", "passed": report["passed"], "report": report}


def _for_item(job: dict[str, Any], task: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What one item's workflow is given: the batch's job without its cases, and the task with its own case (each
    item's inputs hold one case, not the suite)."""
    if "cases" not in job:
        return job, task
    case = next(c for c in job["cases"] if c["id"] == task["item"])
    return {k: v for k, v in job.items() if k != "cases"}, {**task, "case": case}


def _result(handle: Any, task: dict[str, Any]) -> dict[str, Any]:
    """An item's row of the report; an item cancelled (see :func:`cancel_batch`) is counted as cancelled."""
    try:
        return handle.get_result()
    except DBOSAwaitedWorkflowCancelledError:
        return {"status": "cancelled", **{k: task[k] for k in ("item", "index", "label") if k in task}}


@DBOS.workflow(name=REGRESS)
def regress_batch(job: dict[str, Any]) -> dict[str, Any]:
    """Queue every item, wait for them, report (``job``: see :func:`enqueue_regress`)."""
    return _fan_out(job)


@DBOS.workflow(name=COMPARE)
def compare_batch(job: dict[str, Any]) -> dict[str, Any]:
    """Queue one debate per model, wait for them, report (``job``: see :func:`enqueue_compare`)."""
    return _fan_out(job)


def item_id(batch_id: str, n: int) -> str:
    return f"{batch_id}:{n}"


def _task(provider: Provider, lend: bool, batch_id: str, n: int, **fields: Any) -> dict[str, Any]:
    if lend:  # a host in this process runs the item with this very provider; others build it from the recipe
              # (a batch run here always lends it)
        steps.lend(item_id(batch_id, n), provider)
    return {"debate_id": uuid.uuid4().hex, "provider": steps.recipe(provider),
            "queue": steps.queue_for(provider), **fields}


def _job(kind: str, batch_id: str, tasks: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "batch": batch_id, "prompt_versions": prompts.versions(*PROMPTS),
            "started_at": datetime.now(UTC).isoformat(timespec="microseconds"), "queued_at": time.time(),
            "tasks": tasks, **fields}


@dataclass(frozen=True)
class RegressSettings:
    """How a regression batch runs: ``runs`` debates per case, re-asks, the temperature, gates of the user's own
    over the built-in ``THRESHOLDS``, at most ``window`` debates under way at once across every host (None: as many
    as the hosts' queues take; a batch run here: the provider's concurrency), and the swap check on each finished
    debate (one more moderator call), and the generation ``strategy`` (None: the provider's default; "single" makes
    the batch the single-pass control). ``InputError`` for fewer than one run, a window under 1 or an unknown
    strategy."""

    runs: int = 3
    retries: int = 2
    temperature: float = 0.4
    thresholds: dict[str, dict[str, float]] | None = None
    window: int | None = None
    swap_check: bool = False
    strategy: str | None = None

    def __post_init__(self) -> None:
        if self.strategy is not None and self.strategy not in STRATEGIES:
            raise InputError(f"Unknown generation strategy {self.strategy!r}: use one of {', '.join(STRATEGIES)}.")
        if self.window is not None and self.window < 1:
            raise InputError(f"Concurrency must be at least 1 (got {self.window}).")
        if self.runs < 1:
            raise InputError(f"--runs must be at least 1 (got {self.runs}).")


def _suite(suite: str | Suite) -> Suite:
    return suite if isinstance(suite, Suite) else builtin_suite(suite)  # an unknown name is refused here


def enqueue_regress(suite: str | Suite, provider: Provider, settings: RegressSettings = RegressSettings(), *,
                    lend: bool = True, here: bool = False, store_url: str | None = None) -> str:
    """Queue a regression batch of ``suite`` (a built-in's name, or a loaded suite: a suite file's cases travel in
    the batch's job) for any host; its id (the batch's), at once. With ``lend`` a host in this process runs its
    items with ``provider`` itself; other hosts build it from its recipe; ``here``: run it in this process now, its
    debates too, at most ``settings.window`` (default: the provider's concurrency) at once."""
    loaded = _suite(suite)
    batch_id = uuid.uuid4().hex
    pairs = [(case, i) for i in range(settings.runs) for case in loaded.cases]
    tasks = [_task(provider, lend or here, batch_id, n, item=case.name, index=i) for n, (case, i) in enumerate(pairs)]
    window = settings.window or (max(1, provider.concurrency) if here else None)
    job = _job(REGRESS, batch_id, tasks, suite=loaded.name, runs=settings.runs, retries=settings.retries,
               temperature=settings.temperature, thresholds=settings.thresholds,
               concurrency=settings.window or provider.concurrency, window=window,
               swap_check=settings.swap_check, here=here, strategy=settings.strategy,
               cases=[case.model_dump(mode="json") for case in loaded.cases],
               **({} if loaded.builtin else {"suite_file": loaded.source}))
    if here:
        return runtime.start(regress_batch, job, job_id=batch_id)
    return runtime.enqueue(REGRESS, job, job_id=batch_id, queue=runtime.BATCH_QUEUE, store_url=store_url)


def check_versions(store: Store, suite: str | Suite, provider: Provider, settings: RegressSettings) -> None:
    """Refuse (:class:`clearside.quality.versions.VersionChange`) a batch that would be judged against a baseline
    scored by another metric suite or embedding model, before anything is queued (``regress`` does, unless
    ``--allow-version-change``)."""
    pinned = pinned_versions(provider, temperature=settings.temperature, retries=settings.retries,
                             concurrency=settings.window or provider.concurrency, swap_check=settings.swap_check,
                             strategy=settings.strategy)
    refuse_against_baseline(store, _suite(suite).name, {**pinned, "prompts": prompts.versions(*PROMPTS)})


def enqueue_compare(question: str, providers: list[Provider], settings: compare.Settings, *, lend: bool = True,
                    here: bool = False, store_url: str | None = None) -> str:
    """Queue a comparison of ``question`` on 2-4 providers for any host (``here``: run it in this process now, its
    debates too, at most ``settings.window`` at once); its batch id, at once. The providers are checked first
    (:func:`clearside.quality.compare.checked`: count, temperatures, the same model twice)."""
    plan = compare.checked(providers, settings)
    batch_id = uuid.uuid4().hex
    tasks = [_task(p, lend or here, batch_id, n, label=label, temperature=t, strategy=s, position=n)
             for n, (p, label, t, s) in enumerate(zip(providers, plan.labels, plan.temperatures, plan.strategies,
                                                      strict=True))]
    job = _job(COMPARE, batch_id, tasks, question=question, retries=settings.retries, window=settings.window,
               here=here)
    if here:
        return runtime.start(compare_batch, job, job_id=batch_id)
    return runtime.enqueue(COMPARE, job, job_id=batch_id, queue=runtime.BATCH_QUEUE, store_url=store_url)


def cancel_batch(batch_id: str, store_url: str | None = None, *, in_flight: bool = True) -> None:
    """Cancel the batch's items not yet finished: each queued item never starts, and with ``in_flight`` a
    debate under way stops at its next token (kept, resumable), else it finishes. The batch itself then
    reports what finished, the rest counted as cancelled."""
    runtime.state(batch_id, store_url)  # NotFound for an unknown id, with its message
    runtime.send(batch_id, {"in_flight": in_flight}, topic=CANCEL_TOPIC, store_url=store_url)  # items to come
    cancel_items(batch_id, in_flight, store_url)


@DBOS.step(name="clearside.batch.cancel")
def cancel_step(batch_id: str, in_flight: bool) -> None:
    cancel_items(batch_id, in_flight, steps.store_url())


def cancel_items(batch_id: str, in_flight: bool, store_url: str | None = None) -> None:
    """Cancel the batch's queued items (and with ``in_flight`` its running ones)."""
    n = 0
    while True:
        try:
            item = runtime.state(item_id(batch_id, n), store_url)
        except ClearSideError:
            break  # no such item: past the last one queued
        if item.status == "queued" or (in_flight and not item.finished):
            runtime.cancel(item.id, store_url)
        n += 1
