"""The one job contract every mode's jobs keep, and the one status vocabulary their snapshots speak.

A job is what a page (or a command) holds while work runs on the runtime: a static debate, a challenge or a
re-map of one, a live debate, a perspectives session, a regression batch, a model comparison. Every kind keeps
:class:`Job`: ``start`` it, ``cancel`` it (what finished stays saved), ``retry`` it (carry on from what is saved),
``wait`` for it and read its ``snapshot`` -- a consistent copy that says where it stands in one word of
:data:`STATUSES`, the same word for the same thing in every mode:

- ``queued``: on a queue, no host has taken it yet;
- ``running``: a host runs it;
- ``interrupted``: the host that ran it stopped, and no other host has taken it over yet (one will);
- ``waiting``: it waits for the person: a live debate in step mode between steps, a perspectives session for the
  answers to its clarifying questions;
- ``pausing``: the person asked for a pause, and the turn in flight stops within half a second (live);
- ``paused``: the person paused it mid-work, and resumes it when they like (live);
- ``cancelled``: Cancel stopped it; what finished is kept, and Retry (Resume) carries on from there;
- ``done`` and ``failed``.

:class:`JobRegistry` keeps a server's jobs by id and kind, so a rerun or a page switch re-attaches to the same one.
Nothing here imports Streamlit or DBOS.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar, Literal, Protocol, Self, runtime_checkable

Status = Literal["queued", "running", "interrupted", "waiting", "pausing", "paused", "done", "failed", "cancelled"]
STATUSES: tuple[Status, ...] = ("queued", "running", "interrupted", "waiting", "pausing", "paused", "done", "failed",
                                "cancelled")
FINISHED: tuple[Status, ...] = ("done", "failed", "cancelled")
UNDER_WAY: tuple[Status, ...] = ("queued", "running", "interrupted")  # a host has the job, or one will take it


class Snapshot(Protocol):
    """What every job's snapshot exposes (each mode adds its own content: a document, a transcript, a report)."""

    @property
    def status(self) -> Status: ...

    @property
    def error(self) -> str: ...

    @property
    def finished(self) -> bool: ...


@runtime_checkable
class Job(Protocol):
    """A unit of work on the runtime as a page or a command holds it (see the module's docstring)."""

    kind: ClassVar[str]  # its kind in the mode registry (clearside.modes.JOB_KINDS)
    id: str

    def start(self) -> Self: ...

    def cancel(self) -> None: ...

    def retry(self) -> Self: ...

    def wait(self, timeout: float | None = None) -> Any: ...

    def snapshot(self) -> Any: ...


class JobRegistry:
    """Process-wide jobs by id, so a rerun or a page switch re-attaches to the same job; a page asks for the kind
    it shows (``get(id, "live")``) and gets None for a job of another kind under that id."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def add(self, job: Job) -> Job:
        with self._lock:
            self._jobs[job.id] = job
        return job

    def get(self, job_id: str | None, kind: str | tuple[str, ...]) -> Any:
        kinds = (kind,) if isinstance(kind, str) else kind
        with self._lock:
            job = self._jobs.get(job_id) if job_id else None
        return job if job is not None and job.kind in kinds else None
