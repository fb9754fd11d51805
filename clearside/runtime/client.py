"""The runtime as any process sees it: queue a job, start one here, read its state, cancel, resume, message it.

Every job's state is one of the words of :data:`clearside.runtime.jobs.STATUSES`, read from the system database:
a workflow DBOS runs is ``running`` while its host beats and ``interrupted`` once that host has stopped beating
(:data:`~clearside.runtime.host.DEAD_AFTER`) and no other host has taken it over yet; a workflow that ended the job
itself (a cancel noticed by its step) says so in its result. Nothing here guesses from how old a saved row is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from dbos import DBOS, DBOSClient, SetWorkflowID, WorkflowStatus
from dbos._error import DBOSNonExistentWorkflowError  # the one error DBOS raises for an unknown id
from sqlalchemy.engine import make_url

from ..errors import ConfigError, NotFound
from ..inputs import shown
from . import host
from .jobs import FINISHED, STATUSES

_DBOS_STATUS = {"ENQUEUED": "queued", "DELAYED": "queued", "PENDING": "running", "SUCCESS": "done",
                "ERROR": "failed", "CANCELLED": "cancelled", "MAX_RECOVERY_ATTEMPTS_EXCEEDED": "failed"}
WAIT_POLL_SECONDS = 0.1


@dataclass(frozen=True)
class JobState:
    """Where a job stands: ``status`` is one of :data:`STATUSES`; ``result`` what its workflow returned."""

    id: str
    status: str
    name: str = ""
    error: str = ""
    result: Any = None
    executor: str = ""
    created_at: float = 0.0  # when it was queued (seconds since the epoch; 0: not known)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


def job_state(status: WorkflowStatus, alive: set[str] | None = None) -> JobState:
    """A workflow's state in ClearSide's words; ``alive``: the executors known to beat (a pending workflow of
    another is ``interrupted``; None: not asked, ``running``)."""
    word = _DBOS_STATUS.get(status.status, "running")
    result = status.output if isinstance(status.output, dict) else None
    if word == "done" and result and result.get("status") in STATUSES:  # the workflow ended the job itself
        word = result["status"]
    if word == "running" and alive is not None and status.executor_id not in alive:
        word = "interrupted"
    error = (result or {}).get("error", "") or (str(status.error) if status.error else "")
    return JobState(id=status.workflow_id, status=word, name=status.name or "", error=error, result=result,
                    executor=status.executor_id or "", created_at=(status.created_at or 0) / 1000)


_clients: dict[str, DBOSClient] = {}
_lock = threading.Lock()


def _close() -> None:
    with _lock:
        for made in _clients.values():
            made.destroy()
        _clients.clear()


host.on_reset(_close)


def dbos_client(store_url: str | None = None) -> DBOSClient:
    """A client of the system database for the store at ``store_url``; creates its tables on first use."""
    url = host.system_url(store_url)
    with _lock:
        existing = _clients.get(url)
        if existing is not None:
            return existing
        schema = host.SCHEMA if make_url(url).get_backend_name() == "postgresql" else None
        try:
            DBOS.migrate(url, schema=schema or "dbos")
            made = DBOSClient(system_database_url=url, dbos_system_schema=schema or "dbos",
                              application_name=host.APP)
        except Exception as exc:
            raise ConfigError(f"Cannot reach the job runtime's database {make_url(url).render_as_string(True)}: "
                              f"{exc}. Check DATABASE_URL or the data folder.") from exc
        _clients[url] = made
        return made


def enqueue(workflow: str, *args: Any, job_id: str, queue: str, store_url: str | None = None) -> str:
    """Queue the workflow named ``workflow`` under ``job_id`` for any host to run; returns the id at once."""
    dbos_client(store_url).enqueue({"workflow_name": workflow, "queue_name": queue, "workflow_id": job_id,
                               "app_version": host.APP_VERSION, "application_name": host.APP}, *args)
    return job_id


def start(workflow: Callable[..., Any], *args: Any, job_id: str) -> str:
    """Run ``workflow(*args)`` under ``job_id`` in this process now, on this process's host (a command without
    ``--enqueue`` started one: :func:`clearside.modes.host`); returns the id at once."""
    if host.current_host() is None:
        raise ConfigError("This process is not a runtime host: start one first (clearside.modes.host).")
    with SetWorkflowID(job_id):
        DBOS.start_workflow(workflow, *args)
    return job_id


def state(job_id: str, store_url: str | None = None) -> JobState:
    """The job's state; raises NotFound for an id the runtime never ran."""
    try:
        status = dbos_client(store_url).retrieve_workflow(job_id).get_status()
    except DBOSNonExistentWorkflowError:
        raise NotFound(f"No job '{shown(job_id)}': check the id (`python -m clearside list` shows saved "
                       "debates).") from None
    return _read([status], store_url)[0]


def states(job_ids: Iterable[str], store_url: str | None = None) -> dict[str, JobState]:
    """The states of the jobs the runtime knows among ``job_ids``, by id, in two queries (a page of the Library)."""
    wanted = sorted(set(job_ids))
    if not wanted:
        return {}
    found = dbos_client(store_url).list_workflows(workflow_ids=wanted, load_input=False)
    return {s.id: s for s in _read(found, store_url)}


def _read(statuses: list[WorkflowStatus], store_url: str | None) -> list[JobState]:
    pending = {s.executor_id for s in statuses if s.status == "PENDING" and s.executor_id}
    alive = host.alive(host.system_url(store_url), pending) if pending else set()
    return [job_state(s, alive) for s in statuses]


def wait(job_id: str, timeout: float | None = None, store_url: str | None = None) -> JobState:
    """Block until the job ends (or ``timeout`` seconds pass); its state."""
    deadline = None if timeout is None else time.monotonic() + timeout
    now = state(job_id, store_url)
    while not now.finished and (deadline is None or time.monotonic() < deadline):
        time.sleep(WAIT_POLL_SECONDS)
        now = state(job_id, store_url)
    return now


def cancel(job_id: str, store_url: str | None = None) -> None:
    dbos_client(store_url).cancel_workflow(job_id)


def resume(job_id: str, *, queue: str, store_url: str | None = None) -> None:
    """Run a cancelled job again from its last finished step, on ``queue``."""
    dbos_client(store_url).resume_workflow(job_id, queue_name=queue)


def recover(job_id: str, store_url: str | None = None) -> bool:
    """Take an ``interrupted`` job over now rather than after the next host's heartbeat: the work of the host that
    ran it goes back on a queue, from its last finished step. Whether the job was interrupted."""
    now = state(job_id, store_url)
    if now.status != "interrupted":
        return False
    DBOS._recover_pending_workflows([now.executor])  # noqa: SLF001 - the host's takeover does the same
    return True


def send(job_id: str, message: Any, *, topic: str, store_url: str | None = None) -> None:
    dbos_client(store_url).send(job_id, message, topic)
