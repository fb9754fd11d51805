"""``python -m clearside worker``, ``status`` and ``cancel``, and the ``--enqueue`` of ``debate`` and ``remap``: the
runtime on the command line.

``status`` exit codes: 0 done, 1 failed or cancelled, 2 unknown id; without ``--wait`` a job still queued,
running or paused also exits 0 (the state is printed).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from typing import Any

from ..errors import ConfigError, NotFound
from ..inputs import shown
from .common import SERVER_CONCURRENCY

WAIT_POLL_SECONDS = 0.5


def enqueue_debate(run: Any, provider: Any, *, resume: str | None, temperature: float, retries: int,
                   strategy: str | None) -> int:
    """``debate --enqueue``: save the debate (or take the saved one), queue it, print its id, exit at once."""
    from ..static import workflow as workflows
    from ..static.recorder import StaticRecorder
    from ..store import open_store

    store = open_store()
    options = {"temperature": temperature, "retries": retries, "strategy": strategy}
    if resume:
        store.get(resume)  # NotFound (exit 2) for an unknown id
        job_id = workflows.continue_static(resume, provider, store=store, **options)
        debate_id = resume
    else:
        debate_id = StaticRecorder(store, run, provider).id
        job_id = workflows.enqueue_static(debate_id, provider, lend=False, store=store, **options)
    return queued(debate_id, f"job {job_id}")


def enqueue_remap(debate_id: str, weights: Any, stances: list[Any], provider: Any, *, temperature: float,
                  retries: int, whole: bool = False) -> int:
    """``remap ID --enqueue``: queue the re-map of the saved debate (its conditions checked first), print the
    job's id, exit at once; the host that runs it saves it as the debate's next version."""
    from ..static.job import RemapJob
    from ..static.remap import Conditions
    from ..store import open_store

    job = RemapJob(open_store(), debate_id, Conditions(weights, tuple(stances), whole), provider,
                   temperature=temperature, retries=retries, lend=False).start()
    return queued(job.id, f"a re-map of debate {debate_id} (saved as its next version once done)")


def queued(item_id: str, what: str) -> int:
    """What an ``--enqueue`` prints: the id to follow on stdout, who runs it and how to follow it on stderr."""
    print(item_id)
    print(f"Queued {what}: `python -m clearside worker` (or the dashboard) runs it; "
          f"`python -m clearside status {item_id} --wait` follows it.", file=sys.stderr)
    return 0


def report(item_id: str) -> dict[str, Any]:
    """The state of a saved debate's latest job (or of a job by its own id) and what it has finished."""
    from .. import modes, runtime
    from ..quality import workflow as batches
    from ..quality.batch import find_batch
    from ..static import workflow as workflows
    from ..static.run import SECTIONS
    from ..store import open_store

    store = open_store()
    debate_id, job_id = item_id, None
    if store.exists(item_id):
        job_id = (store.get(item_id).data or {}).get("job")
    else:
        base = item_id.rpartition("-")[0]
        if base and store.exists(base):
            debate_id, job_id = base, item_id
    if not store.exists(debate_id):
        try:
            job = runtime.state(item_id)
        except NotFound:
            raise NotFound(f"No debate or job '{shown(item_id)}': `python -m clearside list` shows saved "
                           "debates.") from None
        out = {"id": item_id, "job": item_id, "status": job.status, "error": job.error, "sections": [],
               "kind": job.name}
        if (batch_mode := modes.batch_mode_of_workflow(job.name)) is not None:  # how many of its debates finished
            out.update(kind=batch_mode.kind, link=batch_mode.share_link(item_id))
            batch = find_batch(store, item_id)
            rows = batch.rows if batch is not None else []
            out["runs_finished"] = sum(r["status"] in ("done", "failed") for r in rows)
            out["runs_planned"] = batch.planned if batch is not None else None
            if job.result and job.name == batches.REGRESS:  # done, or cancelled with what finished
                out["passed"] = bool((job.result or {}).get("passed"))
            if job.result and job.name == batches.COMPARE:
                results = ((job.result or {}).get("report") or {}).get("results") or {}
                out["models"] = {label: r["status"] for label, r in results.items()}
        if job.name == workflows.REMAP:  # a re-map of a saved debate (`remap ID --enqueue`, the explore panel)
            out["kind"] = "remap"
            if job.status == "done":
                out.update(debate=job.result["debate_id"], version=job.result["number"])
        return out
    record = store.get(debate_id)
    status, error = record.status, (record.data or {}).get("error", "")
    if job_id:
        job = runtime.state(job_id)
        if job.status in ("queued", "running", "cancelled") or (job.finished and record.status == "running"):
            status, error = job.status, job.error or error
    sections = [name for name in SECTIONS if name in store.sections(debate_id)] if record.kind == "static" else []
    turns = len((record.data or {}).get("turns", [])) if record.kind == "live" else None
    out = {"id": debate_id, "job": job_id, "kind": record.kind, "status": status, "error": error,
           "sections": sections}
    if (gone := store.partial([debate_id]).get(debate_id)) and status not in ("queued", "running"):
        out["missing"] = gone  # a partial debate: what it lacks (as `list` says it)
    if turns is not None:
        out["turns"] = turns
    return out


