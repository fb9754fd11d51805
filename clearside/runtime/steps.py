"""What the workflow steps of every mode share, knowing no mode.

- The provider a job runs with: the one the process that queued it lent it (:func:`lend`: an API key typed in
  the sidebar, a model already loaded, a test's scripted replies) when a step runs in that process, else one
  rebuilt from the job's :func:`recipe` with this host's own environment (:func:`provider_for`).
- The queue a job goes on (:func:`queue_for`): in-process models run one job at a time on each host.
- The jobs an execution in this process runs now (:data:`RUNNING`, :func:`in_process`, :func:`wait_stopped`) and
  the agents' progress of those steps, kept in memory (:data:`LOCAL`) so a page on the same server reads it
  without a query.
- :class:`Sink`: a step's events, folded into that progress, written in batches to the job's progress rows
  (:mod:`clearside.runtime.progress`), and the place a cancel is noticed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from ..errors import Cancelled, ClearSideError
from ..providers import Provider, get_provider
from ..store import Store, open_store
from . import client, host
from .events import Event, View
from .jobs import UNDER_WAY
from .progress import ProgressWriter

CANCEL_CHECK_SECONDS = 0.5
log = logging.getLogger("clearside.runtime")

# Providers the process that queued a job lent it (an API key typed in the sidebar, a model already loaded,
# a test's scripted replies): a step run here uses them; a step run by another host rebuilds the provider
# from the job's recipe and that host's own environment.
LOCAL_PROVIDERS: dict[str, Provider] = {}
# The views of the jobs whose steps run in this process, by job id (each mode's own: see runtime.events).
LOCAL: dict[str, View] = {}
# Jobs an execution in this process is running now (a cancelled one stays here until its step stops).
RUNNING: set[str] = set()
# Jobs cancelled from this process while a step of theirs runs here (cancel_here): that step stops at once.
CANCELLED: set[str] = set()
_local_lock = threading.Lock()


def recipe(provider: Provider) -> dict[str, Any]:
    """What another host needs to build the same provider; secrets stay out (each host has its own)."""
    options: dict[str, Any] = {}
    for name in ("host", "base_url"):  # Ollama's host, an OpenAI-compatible server's URL
        value = getattr(provider, name, None)
        if isinstance(value, str) and value:
            options[name] = value
    options["concurrency"] = provider.concurrency  # the endpoint's limit the user chose travels with the job
    return {"spec": provider.spec, "small": bool(provider.small), "options": options}


def queue_for(provider: Provider) -> str:
    """In-process models run one job at a time on each host; model servers take several."""
    return host.LOCAL_QUEUE if provider.name == "embedded" else host.SERVER_QUEUE


def provider_for(job_id: str, job: dict[str, Any]) -> Provider:
    lent = LOCAL_PROVIDERS.get(job_id)
    if lent is not None:
        return lent
    made = job["provider"]
    return get_provider(made["spec"], small=made.get("small") or None, **made.get("options", {}))


@dataclass(frozen=True)
class Stops:
    """Where a step's events stop it once its job is cancelled (raising :class:`Cancelled`): at an event of a kind
    in ``at``, the runtime asked at most every :data:`CANCEL_CHECK_SECONDS`; at one in ``now``, asked at once (an
    agent's reply, looked at before it is kept, so one that lands just after a cancel is not)."""

    at: tuple[str, ...] = ()
    now: tuple[str, ...] = ()


class Sink:
    """A step's events, the one sink of every mode: each folded into this process's view of the job (``view``, the
    mode's own, kept in :data:`LOCAL` while the step runs, so a page here reads it without a query), written in
    batches to the job's progress rows (but the kinds in ``unwritten``, which a follower derives itself), and the
    place a cancel is noticed (``stops``)."""

    def __init__(self, job_id: str, view: View, *, stops: Stops = Stops(), unwritten: tuple[str, ...] = ()) -> None:
        self.job_id, self.stops, self.unwritten = job_id, stops, unwritten
        self.writer = ProgressWriter(job_id, store_url())
        with _local_lock:
            self.view = LOCAL.setdefault(job_id, view)
        self._lock = threading.Lock()
        self._checked = 0.0
        self._cancelled = False
        self._unasked = False  # the last cancel check could not reach the database (said once)

    def __call__(self, event: Event) -> None:
        if (event.kind in self.stops.at and self.cancelled()) or (event.kind in self.stops.now and
                                                                  self.cancelled(now=True)):
            raise Cancelled("Cancelled by the user.")
        with self._lock:
            self.view.fold(event)
        if event.kind not in self.unwritten:
            self.writer.add(event.entry())

    def cancelled(self, *, now: bool = False) -> bool:
        """Whether the job was cancelled: from this process (:func:`cancel_here`) at once; else asked of the runtime at
        most every CANCEL_CHECK_SECONDS, or ``now``."""
        moment = time.monotonic()
        if self.job_id in CANCELLED:
            self._cancelled = True
        if not self._cancelled and (now or moment - self._checked >= CANCEL_CHECK_SECONDS):
            self._checked = moment
            try:
                self._cancelled = client.state(self.job_id, store_url()).status == "cancelled"
            except sa.exc.DBAPIError as exc:  # the database is away (a restart): the work goes on, asked again later
                if not self._unasked:
                    log.warning("Job %s could not ask whether it was cancelled (%s); it goes on and asks again",
                                self.job_id, str(exc).splitlines()[0])
                self._unasked = True
            else:
                self._unasked = False
        return self._cancelled

    def close(self) -> None:
        self.writer.flush()


def cancel_here(job_id: str) -> None:
    """Tell a step of ``job_id`` running in this process that its job was cancelled: it stops at its very next event
    rather than at the runtime's next check (the cancel itself goes through :func:`clearside.runtime.cancel`)."""
    if job_id in RUNNING:
        CANCELLED.add(job_id)


def store_url() -> str | None:
    """The store a step reads and writes, and whose runtime it reports to: the one this process hosts the runtime
    for (steps run on a host; None: the default store)."""
    running = host.current_host()
    return running.store_url if running is not None else None


def store() -> Store:
    """The store a step reads and writes (:func:`store_url`)."""
    return open_store(store_url())


def ended(exc: ClearSideError) -> dict[str, Any]:
    """How a job stopped by ``exc`` ended, as its workflow returns it: cancelled, or failed with the message in the
    dashboard's words (``error``), in the command line's (``message``) and its exit code."""
    if isinstance(exc, Cancelled):
        return {"status": "cancelled", "error": "Cancelled.", "message": str(exc), "exit_code": Cancelled.exit_code}
    return {"status": "failed", "error": exc.for_dashboard(), "message": str(exc), "exit_code": exc.exit_code}


def lend(job_id: str, provider: Provider) -> None:
    """Have a step of ``job_id`` run in this process use ``provider`` itself rather than one built from the recipe."""
    LOCAL_PROVIDERS[job_id] = provider


@contextmanager
def in_process(job_id: str) -> Iterator[None]:
    """A workflow running ``job_id`` in this process: in ``RUNNING`` meanwhile (:func:`wait_stopped`), and its
    local view and lent provider let go when it ends, however it ends."""
    with _local_lock:
        RUNNING.add(job_id)
    try:
        yield
    finally:
        with _local_lock:
            LOCAL.pop(job_id, None)
            RUNNING.discard(job_id)
            CANCELLED.discard(job_id)
        LOCAL_PROVIDERS.pop(job_id, None)


@contextmanager
def running(job_id: str) -> Iterator[None]:
    """Mark ``job_id`` as run by this process while the block runs (:func:`wait_stopped` waits for it)."""
    with _local_lock:
        RUNNING.add(job_id)
    try:
        yield
    finally:
        with _local_lock:
            RUNNING.discard(job_id)


def wait_stopped(job_id: str, timeout: float = 30) -> bool:
    """Wait until no execution in this process runs ``job_id`` (a cancelled step stops at its next token);
    False if one still does after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while job_id in RUNNING:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def carry_on(job_id: str | None, provider: Provider, *, here: bool, store_url: str | None,
             before_resume: Any = None) -> str | None:
    """Carry on a saved piece of work's latest job ``job_id``: its id when it is left to a host (under way there)
    or resumed from its last finished step (cancelled: ``before_resume()`` runs first); None when a new job must
    run it. ``here`` (a command, whose host serves no queue): only a job a live host runs is left to it, one still
    queued or interrupted is cancelled, and a cancelled one is not resumed (a new job runs in this process)."""
    if not job_id:
        return None
    try:
        current = client.state(job_id, store_url)
    except ClearSideError:
        return None
    if current.status in UNDER_WAY:
        if not here or current.status == "running":
            return job_id
        client.cancel(job_id, store_url)
    elif current.status == "cancelled" and not here:
        wait_stopped(job_id)  # never two executions of one job in this process
        lend(job_id, provider)
        if before_resume is not None:
            before_resume()
        client.resume(job_id, queue=queue_for(provider), store_url=store_url)
        return job_id
    return None
