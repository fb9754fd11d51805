"""The durable runtime: ClearSide's long work as DBOS workflows that survive crashes and spread over processes.

Two roles share one system database (the store's PostgreSQL in the schema ``clearside_jobs``, or the SQLite file
``jobs.db`` beside the store's file):

- a **host** (the dashboard, ``python -m clearside worker``) launches DBOS, runs every mode's workflows from the
  queues, and takes over the work of hosts that died: each host writes a heartbeat, and a host whose heartbeat is
  older than :data:`DEAD_AFTER` seconds has its unfinished workflows put back on a queue (DBOS recovers by executor
  id; the takeover is ours, since DBOS's own needs its hosted conductor). A command without ``--enqueue`` starts
  an **in-process host** (``serve=False``): it beats, so its work is not taken over while it runs, but it serves no
  queue and takes nobody's work over; it runs only what the command starts in it (:func:`clearside.runtime.start`);
- a **client** (``--enqueue``, ``status``, a page following a job that runs elsewhere) only reads and writes the
  system database (:mod:`clearside.runtime.client`).

Workflow code is pinned to :data:`APP_VERSION`: recovery and queues only take workflows of the version running.
DBOS is imported by the runtime and by the modules that define workflows (each mode's ``workflow.py``).

A database that goes away (a PostgreSQL restart) pauses a host rather than stopping it: DBOS retries its own
queries until the database is back, ClearSide's connections wait for it (:func:`system_engine`), and a host whose
own heartbeat was held up takes nobody's work over until the others have had :data:`DEAD_AFTER` seconds to beat
again (their heartbeats are as old as its own, and they are alive).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from dbos import DBOS
from sqlalchemy.engine import make_url

from ..errors import ClearSideError, ConfigError
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


def alive(url: str, executors: set[str]) -> set[str]:
    """Which of ``executors`` (hosts' executor ids) are alive: they beat within :data:`DEAD_AFTER` seconds, and a
    host on this machine still has its process (one that was killed is known dead at once)."""
    if not executors:
        return set()
    engine, table = _heartbeats(url)
    with engine.connect() as conn:
        return _living(conn, table, table.c.executor_id.in_(sorted(executors)))


def _living(conn: sa.Connection, table: sa.Table, *where: Any) -> set[str]:
    """The executor ids of ``table``'s rows (those ``where`` selects) that beat within :data:`DEAD_AFTER` seconds
    and, on this machine, still have their process: a host that was killed here is known dead at once."""
    rows = conn.execute(sa.select(table.c.executor_id, table.c.host, table.c.pid).where(
        table.c.heartbeat >= time.time() - DEAD_AFTER, *where)).all()
    here = _machine()
    return {r.executor_id for r in rows if r.host != here or r.pid is None or _running(r.pid)}


def _machine() -> str:
    """Where this process's ids mean something: the host name and the process-id namespace (two containers on one
    host name see different processes under one pid; a host elsewhere is judged by its heartbeat alone)."""
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return socket.gethostname()
    return f"{socket.gethostname()}#{namespace}"


def _running(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it runs, as another user
        return True
    return True


_engines: dict[str, sa.Engine] = {}
_engines_lock = threading.Lock()


def _heartbeats(url: str) -> tuple[sa.Engine, sa.Table]:
    """The heartbeat table of the system database ``url``, made once (a client may read it before any host ran)."""
    with _engines_lock:
        engine = _engines.get(url)
        if engine is None:
            engine = _engines[url] = system_engine(url)
            ensure_table(engine, _executor_table(_schema(url)))
    return engine, _executor_table(_schema(url))


class Host:
    """This process as a runtime host: DBOS launched, heartbeat written; with ``serve``, queues served and dead
    hosts taken over (without: an in-process host, running only what this process starts in it)."""

    def __init__(self, url: str, *, role: str, concurrency: int | None = None, serve: bool = True,
                 store_url: str | None = None) -> None:
        """``url``: the system database; ``store_url``: the store it serves (the steps it runs open that one)."""
        self.url, self.role, self.serve = url, role, serve
        self.store_url = database_url(store_url)
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
        if not serve:
            DBOS.listen_queues([])  # DBOS's own internal queue (recovered work) is still served
        DBOS.launch()
        if serve:
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
        row = {"executor_id": self.executor_id, "role": self.role, "host": _machine(), "pid": os.getpid(),
               "heartbeat": time.time()}
        with self._engine.begin() as conn:
            updated = conn.execute(self._table.update().where(self._table.c.executor_id == self.executor_id)
                                   .values(heartbeat=row["heartbeat"])).rowcount
            if not updated:
                conn.execute(self._table.insert().values(**row))

    def take_over(self) -> list[str]:
        """Put the unfinished workflows of every host that stopped beating (or, on this machine, whose process is
        gone) back on their queues; their ids."""
        with self._engine.begin() as conn:
            alive = _living(conn, self._table)
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
                if self.serve and now >= self._judge_after:
                    self.take_over()
            except Exception as exc:  # the database is unreachable: keep serving, try again next beat
                if not failing:
                    log.warning("Runtime heartbeat failed (%s); this host keeps its work and tries again every "
                                "%g s", str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__,
                                HEARTBEAT_SECONDS)
                failing = True

    def forget(self) -> None:
        """Stop beating and delete this host's heartbeat: the other hosts take its unfinished work over at their
        next beat instead of after :data:`DEAD_AFTER` seconds."""
        self._stop.set()
        # a beat in flight would write the row back after it is deleted, and the host would look alive for DEAD_AFTER
        self._thread.join(timeout=2 * HEARTBEAT_SECONDS)
        try:
            with self._engine.begin() as conn:
                conn.execute(self._table.delete().where(self._table.c.executor_id == self.executor_id))
        except sa.exc.SQLAlchemyError:
            pass

    def stop(self) -> None:
        self.forget()
        DBOS.destroy()
        self._engine.dispose()


_host: Host | None = None
_lock = threading.Lock()


def start_host(store_url: str | None = None, *, role: str = "host", concurrency: int | None = None,
               serve: bool = True) -> Host:
    """Make this process a runtime host for the store at ``store_url`` (once; again if the store changed, or to
    serve the queues when an in-process host ran here so far). ``serve=False``: an in-process host (a command
    without ``--enqueue``); a serving host already here does that too. The workflows must be defined first:
    :func:`clearside.modes.host` imports them and calls this."""
    global _host
    url = system_url(store_url)
    with _lock:
        if _host is not None and _host.url == url and (_host.serve or not serve):
            return _host
        if _host is not None:
            _host.stop()
            _host = None
        try:
            _host = Host(url, role=role, concurrency=concurrency, serve=serve, store_url=store_url)
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
    with _engines_lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()
    for closer in _on_reset:
        closer()


def exit_with_main_thread() -> None:
    """End this process as soon as its main thread ends (the dashboard stopped by SIGTERM or Ctrl+C), without
    waiting for running workflows: their threads are not daemons (Python would wait for each to finish), and the
    next host takes their work over anyway (:meth:`Host.take_over`), as it does a worker's. The final garbage
    collection of a large heap is skipped too. Call it once the process hosts (the dashboard does); the exit
    status is 0, the status of a server stopped on request.

    The hook is the one :mod:`concurrent.futures` uses to stop its pools (``threading._register_atexit``: it runs
    when the main thread ends, before Python joins the other threads; ``atexit`` runs only after)."""
    global _exit_hooked
    with _lock:
        if not _exit_hooked:
            threading._register_atexit(_exit_now)  # type: ignore[attr-defined]
            _exit_hooked = True


_exit_hooked = False
FORGET_SECONDS = 3.0  # how long a stopping host tries to delete its heartbeat
STOP_GRACE_SECONDS = 5.0  # how long a server that began to stop may take to end its main thread


def exit_after_stop(stopping: Callable[[], bool], grace: float = STOP_GRACE_SECONDS, poll: float = 0.5) -> None:
    """End this process ``grace`` seconds after ``stopping()`` first says the server is stopping, should its main
    thread not have ended it by then (:func:`exit_with_main_thread`). A server's shutdown may wait without a limit:
    the dashboard's web server waits for every open connection to close, and one that never does kept a stopped
    dashboard running for over a minute. A daemon thread watches; call it once per process."""
    def watch() -> None:
        while not stopping():
            time.sleep(poll)
        time.sleep(grace)
        log.warning("Still running %.0f s after it began to stop: ending now", grace)
        _exit_now()

    global _watching
    with _lock:
        if not _watching:
            threading.Thread(target=watch, name="clearside-stop-watch", daemon=True).start()
            _watching = True


_watching = False


def _exit_now() -> None:
    host = _host
    if host is not None:
        log.info("Runtime host %s stopping: its unfinished work is taken over by the next host", host.executor_id)
        # its heartbeat goes, so that takes a beat, not DEAD_AFTER; a database that is away is not waited for
        with contextlib.suppress(RuntimeError):
            forgetting = threading.Thread(target=host.forget, name="clearside-forget", daemon=True)
            forgetting.start()
            forgetting.join(FORGET_SECONDS)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


__all__ = ["APP_VERSION", "BATCH_QUEUE", "DEAD_AFTER", "Host", "LIVE_QUEUE", "LOCAL_QUEUE", "SERVER_QUEUE", "alive",
           "current_host", "exit_after_stop", "exit_with_main_thread", "on_reset", "reset", "start_host", "stop_host",
           "system_engine", "system_url"]
