"""The durable runtime: ClearSide's long work as DBOS workflows that survive crashes and spread over processes.

Two roles share one system database (the store's PostgreSQL in the schema ``clearside_jobs``, or the SQLite file
``jobs.db`` beside the store's file):

- a **host** (the dashboard, ``python -m clearside worker``) launches DBOS, runs the workflows of
  :mod:`clearside.workflows` from the queues, and takes over the work of hosts that died: each host writes a
  heartbeat, and a host whose heartbeat is older than :data:`DEAD_AFTER` seconds has its unfinished workflows
  put back on their queues (DBOS recovers by executor id; the takeover is ours, since DBOS's own needs its
  hosted conductor);
- a **client** (``--enqueue``, ``status``, a page following a job that runs elsewhere) only reads and writes the
  system database through :class:`dbos.DBOSClient`.

Workflow code is pinned to :data:`APP_VERSION`: recovery and queues only take workflows of the version running.
Only this module and :mod:`clearside.workflows` import DBOS.

A database that goes away (a PostgreSQL restart) pauses a host rather than stopping it: DBOS retries its own
queries until the database is back, ClearSide's connections wait for it (:func:`system_engine`), and a host whose
own heartbeat was held up takes nobody's work over until the others have had :data:`DEAD_AFTER` seconds to beat
again (their heartbeats are as old as its own, and they are alive).
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from dbos import DBOS, DBOSClient, WorkflowStatus
from dbos._error import DBOSNonExistentWorkflowError  # the one error DBOS raises for an unknown id
from sqlalchemy.engine import make_url

from ..errors import ClearSideError, ConfigError, NotFound
from ..inputs import shown
from ..store.db import data_dir, database_url, ensure_table, reconnecting

log = logging.getLogger("clearside.runtime")

APP = "clearside"
SCHEMA = "clearside_jobs"
WORKFLOW_VERSION = "1"  # raise when a workflow's steps change order: older unfinished runs then stay with their version
APP_VERSION = f"clearside-workflows-{WORKFLOW_VERSION}"
LOCAL_QUEUE = "clearside-local"  # jobs on an in-process model: one at a time per host, since the model is one
SERVER_QUEUE = "clearside"  # jobs on model servers: several per host (the provider's endpoint limit still holds)
SERVER_CONCURRENCY = 4
# batches (a regression suite): a parent that queues its items on the queues above and waits for them; it makes
# no model call itself, so a host takes any number (a limit here could leave every slot to waiting parents)
BATCH_QUEUE = "clearside-batches"
# work that mostly waits for a person (a live debate): no per-host limit, since on the in-process model's queue (one
# job per host) a paused one would hold every other job back; the model's own lock (or a server's endpoint limit)
# still orders the calls
LIVE_QUEUE = "clearside-live"
HEARTBEAT_SECONDS = float(os.environ.get("CLEARSIDE_HEARTBEAT_SECONDS", 5))
DEAD_AFTER = float(os.environ.get("CLEARSIDE_DEAD_AFTER_SECONDS", 20))
POLL_SECONDS = 0.05  # how often a waiting host looks at queues, streams and messages (SQLite has no notify)

# One status word for every job, whatever its mode.
STATUSES = ("queued", "running", "paused", "done", "failed", "cancelled")
_DBOS_STATUS = {"ENQUEUED": "queued", "DELAYED": "queued", "PENDING": "running", "SUCCESS": "done",
                "ERROR": "failed", "CANCELLED": "cancelled", "MAX_RECOVERY_ATTEMPTS_EXCEEDED": "failed"}

_executors = sa.MetaData()


def _executor_table(schema: str | None) -> sa.Table:
    name = "clearside_executors"
    key = f"{schema}.{name}" if schema else name
    if key in _executors.tables:
        return _executors.tables[key]
    return sa.Table(name, _executors, sa.Column("executor_id", sa.String(120), primary_key=True),
                    sa.Column("role", sa.String(40), nullable=False), sa.Column("host", sa.String(200)),
                    sa.Column("pid", sa.Integer), sa.Column("heartbeat", sa.Float, nullable=False), schema=schema)


def system_url(store_url: str | None = None) -> str:
    """The system database for the store at ``store_url`` (default: ``DATABASE_URL`` or the SQLite file)."""
    url = database_url(store_url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        return url
    if parsed.get_backend_name() != "sqlite":
        raise ConfigError(f"The job runtime needs PostgreSQL or SQLite; DATABASE_URL names {parsed.drivername}.")
    database = parsed.database or ""
    folder = os.path.dirname(os.path.abspath(database)) if database and database != ":memory:" else str(data_dir())
    os.makedirs(folder, exist_ok=True)
    return f"sqlite:///{os.path.join(folder, 'jobs.db')}"


def _schema(url: str) -> str | None:
    return SCHEMA if make_url(url).get_backend_name() == "postgresql" else None


def system_engine(url: str) -> sa.Engine:
    """An engine on the system database ``url`` for ClearSide's own tables (heartbeats, progress rows): each
    connection is checked before use, and on PostgreSQL a server that restarts is waited for (see
    :func:`clearside.store.db.reconnecting`)."""
    engine = sa.create_engine(url, pool_pre_ping=True)
    return reconnecting(engine) if engine.dialect.name == "postgresql" else engine


@dataclass(frozen=True)
class JobState:
    """Where a job stands: ``status`` is one of :data:`STATUSES`; ``result`` what its workflow returned."""

    id: str
    status: str
    name: str = ""
    error: str = ""
    result: Any = None
    executor: str = ""

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed", "cancelled")


def job_state(status: WorkflowStatus) -> JobState:
    word = _DBOS_STATUS.get(status.status, "running")
    result = status.output if isinstance(status.output, dict) else None
    if word == "done" and result and result.get("status") in STATUSES:  # the workflow ended the job itself
        word = result["status"]
    error = (result or {}).get("error", "") or (str(status.error) if status.error else "")
    return JobState(id=status.workflow_id, status=word, name=status.name or "", error=error, result=result,
                    executor=status.executor_id or "")


class Host:
    """This process as a runtime host: DBOS launched, queues served, heartbeat written, dead hosts taken over."""

    def __init__(self, url: str, *, role: str, concurrency: int | None = None) -> None:
        self.url, self.role = url, role
        self.schema = _schema(url)
        self.executor_id = f"{role}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._stop = threading.Event()
        self._engine = system_engine(url)
        self._table = _executor_table(self.schema)
        config: dict[str, Any] = {
            "name": APP, "system_database_url": url, "application_version": APP_VERSION,
            "executor_id": self.executor_id,
            "notification_listener_polling_interval_sec": POLL_SECONDS,
            "max_executor_threads": 64, "log_level": os.environ.get("CLEARSIDE_RUNTIME_LOG", "WARNING"),
        }
        if self.schema:
            config["dbos_system_schema"] = self.schema
        DBOS(config=config)  # type: ignore[arg-type]
        DBOS.launch()
        self._register_queues(concurrency)
        ensure_table(self._engine, self._table)
        self.beat()
        self._last_beat = time.time()  # the last heartbeat written; a beat missed since...
        self._judge_after = 0.0  # ...holds takeovers back until then
        self._thread = threading.Thread(target=self._loop, name="clearside-heartbeat", daemon=True)
        self._thread.start()

    @staticmethod
    def _register_queues(concurrency: int | None) -> None:
        DBOS.register_queue(LOCAL_QUEUE, worker_concurrency=1, polling_interval_sec=0.2, on_conflict="always_update")
        # The server queue's per-host limit is one setting for every host (DBOS keeps it with the queue):
        # a worker started with --concurrency sets it; other hosts keep what is there.
        DBOS.register_queue(SERVER_QUEUE, worker_concurrency=concurrency or SERVER_CONCURRENCY,
                            polling_interval_sec=0.2,
                            on_conflict="always_update" if concurrency else "never_update")
        DBOS.register_queue(BATCH_QUEUE, polling_interval_sec=0.2, on_conflict="always_update")
        DBOS.register_queue(LIVE_QUEUE, polling_interval_sec=0.2, on_conflict="always_update")

    def beat(self) -> None:
        row = {"executor_id": self.executor_id, "role": self.role, "host": socket.gethostname(), "pid": os.getpid(),
               "heartbeat": time.time()}
        with self._engine.begin() as conn:
            updated = conn.execute(self._table.update().where(self._table.c.executor_id == self.executor_id)
                                   .values(heartbeat=row["heartbeat"])).rowcount
            if not updated:
                conn.execute(self._table.insert().values(**row))

    def take_over(self) -> list[str]:
        """Put the unfinished workflows of every host that stopped beating back on their queues; their ids."""
        cutoff = time.time() - DEAD_AFTER
        with self._engine.begin() as conn:
            alive = {r.executor_id for r in conn.execute(sa.select(self._table.c.executor_id)
                                                         .where(self._table.c.heartbeat >= cutoff))}
        pending = DBOS.list_workflows(status="PENDING", app_version=APP_VERSION, load_input=False, load_output=False)
        dead = sorted({w.executor_id for w in pending if w.executor_id and w.executor_id not in alive}
                      - {self.executor_id})
        if not dead:
            return []
        taken = [handle.get_workflow_id() for handle in DBOS._recover_pending_workflows(dead)]  # noqa: SLF001
        with self._engine.begin() as conn:
            conn.execute(self._table.delete().where(self._table.c.executor_id.in_(dead)))
        if taken:
            log.warning("Took over %d job(s) of stopped host(s) %s", len(taken), ", ".join(dead))
        return taken

    def _loop(self) -> None:
        failing = False
        while not self._stop.wait(HEARTBEAT_SECONDS):
            try:
                self.beat()
                now = time.time()
                if now - self._last_beat > 2 * HEARTBEAT_SECONDS:
                    # this host missed a beat (the database was away): so did the others, whose heartbeats are now
                    # older by the outage; give them DEAD_AFTER to beat again before judging any of them dead
                    self._judge_after = now + DEAD_AFTER
                    log.warning("Runtime heartbeat held up for %.0f s (the database was unreachable or slow); "
                                "taking over no other host's work for %.0f s, while the others beat again",
                                now - self._last_beat, DEAD_AFTER)
                self._last_beat = now
                if failing:
                    log.warning("Runtime heartbeat: the database is reachable again")
                    failing = False
                if now >= self._judge_after:
                    self.take_over()
            except Exception as exc:  # the database is unreachable: keep serving, try again next beat
                if not failing:
                    log.warning("Runtime heartbeat failed (%s); this host keeps its work and tries again every "
                                "%g s", str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__,
                                HEARTBEAT_SECONDS)
                failing = True

    def stop(self) -> None:
        self._stop.set()
        try:
            with self._engine.begin() as conn:
                conn.execute(self._table.delete().where(self._table.c.executor_id == self.executor_id))
        except sa.exc.SQLAlchemyError:
            pass
        DBOS.destroy()
        self._engine.dispose()


_host: Host | None = None
_clients: dict[str, DBOSClient] = {}
_lock = threading.Lock()


def start_host(store_url: str | None = None, *, role: str = "host", concurrency: int | None = None) -> Host:
    """Make this process a runtime host for the store at ``store_url`` (once; again if the store changed).
    The workflows must be defined first: :func:`clearside.modes.host` imports them and calls this."""
    global _host
    url = system_url(store_url)
    with _lock:
        if _host is not None and _host.url == url:
            return _host
        if _host is not None:
            _host.stop()
            _host = None
        try:
            _host = Host(url, role=role, concurrency=concurrency)
        except ClearSideError:
            raise
        except Exception as exc:
            raise ConfigError(f"Cannot start the job runtime on {make_url(url).render_as_string(True)}: {exc}. "
                              "Check DATABASE_URL (PostgreSQL must be reachable) or the data folder.") from exc
        return _host


def current_host() -> Host | None:
    return _host


def stop_host() -> None:
    global _host
    with _lock:
        if _host is not None:
            _host.stop()
            _host = None


_on_reset: list[Callable[[], None]] = []


def on_reset(closer: Callable[[], None]) -> None:
    """Have :func:`reset` call ``closer`` too (a module keeping its own connections to the system database)."""
    _on_reset.append(closer)


def reset() -> None:
    """Stop hosting and close every connection to the runtime's databases (tests; a store switched)."""
    stop_host()
    with _lock:
        for made in _clients.values():
            made.destroy()
        _clients.clear()
    for closer in _on_reset:
        closer()


