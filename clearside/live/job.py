"""A live debate on a worker thread that the dashboard polls: pause, resume, step mode, interventions.

Clicks and reruns only flip flags and queue interventions; the worker owns the
model calls. A pause halts the turn in flight at its next streamed chunk (the
speech so far is saved) and the worker then answers the pause question; resume
continues that turn from the saved point. Nothing here imports Streamlit.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ..errors import ClearSideError
from ..providers import Provider
from ..store import Store
from .debate import LiveDebate, LiveEvent
from .exchange import load_live
from .protocol import LiveConfig
from .transcript import Intervention, Transcript


@dataclass
class LiveSnapshot:
    transcript: Transcript
    status: str  # running, pausing, paused, waiting (step mode), done, failed
    activity: str  # what is happening now, in words
    speaker: str  # who is speaking now ("" when nobody)
    speech: str  # the speech streamed so far in the turn in flight
    raw: str  # the whole reply streamed so far in the turn in flight (JSON: its fields come before the speech)
    step_mode: bool
    error: str

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed")


class LiveJob:
    def __init__(self, debate: LiveDebate, *, step_mode: bool = False) -> None:
        self.debate = debate
        self.id = debate.transcript.id
        self._cond = threading.Condition()
        self._paused = False
        self._step_mode = step_mode
        self._credits = 0
        self._error = ""
        self._speaker, self._speech, self._raw, self._activity = "", "", "", "Starting"
        self._thread: threading.Thread | None = None
        outer = debate.on_event
        debate.on_event = lambda event: (self._on_event(event), outer(event))

    # -- controls (called from the UI thread) -------------------------------------------------

    def start(self) -> LiveJob:
        with self._cond:
            if self._thread is not None and self._thread.is_alive():
                return self
            self._error = ""
            with self.debate.lock:  # a retry: until the worker gets going, snapshots must not still say failed
                if self.debate.transcript.state == "failed":
                    self.debate.transcript.state, self.debate.transcript.error = "running", ""
            self._thread = threading.Thread(target=self._work, name=f"live-{self.id[:8]}", daemon=True)
            self._thread.start()
        return self

    retry = start

    def pause(self, question: str | None = None, to: str | None = None) -> Intervention | None:
        """Halt after the current chunk; with a question, the targeted agent answers it while paused."""
        item = self.debate.submit("pause_question", question, to) if question is not None else None
        with self._cond:
            self._paused = True
            self._cond.notify_all()
        self.start()
        return item

    def resume(self) -> None:
        with self._cond:
            self._paused = False
            self._cond.notify_all()
        self.start()

    def set_step_mode(self, on: bool) -> None:
        with self._cond:
            self._step_mode, self._credits = on, 0
            self._cond.notify_all()

    def step(self) -> None:
        """In step mode (or while paused) run exactly one more turn."""
        with self._cond:
            self._paused, self._step_mode = False, True
            self._credits += 1
            self._cond.notify_all()
        self.start()

    def submit(self, kind: str, text: str, to: str | None = None) -> Intervention:
        """Queue an intervention; a failed debate keeps it queued until Retry (submitting never retries)."""
        item = self.debate.submit(kind, text, to)
        with self._cond:
            self._cond.notify_all()
            failed = bool(self._error) or self.debate.transcript.state == "failed"
        if not failed:
            self.start()
        return item

    # -- the worker ---------------------------------------------------------------------------

    def _questions_waiting(self) -> bool:
        return bool(self.debate.pending("pause_question", "direct_question"))

    def _blocked(self) -> bool:
        return self._paused or (self._step_mode and self._credits <= 0)

    def _work(self) -> None:
        debate = self.debate
        try:
            while True:
                with self._cond:
                    # a finished debate has no turn left to wait for (step mode would otherwise hang here)
                    while self._blocked() and not self._questions_waiting() and not debate.finished:
                        self._activity = "Paused" if self._paused else "Waiting for the next step"
                        self._cond.wait()
                if self._questions_waiting():
                    debate.answer_questions()
                    continue
                if debate.finished:
                    debate.answer_clarifications()
                    with self._cond:
                        if not self._questions_waiting() and not debate.pending("clarification"):
                            self._activity, self._speaker = "Finished", ""
                            return
                    continue
                turn = debate.advance(should_stop=lambda: self._paused)
                with self._cond:
                    if turn is not None and self._step_mode:
                        self._credits -= 1
        except ClearSideError as exc:
            with self._cond:
                self._error, self._activity = exc.for_dashboard(), "Failed"
        except Exception as exc:  # never die silently: the page must show something
            with self._cond:
                self._error, self._activity = f"Unexpected error: {exc!r}", "Failed"
            raise

    def _on_event(self, event: LiveEvent) -> None:
        with self._cond:
            if event.kind == "turn_start":
                self._speaker, self._speech, self._raw = event.speaker, "", ""
                self._activity = event.data.get("label", "")
            elif event.kind == "speech":
                self._speech += event.text
            elif event.kind == "delta":
                self._raw += event.text
            elif event.kind in ("retry", "guardrail"):
                self._speech, self._raw = "", ""
            elif event.kind in ("turn_done", "answered", "paused", "proposition"):
                self._speaker, self._speech, self._raw = "", "", ""

    # -- reading ------------------------------------------------------------------------------

    def snapshot(self) -> LiveSnapshot:
        transcript = self.debate.snapshot()
        with self._cond:
            alive = self._thread is not None and self._thread.is_alive()
            if self._error or transcript.state == "failed":
                status = "failed"
            elif transcript.state == "done" and not alive:
                status = "done"
            elif self._paused:
                status = "paused" if transcript.state == "paused" or not alive or self._activity == "Paused" \
                    else "pausing"
            elif self._step_mode and self._credits <= 0 and self._activity == "Waiting for the next step":
                status = "waiting"
            elif transcript.state == "done":
                status = "done"
            else:
                status = "running"
            return LiveSnapshot(transcript=transcript, status=status, activity=self._activity,
                                speaker=self._speaker if status in ("running", "pausing") else "",
                                speech=self._speech, raw=self._raw, step_mode=self._step_mode,
                                error=self._error or transcript.error)

    def wait(self, timeout: float | None = None) -> LiveSnapshot:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.snapshot()


# -- the mode registry's resume and re-run (clearside.modes) ------------------------------------------------------


def resume_job(store: Store, debate_id: str, provider: Provider, *, temperature: float | None = None,
               strategy: str | None = None, owner: str | None = None, step_mode: bool = False) -> LiveJob:
    """A job continuing the debate saved in ``store`` from its cursor, not yet working: the caller calls its
    ``resume()``. It keeps the saved pace and temperature (``temperature``, ``strategy`` and ``owner`` are
    accepted for the registry's common signature; the saved row keeps its owner)."""
    return LiveJob(LiveDebate.resume(debate_id, provider, store=store), step_mode=step_mode)


def rerun_job(store: Store, debate_id: str, provider: Provider, *, temperature: float, strategy: str | None = None,
              owner: str | None = None) -> LiveJob:
    """A new live debate on the saved one's question, context and pace, run by ``provider`` at ``temperature``
    and owned by ``owner``; returns its job, working (``strategy`` is static mode's only)."""
    saved = load_live(store, debate_id)
    config = LiveConfig.from_saved(saved.config, temperature=temperature)
    debate = LiveDebate.create(saved.question, provider, config=config, context_fields=saved.context, store=store,
                               parent_id=debate_id, owner=owner)
    return LiveJob(debate).start()
