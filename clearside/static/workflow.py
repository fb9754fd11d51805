"""ClearSide's long work as durable workflows: one workflow per job, one step per model call.

A static debate is the workflow ``clearside.static``: one step per stage of :data:`clearside.static.run.STAGES`
(orchestrator, the two advocates side by side, moderator), then one that assembles and saves the document.
Every step saves its sections in the store as they land, so a step the runtime reruns after a crash finds
them there and generates only what is missing: recovery regenerates the interrupted step, nothing before it.

Progress (the engine's events, deltas batched) goes through :class:`clearside.runtime.steps.Sink` to the
runtime's progress rows, readable from any process; the host that runs the step also keeps it in memory, so a
page on the same server reads it without a query. A cancel (``runtime.cancel``) is noticed within half a second, at the
next token, and leaves every finished section saved.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from dbos import DBOS

from .. import prompts, runtime
from ..errors import Cancelled, ClearSideError, DebateFailed
from ..providers import Provider
from ..runtime import steps
from ..runtime.events import Agents
from ..schema import AssumptionStance, Document, Weights
from ..store import open_store
from ..store.privacy import scrub
from . import remap
from .engine import Engine
from .recorder import StaticRecorder, load_run, stopped
from .run import STAGES

log = logging.getLogger("clearside.jobs")

STATIC = "clearside.static"
CHALLENGE = "clearside.challenge"
REMAP = "clearside.remap"
# the engine's events stop a cancelled job at an agent's start, delta, part or re-ask, and at once at its done: a
# reply that lands just after a cancel is not kept
STOPS = steps.Stops(at=("start", "delta", "part", "retry"), now=("done",))


def events(job_id: str) -> steps.Sink:
    """A static debate's events (the engine's) for one job: each agent's progress here and in the progress rows."""
    return steps.Sink(job_id, Agents(), stops=STOPS)


@DBOS.step(name=f"{STATIC}.stage")
def static_stage(job_id: str, job: dict[str, Any], stage: str, token: str = "") -> dict[str, Any]:
    """Generate the missing sections of one stage and save them; ``{"status": "ok"}`` or how the job ended
    (``token``, the calling execution's, comes back with a cancel)."""
    store = steps.store()
    sink = events(job_id)
    try:
        run = load_run(store, job["debate_id"])
        provider = steps.provider_for(job_id, job)
        recorder = StaticRecorder(store, run, provider, debate_id=job["debate_id"])
        engine = Engine(provider, retries=job.get("retries", 2), temperature=job.get("temperature", 0.4),
                        on_event=sink, on_section=recorder.on_section, strategy=job.get("strategy"))
        try:
            engine.run_stage(run, stage)
        finally:  # what the stage's agents used and had rejected, finished or not (the finishing step keeps both)
            recorder.add_stage(run)
    except DebateFailed as exc:
        return {**_stopped(store, job, exc.cause), "token": token}
    except ClearSideError as exc:  # a provider that cannot be built here, the store refusing a write
        return {**_stopped(store, job, exc), "token": token}
    except Exception as exc:  # never end a job silently: the page and `status` must say what happened
        log.exception("Job %s failed", job_id)
        return _stopped(store, job, ClearSideError(f"Unexpected error: {exc!r}"))
    finally:
        sink.close()
    return {"status": "ok", "model": provider.model}  # a server's default model, once asked, names the document


CANCELLED_NOTE = "Cancelled: every finished section is kept; Resume completes the rest."


def _stopped(store: Any, job: dict[str, Any], cause: ClearSideError) -> dict[str, Any]:
    if isinstance(cause, Cancelled):
        stopped(store, job["debate_id"], "paused", CANCELLED_NOTE)
        return steps.ended(cause)
    stopped(store, job["debate_id"], "failed", cause.for_dashboard())
    return steps.ended(cause)


