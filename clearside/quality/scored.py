"""Run one debate into the store and score it: the unit of work of a comparison or a regression batch.

``run_scored`` is the one place that does it: save the debate as its agents
write it, give it a row in ``runs``, and on the way out record how it ended
(done with its metrics, failed with ``schema_valid`` 0, or cancelled and
resumable). It takes its provider and store explicitly and, given a debate id,
is safe to run again for the same item: a re-run after a crash resumes that
debate and rewrites that run row instead of starting a second one.

``run_recorded`` is the smaller piece the dashboard's debate worker and the
command line share: run the engine into a recorder, then finish, fail or pause.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import prompts
from ..errors import Cancelled, ClearSideError, DebateFailed
from ..providers import Provider
from ..runtime.events import Event
from ..schema import Document
from ..static import swap
from ..static.engine import Engine
from ..static.recorder import PROMPTS, StaticRecorder, load_run, start_static, usage_summary
from ..static.run import DebateRun
from ..store import Store
from . import metrics
from .references import Reference

PAUSED = "Cancelled: every finished section is kept; Resume completes the rest."


def run_recorded(engine: Engine, run: DebateRun, recorder: StaticRecorder | None, *,
                 error: Callable[[ClearSideError], str] = str) -> Document:
    """``engine.run(run)``, saved through ``recorder`` (if any): finished on success; on ``DebateFailed`` paused
    when the cause is a cancel, else failed with ``error(cause)``, and the exception raised again. A store that
    cannot take the failure note does not hide the failure itself (what it saved before stays)."""
    try:
        document = engine.run(run)
    except DebateFailed as exc:
        if recorder is not None:
            with contextlib.suppress(ClearSideError):
                if isinstance(exc.cause, Cancelled):
                    recorder.pause(PAUSED)
                else:
                    recorder.fail(error(exc.cause))
        raise
    if recorder is not None:
        recorder.finish(document, run)
    return document


@dataclass(frozen=True)
class Scored:
    """How one scored debate ended. ``status``: done, failed or cancelled; ``metrics``: the headline metrics
    (``metrics.summary``), ``detail`` the full ones; ``document`` the finished document (done only)."""

    debate_id: str
    run_id: str
    status: str
    metrics: dict[str, Any] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    wall_seconds: float = 0.0
    document: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunOptions:
    """How one scored debate runs and is saved: its ``runs`` row is filed under ``suite`` and keeps ``data`` (the
    batch id, the item...); ``retries`` re-asks and ``temperature`` per agent; scored against ``reference`` where
    given; ``context``: the debate's context fields (geography, timeframe, domain), saved with it before its agents
    run. ``debate_id`` makes the run idempotent for one batch item: the run row then takes the same id unless
    ``run_id`` names another. ``swap_check``: also rerun the moderator with the cases exchanged
    (:mod:`clearside.static.swap`, one more moderator call) and keep its ``flip_rate``. ``strategy``: how the
    agents write (:data:`clearside.static.run.STRATEGIES`; None: the provider's default)."""

    suite: str
    data: dict[str, Any]
    retries: int = 2
    temperature: float = 0.4
    reference: Reference | None = None
    context: dict[str, str] = field(default_factory=dict)
    debate_id: str | None = None
    run_id: str | None = None
    swap_check: bool = False
    strategy: str | None = None


def _bind(store: Store, question: str, provider: Provider, options: RunOptions) -> tuple[DebateRun, StaticRecorder]:
    """The run and its recorder: a new debate, that id's saved debate resumed, or a new debate under that id (saved
    first, with its context)."""
    debate_id = options.debate_id
    if debate_id is not None and store.exists(debate_id):
        run = load_run(store, debate_id)
        return run, StaticRecorder(store, run, provider, debate_id=debate_id)
    run = DebateRun.from_input(question, **options.context)
    if debate_id is not None:
        start_static(store, run, provider=provider.name, model=provider.model, debate_id=debate_id,
                           prompt_versions=prompts.versions(*PROMPTS))
    return run, StaticRecorder(store, run, provider, debate_id=debate_id)


def run_scored(question: str, provider: Provider, store: Store, options: RunOptions, *,
               on_event: Callable[[Event], None] | None = None,
               on_start: Callable[[str, str], None] | None = None) -> Scored:
    """Debate ``question`` on ``provider``, saving it in ``store`` with a ``runs`` row as ``options`` say, then
    score it (against ``options.reference`` where given).

    ``on_event``: the agents' events (raise ``Cancelled`` from it to stop: the debate is paused, the run
    cancelled). ``on_start(debate_id, run_id)``: once both rows exist. A swap check that fails is recorded as
    unavailable, the debate stays done."""
    run, recorder = _bind(store, question, provider, options)
    data = options.data
    run_id = store.add_run(options.suite, provider=provider.name, model=provider.model, debate_id=recorder.id,
                           prompt_versions=prompts.versions(*PROMPTS), data=data,
                           run_id=options.run_id or options.debate_id)
    if on_start is not None:
        on_start(recorder.id, run_id)
    engine = Engine(provider, retries=options.retries, temperature=options.temperature,
                    on_section=recorder.on_section, on_event=on_event, strategy=options.strategy)
    t0 = time.perf_counter()
    try:
        document = run_recorded(engine, run, recorder)
    except DebateFailed as exc:
        seconds = round(time.perf_counter() - t0, 2)
        if isinstance(exc.cause, Cancelled):
            store.update_run(run_id, status="cancelled")
            return Scored(recorder.id, run_id, "cancelled", error=str(exc.cause), wall_seconds=seconds)
        failed = {"schema_valid": 0.0}
        store.update_run(run_id, status="failed", metrics=failed,
                         data={**data, "wall_seconds": seconds, "error": str(exc.cause)})
        return Scored(recorder.id, run_id, "failed", metrics=failed, error=str(exc.cause), wall_seconds=seconds)
    detail = metrics.compute(document.dump(), reference=options.reference, usage=usage_summary(run.usage))
    if options.swap_check:
        detail["swap_check"] = _swap(document, provider, options.retries, options.temperature, engine.embeddings)
    seconds = round(time.perf_counter() - t0, 2)
    summary = metrics.summary(detail)
    store.update_run(run_id, status="done", metrics=summary, data={**data, "wall_seconds": seconds, "detail": detail})
    return Scored(recorder.id, run_id, "done", metrics=summary, detail=detail, wall_seconds=seconds,
                  document=document.dump())


def _swap(document: Document, provider: Provider, retries: int, temperature: float, embeddings) -> dict[str, Any]:
    """The finished debate's swap check against its own synthesis (one moderator call), without the per-pair
    detail (the run row keeps the counts), or why it could not run."""
    try:
        result = swap.swap_check(document, Engine(provider, retries=retries, temperature=temperature,
                                                  embeddings=embeddings), original="document")
    except ClearSideError as exc:
        return {"available": False, "reason": f"the swapped moderator run failed: {exc}"}
    return {k: v for k, v in result.items() if k != "details"}