def client(store_url: str | None = None) -> DBOSClient:
    """A client of the system database for the store at ``store_url``; creates its tables on first use."""
    url = system_url(store_url)
    with _lock:
        existing = _clients.get(url)
        if existing is not None:
            return existing
        schema = _schema(url)
        try:
            DBOS.migrate(url, schema=schema or "dbos")
            made = DBOSClient(system_database_url=url, dbos_system_schema=schema or "dbos", application_name=APP)
        except Exception as exc:
            raise ConfigError(f"Cannot reach the job runtime's database {make_url(url).render_as_string(True)}: "
                              f"{exc}. Check DATABASE_URL or the data folder.") from exc
        _clients[url] = made
        return made


def enqueue(workflow: str, *args: Any, job_id: str, queue: str, store_url: str | None = None) -> str:
    """Queue the workflow named ``workflow`` under ``job_id`` for any host to run; returns the id at once."""
    client(store_url).enqueue({"workflow_name": workflow, "queue_name": queue, "workflow_id": job_id,
                               "app_version": APP_VERSION, "application_name": APP}, *args)
    return job_id


def state(job_id: str, store_url: str | None = None) -> JobState:
    """The job's state; raises NotFound for an id the runtime never ran."""
    try:
        status = client(store_url).retrieve_workflow(job_id).get_status()
    except DBOSNonExistentWorkflowError:
        raise NotFound(f"No job '{shown(job_id)}': check the id (`python -m clearside list` shows saved "
                       "debates).") from None
    return job_state(status)


def cancel(job_id: str, store_url: str | None = None) -> None:
    client(store_url).cancel_workflow(job_id)


def resume(job_id: str, *, queue: str, store_url: str | None = None) -> None:
    """Run a cancelled job again from its last finished step, on ``queue``."""
    client(store_url).resume_workflow(job_id, queue_name=queue)


def send(job_id: str, message: Any, *, topic: str, store_url: str | None = None) -> None:
    client(store_url).send(job_id, message, topic)


def exit_fast() -> None:
    """Make interpreter exit immediate while a workflow runs (its threads are not daemons): the workflow is
    recovered by the next host, so waiting for it would only hold the process open."""
    atexit.register(lambda: os._exit(0) if _host is not None else None)


__all__ = ["APP_VERSION", "BATCH_QUEUE", "DEAD_AFTER", "Host", "JobState", "LIVE_QUEUE", "LOCAL_QUEUE", "SERVER_QUEUE",
           "STATUSES", "cancel", "client", "current_host", "enqueue", "job_state", "reset", "resume", "send",
           "start_host", "state", "stop_host", "system_engine", "system_url"]