@DBOS.step(name=f"{STATIC}.finish")
def static_finish(job_id: str, job: dict[str, Any], model: str = "") -> dict[str, Any]:
    """Assemble the document from the saved sections and store it as finished (``model``: the one the stages
    used, for a provider that names none and takes its server's first)."""
    store = steps.store()
    run = load_run(store, job["debate_id"])
    provider = steps.provider_for(job_id, job)
    if not provider.model and model:
        provider.model = model
    engine = Engine(provider, strategy=job.get("strategy"))
    try:
        document = engine.assemble(run)
    except ClearSideError as exc:
        return _stopped(store, job, exc)
    StaticRecorder(store, run, provider, debate_id=job["debate_id"]).finish(document, run)
    return {"status": "done", "debate_id": job["debate_id"]}


@DBOS.workflow(name=STATIC)
def static_debate(job: dict[str, Any]) -> dict[str, Any]:
    """A saved static debate from its question to its document (``job``: see :func:`static_job`)."""
    job_id = DBOS.workflow_id or job["debate_id"]
    log.info("job %s started: static debate %s", job_id, job["debate_id"])
    with steps.in_process(job_id):
        outcome = _static_stages(job_id, job)
    log.info("job %s %s%s", job_id, outcome["status"], f": {outcome['error']}" if outcome.get("error") else "")
    return outcome


def _static_stages(job_id: str, job: dict[str, Any]) -> dict[str, Any]:
    outcome: dict[str, Any] = {"status": "ok"}
    for stage in STAGES:
        # A stage cancelled in an earlier execution is replayed as "cancelled" when the job resumes: its token
        # is not this execution's, so that stage runs again, afresh. One cancelled here ends this execution.
        token = uuid.uuid4().hex
        outcome = static_stage(job_id, job, stage, token)
        while outcome["status"] == "cancelled" and outcome.get("token") != token:
            token = uuid.uuid4().hex
            outcome = static_stage(job_id, job, stage, token)
        if outcome["status"] != "ok":
            break
    else:
        outcome = static_finish(job_id, job, outcome.get("model", ""))
    return outcome


@DBOS.step(name=f"{CHALLENGE}.answer")
def challenge_answer(job_id: str, job: dict[str, Any]) -> dict[str, Any]:
    """Answer one challenge of a saved debate; the response, not yet saved (``{"status": "ok", ...}``)."""
    sink = events(job_id)
    try:
        store = steps.store()
        document = Document.model_validate(store.get(job["debate_id"]).document)
        provider = steps.provider_for(job_id, job)
        engine = Engine(provider, temperature=job.get("temperature", 0.4), on_event=sink)
        answered = engine.challenge(document, job["action"], job["target"])
    except ClearSideError as exc:  # a cancel before the answer was complete: nothing is added, it can be asked again
        return steps.ended(exc)
    finally:
        sink.close()
    return {"status": "ok", "response": answered.challenges.responses[-1].dump(), "provider": provider.name,
            "model": provider.model}


