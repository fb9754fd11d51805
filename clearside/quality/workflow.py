"""Regression batches and comparisons as durable workflows, fanned out over every host (``--enqueue``).

A batch is a parent workflow on the batch queue (``clearside.regress`` or ``clearside.compare``): it queues one
child workflow per item on that item's provider queue (``clearside.batch.item``, child ids ``<batch>:<n>``),
waits for them all and returns the batch's report. Each child is one step that debates and scores its item with
:func:`clearside.scored.run_scored` under the item's own debate id: a child rerun after a crash completes that
debate (only its missing sections), and an item already done is never run again. Any number of hosts
(``python -m clearside worker``, dashboards) share the items; each runs as many as its queues allow.

- A regression item is one (proposition, run) of a suite on one provider; the runs are saved as
  :func:`clearside.regress.run_batch` saves them, so the Regression page, ``runs``, ``bless`` and
  ``regress --compare`` read an enqueued batch like any other; the report is :func:`regress.batch_report`.
- A comparison item is the question on one provider:model at its temperature, saved as
  :class:`clearside.compare.Comparison` saves it (suite ``compare``), so ``?compare=<batch>`` and
  :func:`clearside.compare.load` reopen it; the report is ``compare.load``'s.
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
from . import compare, regress
from .scored import PROMPTS, run_scored

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
                "spec": task["provider"]["spec"], "temperature": task["temperature"],
                "started_at": job["started_at"], "planned": len(job["tasks"])}
        scored = run_scored(job["question"], provider, steps.store(), suite=compare.SUITE, data=data,
                            retries=job["retries"], temperature=task["temperature"],
                            debate_id=task["debate_id"], on_event=sink)
    else:
        item = next(i for i in regress.suite_items(job["suite"]) if i.name == task["item"])
        data = {"batch": job["batch"], "item": item.name, "index": task["index"], "question": item.proposition,
                "started_at": job["started_at"], "planned": len(job["tasks"]),
                "versions": regress.pinned_versions(provider, temperature=job["temperature"], retries=job["retries"],
                                                    concurrency=job["concurrency"],
                                                    swap_check=bool(job.get("swap_check")))}
        scored = run_scored(item.proposition, provider, steps.store(), suite=job["suite"], data=data,
                            retries=job["retries"], temperature=job["temperature"], reference=item,
                            debate_id=task["debate_id"], on_event=sink, swap_check=bool(job.get("swap_check")))
    result = regress.item_result(scored, data)
    result.pop("detail", None)  # the metrics' detail stays in the store's run row, not in the checkpoint
    return result


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
    items = regress.suite_items(job["suite"])
    base = regress.baseline(store, job["suite"])
    seconds = round(time.time() - job["queued_at"], 2)
    made = regress.find_batch(store, job["batch"])  # the versions its runs recorded
    pinned = {**regress.batch_versions(made), "prompts": job["prompt_versions"]} if made else None
    return regress.batch_report(job["suite"], job["tasks"][0]["provider"]["spec"], items, job["runs"],
                                job["batch"], job["concurrency"], job["prompt_versions"], job["started_at"], seconds,
                                results, base, job.get("thresholds"), pinned=pinned)


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
            with SetWorkflowID(item_id(job["batch"], n)):  # a batch run here (a command) runs its items here too
                handles.append(DBOS.start_workflow(batch_item, job, task) if job.get("here") else
                               DBOS.retrieve_queue(task["queue"]).enqueue(batch_item, job, task))
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
    as the hosts' queues take), and the swap check on each finished debate (one more moderator call)."""

    runs: int = 3
    retries: int = 2
    temperature: float = 0.4
    thresholds: dict[str, dict[str, float]] | None = None
    window: int | None = None
    swap_check: bool = False


def enqueue_regress(suite: str, provider: Provider, settings: RegressSettings = RegressSettings(), *,
                    lend: bool = True, here: bool = False, store_url: str | None = None) -> str:
    """Queue a regression batch of the built-in ``suite`` for any host; its id (the batch's), at once. With
    ``lend`` a host in this process runs its items with ``provider`` itself; other hosts build it from its recipe;
    ``here``: run it in this process now, its debates too."""
    if settings.window is not None and settings.window < 1:
        raise InputError(f"Concurrency must be at least 1 (got {settings.window}).")
    if settings.runs < 1:
        raise InputError(f"--runs must be at least 1 (got {settings.runs}).")
    items = regress.suite_items(suite)
    batch_id = uuid.uuid4().hex
    pairs = [(item, i) for i in range(settings.runs) for item in items]
    tasks = [_task(provider, lend or here, batch_id, n, item=item.name, index=i) for n, (item, i) in enumerate(pairs)]
    job = _job(REGRESS, batch_id, tasks, suite=suite, runs=settings.runs, retries=settings.retries,
               temperature=settings.temperature, thresholds=settings.thresholds,
               concurrency=settings.window or provider.concurrency, window=settings.window,
               swap_check=settings.swap_check, here=here)
    if here:
        return runtime.start(regress_batch, job, job_id=batch_id)
    return runtime.enqueue(REGRESS, job, job_id=batch_id, queue=runtime.BATCH_QUEUE, store_url=store_url)


def enqueue_compare(question: str, providers: list[Provider], settings: compare.Settings, *, lend: bool = True,
                    here: bool = False, store_url: str | None = None) -> str:
    """Queue a comparison of ``question`` on 2-4 providers for any host (``here``: run it in this process now, its
    debates too, at most ``settings.window`` at once); its batch id, at once. The providers are checked first
    (:func:`clearside.quality.compare.checked`: count, temperatures, the same model twice)."""
    labels, temperatures = compare.checked(providers, settings)
    batch_id = uuid.uuid4().hex
    tasks = [_task(p, lend or here, batch_id, n, label=label, temperature=t) for n, (p, label, t) in
             enumerate(zip(providers, labels, temperatures, strict=True))]
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
