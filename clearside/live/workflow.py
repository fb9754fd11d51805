"""A live debate as the durable workflow ``clearside.live``: one step per model call, steered by messages.

Every step loads the transcript from the store, makes at most one model call (the proposition, one planned
turn, one answer to a question or a clarification) and saves it, so a step rerun after a crash finds what
was saved and generates only the call in flight. A ``look`` step reads what is pending; the workflow decides
from its checkpointed result.

Steering is messages to the workflow (``runtime.send`` on :data:`TOPIC`, ``DBOS.recv`` here): ``pause``,
``resume``, ``step`` (one more turn, step mode on), ``step_mode`` and ``wake`` (an intervention was added to
the store: :func:`clearside.store.live.add_intervention`). The workflow's control state (paused, step mode,
credits) is folded from the messages it received, so a replay rebuilds it exactly. A turn in flight cannot
receive messages, so every control request is also appended, before the message is sent, to the progress
rows of ``<job id>:control`` (:func:`request`): the turn's ``should_stop`` reads them every half second
(the latest pause or resume wins) and halts the stream at a pause, keeping the speech so far.

What a page on any process needs is published: the control state and the activity while the workflow waits
as the workflow event :data:`EVENT`, the turn in flight (speaker, raw reply, activity) as the job's progress
rows (:class:`LiveView`; this process also keeps it in :data:`clearside.runtime.steps.LOCAL`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import sqlalchemy as sa
from dbos import DBOS
from sqlalchemy.engine import make_url

from .. import runtime
from ..errors import ClearSideError
from ..runtime import steps
from ..runtime.progress import ProgressWriter, read
from ..store import LiveWriter, open_store
from .control import Control, LiveView, requested_pause
from .debate import LiveDebate
from .exchange import load_live
from .protocol import PLAN, phase_break_after
from .transcript import now

log = logging.getLogger("clearside.jobs")

LIVE = "clearside.live"
TOPIC = "clearside.live.control"
EVENT = "control"
CHECK_SECONDS = 0.5  # a pause or a cancel halts the turn in flight within this
WAIT_POLL_SECONDS = 0.2
OPS = ("pause", "resume", "step", "step_mode", "wake")
STATE: dict[str, dict[str, Any]] = {}  # the control state the workflows of this process published, by job id
# the latest control request made in this process, by job id: a turn here sees it at its next token
REQUESTS: dict[str, str] = {}


def control_id(job_id: str) -> str:
    return f"{job_id}:control"


def request(job_id: str, op: str, *, on: bool | None = None, store_url: str | None = None) -> None:
    """Steer a running live debate from any process: the request in the control rows first (a turn in flight
    reads them), then the message the workflow folds into its state."""
    if op not in OPS:
        raise ValueError(f"unknown live control {op!r}")
    if op != "wake":
        writer = ProgressWriter(control_id(job_id), store_url)
        writer.add({"kind": "control", "agent": "", "text": op, "data": {"on": on}})
        REQUESTS[job_id] = op
    runtime.send(job_id, {"op": op, "on": on}, topic=TOPIC, store_url=store_url)


def sink(job_id: str) -> steps.Sink:
    """A step's live events: into this process's view of the turn in flight and the job's progress rows (not the
    speech: a follower derives it from the raw reply)."""
    return steps.Sink(job_id, LiveView(), unwritten=("speech",))


class PauseWatch:
    """The turn in flight's ``should_stop``: a pause request (the latest among the control rows, or one made in this
    process) or a cancel, noticed within :data:`CHECK_SECONDS`."""

    def __init__(self, job_id: str, sink: steps.Sink) -> None:
        self.job_id, self.sink = job_id, sink
        REQUESTS.pop(job_id, None)  # the rows hold it too, in order
        entries, self._seen = read(control_id(job_id), 0, steps.store_url())
        self._pause = requested_pause(entries)
        self._checked = time.monotonic()

    def __call__(self) -> bool:
        local = REQUESTS.pop(self.job_id, None)
        if local is not None:
            self._pause = requested_pause([{"text": local}], self._pause)
        now = time.monotonic()
        if now - self._checked >= CHECK_SECONDS:
            self._checked = now
            entries, self._seen = read(control_id(self.job_id), self._seen, steps.store_url())
            self._pause = requested_pause(entries, self._pause)
        return self._pause or self.sink.cancelled()


def _debate(job_id: str, job: dict[str, Any], sink: steps.Sink) -> LiveDebate:
    store = steps.store()
    transcript = load_live(store, job["debate_id"])
    return LiveDebate(transcript, steps.provider_for(job_id, job), writer=LiveWriter(store, transcript.id),
                      on_event=sink)


def _failed(exc: ClearSideError) -> dict[str, Any]:
    return steps.ended(exc)


def _call(job_id: str, job: dict[str, Any], work) -> dict[str, Any]:
    """Run one model call of the job with its sink; how it went."""
    steps.RUNNING.add(job_id)
    events = sink(job_id)
    try:
        debate = _debate(job_id, job, events)
        outcome = work(debate, PauseWatch(job_id, events))
        if not debate.transcript.model and debate.provider.model:  # a server's default model, once asked
            with debate.lock:
                debate.transcript.model = debate.provider.model
                debate.save()
        return outcome
    except ClearSideError as exc:
        return _failed(exc)
    except Exception as exc:  # never end a job silently: the page must say what happened
        log.exception("Job %s failed", job_id)
        return _failed(ClearSideError(f"Unexpected error: {exc!r}"))
    finally:
        events.close()
        steps.RUNNING.discard(job_id)


@DBOS.step(name=f"{LIVE}.look")
def live_look(job_id: str, job: dict[str, Any]) -> dict[str, Any]:
    """What is pending in the saved transcript."""
    t = load_live(steps.store(), job["debate_id"])

    def queued(*kinds: str) -> list[int]:
        return [i.id for i in t.interventions if i.type in kinds and i.status == "queued"]

    return {"cursor": t.cursor, "questions": queued("pause_question", "direct_question"),
            "clarifications": queued("clarification"), "ended": t.cursor >= len(PLAN),
            "document": t.document is not None, "at_break": t.cursor > 0 and phase_break_after(t.cursor - 1)}


@DBOS.step(name=f"{LIVE}.reply")
def live_reply(job_id: str, job: dict[str, Any], item_id: int) -> dict[str, Any]:
    """The proposition if it is missing, else the answer to intervention ``item_id``."""
    def work(debate: LiveDebate, should_stop: PauseWatch) -> dict[str, Any]:
        if debate.propose():
            return {"status": "proposition"}
        return {"status": "answered" if debate.answer(item_id) else "skipped"}

    return _call(job_id, job, work)


@DBOS.step(name=f"{LIVE}.turn")
def live_turn(job_id: str, job: dict[str, Any], cursor: int) -> dict[str, Any]:
    """The proposition if it is missing, else planned turn ``cursor`` (skipped if an earlier run saved it)."""
    def work(debate: LiveDebate, should_stop: PauseWatch) -> dict[str, Any]:
        if debate.propose():
            return {"status": "proposition"}
        if debate.transcript.cursor != cursor:
            return {"status": "skipped"}
        return {"status": "turn" if debate.turn(should_stop) is not None else "paused"}

    return _call(job_id, job, work)


@DBOS.step(name=f"{LIVE}.hold")
def live_hold(job_id: str, job: dict[str, Any]) -> None:
    """The user paused between turns: the saved debate says so too (a turn halted mid-speech saved it already)."""
    store = steps.store()
    transcript = load_live(store, job["debate_id"])
    if transcript.state == "running":
        transcript.state, transcript.updated_at = "paused", now()
        LiveWriter(store, transcript.id).save(transcript)


@DBOS.step(name=f"{LIVE}.finish")
def live_finish(job_id: str, job: dict[str, Any]) -> dict[str, Any]:
    def work(debate: LiveDebate, should_stop: PauseWatch) -> dict[str, Any]:
        if debate.transcript.document is None:
            debate.finish()
        return {"status": "finished"}

    return _call(job_id, job, work)


class HostStopped(BaseException):  # noqa: N818 - leaves the workflow pending, as a crash would
    """This process stopped hosting while the workflow waited: the next host (or this one again) recovers it."""


_engines: dict[str, sa.Engine] = {}


def _dispose() -> None:
    for engine in _engines.values():
        engine.dispose()
    _engines.clear()


runtime.on_reset(_dispose)


def message_waiting(job_id: str) -> bool:
    """Whether a message to the job waits unread (DBOS 3.4's ``notifications`` table, read-only)."""
    url = runtime.system_url(steps.store_url())
    engine = _engines.get(url) or _engines.setdefault(url, sa.create_engine(url, pool_pre_ping=True))
    schema = runtime.SCHEMA if make_url(url).get_backend_name() == "postgresql" else None
    table = sa.table("notifications", sa.column("destination_uuid"), sa.column("topic"), sa.column("consumed"),
                     schema=schema)
    with engine.connect() as conn:
        return conn.execute(sa.select(sa.literal(1)).select_from(table).where(
            table.c.destination_uuid == job_id, table.c.topic == TOPIC, table.c.consumed.is_(False))
            .limit(1)).first() is not None


@DBOS.step(name=f"{LIVE}.wait")
def live_wait(job_id: str) -> str:
    """Block until a message arrives (or the job is cancelled); nothing is recorded while it waits."""
    host = runtime.current_host()
    checked = time.monotonic()
    while True:
        if message_waiting(job_id):
            return "message"
        if time.monotonic() - checked >= 1.0:
            checked = time.monotonic()
            if runtime.state(job_id, steps.store_url()).status == "cancelled":
                return "cancelled"
        if runtime.current_host() is not host:
            raise HostStopped(job_id)
        time.sleep(WAIT_POLL_SECONDS)


class _Publisher:
    """The control state as the workflow event :data:`EVENT` (set only when it changes: replays match)."""

    def __init__(self, job_id: str, control: Control) -> None:
        self.job_id, self.control = job_id, control
        self.last: dict[str, Any] | None = None

    def __call__(self, *, waiting: bool = False, activity: str = "") -> None:
        value = {"paused": self.control.paused, "step_mode": self.control.step_mode,
                 "credits": self.control.credits, "waiting": waiting, "activity": activity}
        if value != self.last:
            DBOS.set_event(EVENT, value)
            self.last = STATE[self.job_id] = value


def _drain(control: Control) -> None:
    while (message := DBOS.recv(TOPIC, timeout_seconds=0)) is not None:
        control.apply(message)


@DBOS.workflow(name=LIVE)
def live_debate(job: dict[str, Any]) -> dict[str, Any]:
    """A saved live debate from its cursor to its end (``job``: see :func:`live_job`)."""
    job_id = DBOS.workflow_id or job["debate_id"]
    log.info("job %s started: live debate %s", job_id, job["debate_id"])
    host = runtime.current_host()
    try:
        control = Control(paused=job.get("paused", False), step_mode=job.get("step_mode", False),
                          credits=job.get("credits", 0))
        outcome = _run(job_id, job, control)
    except BaseException:
        steps.LOCAL.pop(job_id, None)
        if runtime.current_host() is host:  # else this host stopped: the job goes on, with its lent provider
            steps.LOCAL_PROVIDERS.pop(job_id, None)
        raise
    steps.LOCAL.pop(job_id, None)
    steps.LOCAL_PROVIDERS.pop(job_id, None)
    log.info("job %s %s%s", job_id, outcome["status"], f": {outcome['error']}" if outcome.get("error") else "")
    return outcome


def _run(job_id: str, job: dict[str, Any], control: Control) -> dict[str, Any]:
    publish = _Publisher(job_id, control)
    hold = False  # a turn halted by a pause request: wait for its message before anything else runs
    while True:
        _drain(control)
        look = live_look(job_id, job)
        publish()
        if look["questions"]:
            outcome = live_reply(job_id, job, look["questions"][0])
        elif look["clarifications"] and (look["ended"] or look["at_break"]):
            outcome = live_reply(job_id, job, look["clarifications"][0])
        elif look["ended"] and not look["document"]:
            outcome = live_finish(job_id, job)
        elif look["ended"]:
            publish(activity="Finished")
            return {"status": "done", "debate_id": job["debate_id"]}
        elif control.blocked or hold:
            if control.paused and not hold:
                live_hold(job_id, job)
            publish(waiting=True, activity="Paused" if control.paused or hold else "Waiting for the next step")
            live_wait(job_id)
            hold = False
            continue
        else:
            outcome = live_turn(job_id, job, look["cursor"])
            if outcome["status"] == "turn" and control.step_mode:
                control.credits -= 1
            hold = outcome["status"] == "paused"
        if outcome["status"] == "failed":
            publish(activity="Failed")
            return outcome


def live_job(debate_id: str, provider: Any, *, step_mode: bool = False, paused: bool = False,
             credits: int = 0) -> dict[str, Any]:
    """The workflow's input: the debate, its provider's recipe and how it starts (paused, in step mode with
    ``credits`` turns to run)."""
    return {"debate_id": debate_id, "provider": steps.recipe(provider), "step_mode": step_mode,
            "paused": paused, "credits": credits}


def enqueue_live(debate_id: str, provider: Any, *, step_mode: bool = False, paused: bool = False,
                 credits: int = 0, lend: bool = True, store: Any = None, here: bool = False) -> str:
    """Queue the saved live debate for any host (job id: the debate's id, then ``<id>-2`` and so on, kept in
    the debate's ``data["job"]``; ``here``: run it in this process now, on its host); its job id, at once."""
    store = store or open_store()
    data = store.get(debate_id).data or {}
    runs = int(data.get("jobs", 0)) + 1
    job_id = debate_id if runs == 1 else f"{debate_id}-{runs}"
    store.update(debate_id, data={"job": job_id, "jobs": runs})
    if lend or here:
        steps.lend(job_id, provider)
    job = live_job(debate_id, provider, step_mode=step_mode, paused=paused, credits=credits)
    if here:
        return runtime.start(live_debate, job, job_id=job_id)
    return runtime.enqueue(LIVE, job, job_id=job_id, queue=runtime.LIVE_QUEUE, store_url=store.url)