@DBOS.step(name=f"{CHALLENGE}.save")
def challenge_save(job: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """Add the response to the saved debate, once: a rerun after a crash finds it already there."""
    store = steps.store()
    saved = store.challenges(job["debate_id"])
    if saved and saved[-1] == answer["response"]:
        return {"status": "done", "number": len(saved)}
    number = store.add_challenge(job["debate_id"], answer["response"], provider=answer["provider"],
                                 model=answer["model"], prompt_version=prompts.load("challenge").version)
    return {"status": "done", "number": number}


@DBOS.workflow(name=CHALLENGE)
def challenge(job: dict[str, Any]) -> dict[str, Any]:
    """One challenge of a saved debate (``job``: see :func:`challenge_job`): answer it, then save the answer."""
    job_id = DBOS.workflow_id or ""
    log.info("job %s started: challenge (%s) of debate %s", job_id, job["action"], job["debate_id"])
    with steps.in_process(job_id):
        outcome = challenge_answer(job_id, job)
        if outcome["status"] == "ok":
            outcome = challenge_save(job, outcome)
    log.info("job %s %s%s", job_id, outcome["status"], f": {outcome['error']}" if outcome.get("error") else "")
    return outcome


def challenge_job(debate_id: str, action: str, target: str, provider: Provider, *,
                  temperature: float = 0.4) -> dict[str, Any]:
    return {"debate_id": debate_id, "action": action, "target": target, "provider": steps.recipe(provider),
            "temperature": temperature}


def enqueue_challenge(debate_id: str, action: str, target: str, provider: Provider, *, temperature: float = 0.4,
                      store_url: str | None = None) -> str:
    """Queue one challenge of the saved debate ``debate_id`` (answered by ``provider``, lent to this host);
    its job id, at once."""
    job_id = f"{debate_id}:challenge:{uuid.uuid4().hex[:12]}"
    steps.lend(job_id, provider)
    return runtime.enqueue(CHALLENGE, challenge_job(debate_id, action, target, provider, temperature=temperature),
                           job_id=job_id, queue=steps.queue_for(provider), store_url=store_url)


@DBOS.step(name=f"{REMAP}.run")
def remap_run(job_id: str, job: dict[str, Any]) -> dict[str, Any]:
    """Re-map a saved debate under the job's weights and stances; the re-mapped document, not yet saved
    (``{"status": "ok", "document": ...}``)."""
    sink = events(job_id)
    try:
        store = steps.store()
        document = Document.model_validate(store.get(job["debate_id"]).document)
        provider = steps.provider_for(job_id, job)
        engine = Engine(provider, retries=job.get("retries", 2), temperature=job.get("temperature", 0.4),
                        on_event=sink)
        weights = Weights.model_validate(job["weights"]) if job.get("weights") else None
        stances = [AssumptionStance.model_validate(s) for s in job.get("stances") or []]
        remapped = remap.remap(document, engine, weights=weights, stances=stances, whole=bool(job.get("whole")))
    except ClearSideError as exc:  # a cancel before the synthesis was complete: no version is added
        return steps.ended(exc)
    except Exception as exc:  # never end a job silently: the page must say what happened
        log.exception("Job %s failed", job_id)
        return steps.ended(ClearSideError(f"The re-map failed: {exc!r}"))
    finally:
        sink.close()
    return {"status": "ok", "document": remapped.dump(), "provider": provider.name, "model": provider.model}


@DBOS.step(name=f"{REMAP}.save")
def remap_save(job: dict[str, Any], mapped: dict[str, Any]) -> dict[str, Any]:
    """Save the re-mapped document as the debate's next version, once: a rerun after a crash finds it already
    there as the latest version."""
    store = steps.store()
    debate_id = job["debate_id"]
    versions = store.versions(debate_id)
    if versions:
        latest = store.version(debate_id, versions[-1].number)
        if (latest.body or {}).get("document") == scrub(mapped["document"]):
            return {"status": "done", "debate_id": debate_id, "number": latest.number}
    number = remap.save_version(store, debate_id, Document.model_validate(mapped["document"]),
                                name=mapped["provider"], model=mapped["model"])
    return {"status": "done", "debate_id": debate_id, "number": number}


@DBOS.workflow(name=REMAP)
def remap_debate(job: dict[str, Any]) -> dict[str, Any]:
    """One re-map of a saved debate (``job``: see :func:`remap_job`): rerun the moderator under the user's
    conditions, then save the result as the debate's next version (the debate itself is not changed)."""
    job_id = DBOS.workflow_id or ""
    log.info("job %s started: re-map of debate %s", job_id, job["debate_id"])
    with steps.in_process(job_id):
        outcome = remap_run(job_id, job)
        if outcome["status"] == "ok":
            outcome = remap_save(job, outcome)
    log.info("job %s %s%s", job_id, outcome["status"], f": {outcome['error']}" if outcome.get("error") else "")
    return outcome


def remap_job(debate_id: str, conditions: remap.Conditions, provider: Provider, *, temperature: float = 0.4,
              retries: int = 2) -> dict[str, Any]:
    """The re-map workflow's input: the debate, the user's conditions and the provider's recipe."""
    weights = conditions.weights
    return {"debate_id": debate_id, "weights": weights.dump() if weights is not None else None,
            "stances": [s.dump() for s in conditions.stances], "provider": steps.recipe(provider),
            "temperature": temperature, "retries": retries, "whole": conditions.whole}


def enqueue_remap(job: dict[str, Any], provider: Provider, *, lend: bool = True, here: bool = False,
                  store_url: str | None = None) -> str:
    """Queue a re-map of a saved debate (``job``: see :func:`remap_job`) by ``provider`` (with ``lend``, a step run
    on this host uses it itself; ``here``: run it in this process now, on its host); its job id, at once."""
    job_id = f"{job['debate_id']}:remap:{uuid.uuid4().hex[:12]}"
    if lend or here:
        steps.lend(job_id, provider)
    if here:
        return runtime.start(remap_debate, job, job_id=job_id)
    return runtime.enqueue(REMAP, job, job_id=job_id, queue=steps.queue_for(provider), store_url=store_url)


def static_job(debate_id: str, provider: Provider, *, temperature: float = 0.4, retries: int = 2,
               strategy: str | None = None) -> dict[str, Any]:
    return {"debate_id": debate_id, "provider": steps.recipe(provider), "temperature": temperature, "retries": retries,
            "strategy": strategy}


def enqueue_static(debate_id: str, provider: Provider, *, lend: bool = True, store: Any = None, here: bool = False,
                   **options: Any) -> str:
    """Queue the saved debate ``debate_id`` for any host (the job's id is the debate's id; a later re-run
    gets ``<debate id>-2`` and so on, kept in the debate's ``data["job"]``); with ``lend`` a step run here
    uses ``provider`` itself; ``here``: run it in this process now, on its host (a command without ``--enqueue``),
    with ``provider``. Returns the job's id at once."""
    store = store or open_store()
    record = store.get(debate_id)
    runs = int((record.data or {}).get("jobs", 0)) + 1
    job_id = debate_id if runs == 1 else f"{debate_id}-{runs}"
    store.update(debate_id, status="queued", data={"job": job_id, "jobs": runs, "error": ""})
    if lend or here:
        steps.lend(job_id, provider)
    job = static_job(debate_id, provider, **options)
    if here:
        return runtime.start(static_debate, job, job_id=job_id)
    return runtime.enqueue(STATIC, job, job_id=job_id, queue=steps.queue_for(provider), store_url=store.url)


def continue_static(debate_id: str, provider: Provider, *, store: Any = None, here: bool = False,
                    **options: Any) -> str:
    """Finish an unfinished saved debate: a job under way is left to its host (an interrupted one to the host that
    takes it over); a cancelled job resumes from its last finished step; a failed, interrupted-before-the-runtime
    or finished one runs again as a new job, generating only what is missing. ``here`` (a command without
    ``--enqueue``, whose host serves no queue): only a job a live host runs is left to it; anything else runs as a
    new job in this process, a job still queued or interrupted cancelled first."""
    store = store or open_store()
    carried = steps.carry_on(job_of(debate_id, store), provider, here=here, store_url=store.url,
                             before_resume=lambda: store.update(debate_id, status="queued", data={"error": ""}))
    return carried or enqueue_static(debate_id, provider, store=store, here=here, **options)


def cancel_static(debate_id: str, *, store: Any = None) -> None:
    """Stop a saved debate's job: the step in flight stops at its next token (or the job before its next step);
    every finished section stays saved and :func:`continue_static` completes the rest."""
    store = store or open_store()
    job_id = job_of(debate_id, store)
    if job_id is None:
        return
    runtime.cancel(job_id, store.url)
    store.update(debate_id, status="paused", data={"error": CANCELLED_NOTE})


def job_of(debate_id: str, store: Any = None) -> str | None:
    """The id of the latest job of a saved debate, if the runtime ran one."""
    return ((store or open_store()).get(debate_id).data or {}).get("job")
