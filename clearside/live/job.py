"""A live debate on the durable runtime, held the way a page holds a job: pause, resume, step mode, interventions.

:class:`LiveJob` queues the workflow ``clearside.live`` (:mod:`clearside.live.workflow`) and steers it with
messages; any host runs it (this dashboard, another replica, a worker), and a host that dies mid-debate is
taken over by the next one, which generates only the turn in flight. The snapshot a page polls is built from
the store (the transcript), the runtime (the job's state, the control state the workflow publishes) and the
job's progress rows (the turn in flight), so a page on any process can follow and steer a debate by its id
(:meth:`LiveJob.follow`). Interventions are added to the store at once (with their number and checks) and
the workflow is woken to handle them at their point. Nothing here imports Streamlit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .. import runtime
from ..errors import ClearSideError, InputError
from ..providers import Provider
from ..runtime import steps
from ..runtime.progress import Follower, read
from ..sources import Source
from ..store import Store, open_store
from ..store.live import add_intervention
from . import workflow as flow
from .control import LiveView, requested_pause
from .debate import LiveDebate, Origin, intervention_for
from .evidence import sync_store
from .exchange import load_live
from .protocol import LiveConfig
from .transcript import Intervention, Transcript

CANCELLED = "Cancelled: every finished turn is kept; Retry continues from the next one."


@dataclass
class LiveSnapshot:
    transcript: Transcript
    status: str  # clearside.runtime.STATUSES: queued, running, interrupted, pausing, paused, waiting (step mode),
    # done, failed, cancelled
    activity: str  # what is happening now, in words
    speaker: str  # who is speaking now ("" when nobody)
    speech: str  # the speech streamed so far in the turn in flight
    raw: str  # the whole reply streamed so far in the turn in flight (JSON: its fields come before the speech)
    step_mode: bool
    error: str

    @property
    def finished(self) -> bool:
        return self.status in runtime.FINISHED


class _Follower:
    """The turn in flight (:class:`LiveView`, from the job's progress rows) and the latest control request of a job
    another process may run."""

    def __init__(self, job_id: str, url: str | None) -> None:
        self.job_id, self.url = job_id, url
        self.rows = Follower(job_id, url, LiveView())
        self.pause = False
        self._control = 0

    @property
    def view(self) -> LiveView:
        return self.rows.view

    def update(self) -> None:
        self.rows.update()
        entries, self._control = read(flow.control_id(self.job_id), self._control, self.url)
        self.pause = requested_pause(entries, self.pause)


class LiveJob:
    """A saved live debate and its runtime job (``debate``: made or resumed with the provider to run it)."""

    kind = "live"

    def __init__(self, debate: LiveDebate, *, step_mode: bool = False, store: Store | None = None,
                 here: bool = False) -> None:
        """``here``: its workflow runs in this process, on its host (the ``live`` command), each time it starts."""
        self.debate, self.here = debate, here
        self.id = debate.transcript.id
        self.provider: Provider | None = debate.provider
        self.store = store or (debate.writer.store if debate.writer is not None else open_store())
        self._step_mode = step_mode
        self.job_id: str | None = (self.store.get(self.id).data or {}).get("job")
        self._follower = _Follower(self.job_id, self.store.url) if self.job_id else None

    @classmethod
    def follow(cls, store: Store, debate_id: str, provider: Provider | None = None) -> LiveJob:
        """The job of a saved live debate, built from its id on any process (``provider``: for a Retry)."""
        job = cls(LiveDebate(load_live(store, debate_id), provider, writer=None), store=store)  # type: ignore[arg-type]
        job._step_mode = bool(job._control().get("step_mode"))
        return job

    # -- the runtime ----------------------------------------------------------------------------

    def state(self) -> runtime.JobState | None:
        if self.job_id is None:
            return None
        try:
            return runtime.state(self.job_id, self.store.url)
        except ClearSideError:
            return None

    def alive(self) -> bool:
        now = self.state()
        return now is not None and not now.finished

    def start(self, *, paused: bool = False, credits: int = 0) -> LiveJob:
        """Queue the debate from its cursor (a job already queued or running is left as it is)."""
        saved = load_live(self.store, self.id)
        if self.alive() and not (saved.state == "failed" and self._wound_up()):
            return self
        if self.provider is None:
            raise InputError("This live debate runs on another server; choose a model to resume it here.")
        if saved.state == "failed":  # a retry: snapshots must not still say failed until the job gets going
            self.store.update(self.id, status="running", data={"state": "running", "error": ""})
        self.job_id = flow.enqueue_live(self.id, self.provider, step_mode=self._step_mode, paused=paused,
                                        credits=credits, store=self.store, here=self.here)
        self._follower = _Follower(self.job_id, self.store.url)
        return self

    retry = start

    def _wound_up(self, timeout: float = 10.0) -> bool:
        """Whether the job has finished within ``timeout`` s: a failed turn is saved (and shown) a moment before
        its workflow returns, and a Retry in that moment must wait for it rather than be taken for a no-op."""
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def _send(self, op: str, **options: Any) -> None:
        flow.request(self.job_id or "", op, store_url=self.store.url, **options)

    def pause(self, question: str | None = None, to: str | None = None) -> Intervention | None:
        """Halt within half a second; with a question, the targeted agent answers it while paused."""
        item = self._add("pause_question", question, to) if question is not None else None
        if self.alive():
            if item is not None:
                self._send("wake")
            self._send("pause")
        else:
            self.start(paused=True)
        return item

    def resume(self) -> None:
        if self.alive():
            self._send("resume")
        else:
            self.start()

    def set_step_mode(self, on: bool) -> None:
        self._step_mode = on
        if self.alive():
            self._send("step_mode", on=on)

    def step(self) -> None:
        """In step mode (or while paused) run exactly one more turn."""
        self._step_mode = True
        if self.alive():
            self._send("step")
        else:
            self.start(credits=1)

    def submit(self, kind: str, text: str, to: str | None = None, source: Source | None = None) -> Intervention:
        """Add an intervention; a failed debate keeps it queued until Retry (submitting never retries).
        ``source``: a file injected as evidence (read by ``clearside.sources.read_source``): saved with the
        intervention and linked to the saved debate before the workflow is woken."""
        item = self._add(kind, text, to, source)
        now = self.state()
        if now is not None and not now.finished:
            self._send("wake")
        elif load_live(self.store, self.id).state != "failed" and (now is None or now.status == "done"):
            self.start()
        return item

    def _add(self, kind: str, text: str | None, to: str | None, source: Source | None = None) -> Intervention:
        item = intervention_for(load_live(self.store, self.id), kind, text or "", to, source)
        saved = Intervention.model_validate(add_intervention(self.store, self.id, item.model_dump(mode="json")))
        if saved.source is not None:
            sync_store(self.store, load_live(self.store, self.id))
        return saved

    def cancel(self) -> None:
        """Stop the job: the turn in flight halts within half a second, its speech so far kept."""
        if self.job_id:
            runtime.cancel(self.job_id, self.store.url)

    # -- reading --------------------------------------------------------------------------------

    def _control(self) -> dict[str, Any]:
        if self.job_id is None:
            return {}
        published = flow.STATE.get(self.job_id)
        if published is None:
            try:
                published = runtime.dbos_client(self.store.url).get_event(self.job_id, flow.EVENT, timeout_seconds=0)
            except Exception:  # noqa: BLE001 - not published yet, or the runtime briefly unreachable
                published = None
        return published or {}

    def snapshot(self) -> LiveSnapshot:
        transcript = load_live(self.store, self.id)
        now = self.state()
        control = self._control()
        view = steps.LOCAL.get(self.job_id or "")
        if self._follower is not None:
            self._follower.update()
            view = view or self._follower.view
        view = view or LiveView()
        requested = self._follower.pause if self._follower is not None else False
        status, error = _status(now, transcript, control, requested)
        activity = view.activity
        if now is None or now.finished or control.get("waiting"):
            activity = control.get("activity") or ("Finished" if status == "done" else activity)
        if status in ("failed", "cancelled"):
            activity = "Failed" if status == "failed" else "Cancelled"
        return LiveSnapshot(transcript=transcript, status=status, activity=activity,
                            speaker=view.speaker if status in ("running", "pausing") else "",
                            speech=view.speech, raw=view.raw,
                            step_mode=self._step_mode,
                            error=error)

    def wait(self, timeout: float | None = None) -> LiveSnapshot:
        """Block until the job ends (or ``timeout`` seconds pass); its snapshot."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.alive() and (deadline is None or time.monotonic() < deadline):
            time.sleep(0.05)
        return self.snapshot()


def _status(now: runtime.JobState | None, transcript: Transcript, control: dict[str, Any],
            requested: bool) -> tuple[str, str]:
    """The live debate's status in the one vocabulary (:data:`clearside.runtime.STATUSES`), and its error: from its
    job (``now``; None: the runtime never ran it), the saved transcript, the control state the workflow published and
    whether a pause was requested."""
    if now is not None and now.status == "cancelled":
        return "cancelled", CANCELLED
    if (now is not None and now.status == "failed") or transcript.state == "failed":
        return "failed", transcript.error or (now.error if now else "")
    if now is None:
        return ({"done": "done", "paused": "paused"}.get(transcript.state, "interrupted")), ""
    if now.finished:
        return "done", ""
    if requested:
        return ("paused" if transcript.state == "paused" or control.get("activity") == "Paused" else "pausing"), ""
    if control.get("waiting") and control.get("activity") == "Waiting for the next step":
        return "waiting", ""
    return now.status, ""  # queued, running or interrupted


# -- the mode registry's resume and re-run (clearside.modes) ------------------------------------------------------


def resume_job(store: Store, debate_id: str, provider: Provider, *, temperature: float | None = None,
               strategy: str | None = None, owner: str | None = None, step_mode: bool = False) -> LiveJob:
    """A job continuing the debate saved in ``store`` from its cursor, not yet working: the caller calls its
    ``resume()``. It keeps the saved pace and temperature (``temperature``, ``strategy`` and ``owner`` are
    accepted for the registry's common signature; the saved row keeps its owner). A debate whose job is
    queued or running on any host is followed as it is, never saved over."""
    running = LiveJob.follow(store, debate_id, provider)
    if running.alive():
        return running
    return LiveJob(LiveDebate.resume(debate_id, provider, store=store), step_mode=step_mode, store=store)


def rerun_job(store: Store, debate_id: str, provider: Provider, *, temperature: float, strategy: str | None = None,
              owner: str | None = None) -> LiveJob:
    """A new live debate on the saved one's question, context and pace, run by ``provider`` at ``temperature``
    and owned by ``owner``; returns its job, working (``strategy`` is static mode's only)."""
    saved = load_live(store, debate_id)
    config = LiveConfig.from_saved(saved.config, temperature=temperature)
    debate = LiveDebate.create(saved.question, provider, config=config, context_fields=saved.context, store=store,
                               origin=Origin(parent_id=debate_id, owner=owner))
    return LiveJob(debate, store=store).start()


__all__ = ["CANCELLED", "LiveJob", "LiveSnapshot", "resume_job", "rerun_job"]