def cmd_status(args: argparse.Namespace) -> int:
    from ..store.records import partial_notice, status_label

    state = report(args.id)
    while args.wait and state["status"] not in ("done", "failed", "cancelled"):
        time.sleep(WAIT_POLL_SECONDS)
        state = report(args.id)
    if args.format == "json":
        print(json.dumps(state, ensure_ascii=False))
    else:
        print(f"{state['id']}: {status_label(state['status'], state.get('missing'))}")
        if notice := partial_notice(state.get("missing") or []):
            print(notice)
        if state.get("sections"):
            print("finished sections: " + ", ".join(state["sections"]))
        if "turns" in state:
            print(f"turns: {state['turns']}")
        if "runs_finished" in state:
            print(f"runs finished: {state['runs_finished']} of {state['runs_planned'] or '?'}"
                  + (f"; {'passed' if state['passed'] else 'REGRESSION'}" if "passed" in state else ""))
        for label, status in state.get("models", {}).items():
            print(f"{label}: {status}")
        if state.get("version"):
            print(f"saved as version {state['version']} of debate {state['debate']} "
                  f"(`python -m clearside remap {state['debate']} --versions` lists them)")
        if state.get("link"):
            print(f"on the dashboard: {state['link']}")
        if state.get("error"):
            print(f"error: {state['error']}")
    return {"done": 0, "failed": 1, "cancelled": 1}.get(state["status"], 0)


def cmd_worker(args: argparse.Namespace) -> int:
    from .. import modes
    from ..store import open_store

    if args.concurrency is not None and args.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1.")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    for name in ("clearside.jobs", "clearside.runtime"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    open_store()  # migrate the store before any job needs it
    host = modes.host(role="worker", concurrency=args.concurrency)
    print(f"Worker {host.executor_id} serving queued and interrupted jobs; Ctrl+C stops it.", file=sys.stderr,
          flush=True)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    stop.wait()
    print("Worker stopping: a job it was running is taken over by the next worker or dashboard.", file=sys.stderr,
          flush=True)
    sys.stderr.flush()
    os._exit(0)  # workflow threads are not daemons; what they were doing is recovered elsewhere


def cmd_cancel(args: argparse.Namespace) -> int:
    """Stop a debate's, session's or batch's job (or a job by its own id); what finished stays saved."""
    from .. import modes, runtime
    from ..quality import workflow as batches
    from ..store import open_store

    store = open_store()
    if store.exists(args.id):
        record = store.get(args.id)
        cancel = modes.mode(record.kind).cancel
        job_id = (record.data or {}).get("job")
        if job_id and runtime.state(job_id).finished:
            print(f"{args.id}: nothing to cancel, its job is {runtime.state(job_id).status}.", file=sys.stderr)
            return 0
        if cancel is not None:
            cancel(store, args.id)
    else:
        job = runtime.state(args.id)  # NotFound (exit 2) for an unknown id
        if job.finished:
            print(f"{args.id}: nothing to cancel, it is {job.status}.", file=sys.stderr)
            return 0
        if modes.batch_mode_of_workflow(job.name) is not None:
            batches.cancel_batch(args.id)  # queued and running debates stop; the batch reports what finished
        else:
            runtime.cancel(args.id)
    print(f"Cancelled {args.id}: what finished stays saved; `python -m clearside status {args.id}` shows it.",
          file=sys.stderr)
    return 0


def add_parsers(sub: Any) -> None:
    worker = sub.add_parser("worker", help="run queued and interrupted jobs until stopped (Ctrl+C)")
    worker.add_argument("--concurrency", type=int, metavar="N",
                        help="jobs on model servers each worker runs at once (one setting for all workers; "
                             f"default {SERVER_CONCURRENCY}); jobs on the in-process model run one at a time")
    worker.set_defaults(func=cmd_worker)
    status = sub.add_parser("status", help="a debate's or job's state and finished sections (a re-map job: the "
                                           "version it was saved as)")
    status.add_argument("id", metavar="ID")
    status.add_argument("--wait", action="store_true", help="block until it is done, failed or cancelled")
    status.add_argument("--format", choices=("text", "json"), default="text")
    status.set_defaults(func=cmd_status)
    cancel = sub.add_parser("cancel", help="stop a running debate, live debate, perspectives session, batch or "
                                           "re-map job (what finished stays saved)")
    cancel.add_argument("id", metavar="ID")
    cancel.set_defaults(func=cmd_cancel)
