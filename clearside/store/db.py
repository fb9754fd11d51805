"""Connecting to the store: which database, its engine settings, and migrating it to the latest version.

``DATABASE_URL`` chooses PostgreSQL (``postgresql+psycopg://user:pw@host/db``; plain
``postgres://`` and ``postgresql://`` are read as psycopg 3). Without it the store is
the SQLite file ``$CLEARSIDE_DATA/clearside.db`` (default ``~/.clearside``), opened
with WAL, a busy timeout and foreign keys on every connection. SQLite transactions
use SQLAlchemy's documented recipe (driver autocommit plus an explicit ``BEGIN``),
so a transaction really is one; writes take the lock up front (``BEGIN IMMEDIATE``)
so two writers queue instead of failing. Migrations are Alembic scripts, applied on
open (a database already current is only read, so a read-only store still opens for reading); a PostgreSQL
advisory lock keeps two processes from migrating at once.

Faults: a PostgreSQL server that answered once and then went away (a restart, a failover) is waited for, up to
``CLEARSIDE_DB_WAIT_SECONDS`` (default 30), each time a connection is made, so a restart pauses work instead of
failing it; one that never answered fails at once. :func:`fault` turns what the database refused into a
:class:`~clearside.errors.StoreError` that names the database file (never a password), the cause (read-only,
disk full, server unreachable) and the fix.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, Table, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, DisconnectionError, OperationalError, SQLAlchemyError
from sqlalchemy.schema import CreateSchema, CreateTable

from ..errors import StoreError
from ..paths import data_dir

log = logging.getLogger("clearside.store")

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
BUSY_TIMEOUT_MS = 10_000
WRITE = "clearside_write"  # execution option: this transaction writes (SQLite: BEGIN IMMEDIATE)
FULL_BYTES = 1 << 20  # less free space than this on the store's disk, and a failed write is "the disk is full"


def wait_seconds() -> float:
    """How long a connection waits for a PostgreSQL server that went away (``CLEARSIDE_DB_WAIT_SECONDS``)."""
    try:
        return max(0.0, float(os.environ.get("CLEARSIDE_DB_WAIT_SECONDS", 30)))
    except ValueError:
        return 30.0


def database_url(url: str | None = None) -> str:
    """The URL in use: the argument, else ``DATABASE_URL``, else the SQLite file in the data folder."""
    url = (url or os.environ.get("DATABASE_URL", "")).strip()
    if not url:
        return f"sqlite:///{data_dir() / 'clearside.db'}"
    for plain in ("postgres://", "postgresql://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain):]
    return url


def safe_url(url: str) -> str:
    """The URL with any password masked, for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable URL>"


def _sqlite_setup(engine: Engine, path: Path | None) -> None:
    def writable() -> bool:
        return path is None or not path.exists() or os.access(path, os.W_OK)

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, record) -> None:
        dbapi_connection.isolation_level = None  # the driver stops managing transactions; "begin" below does
        # SQLite opens a file it may not write read-only, and the connection stays so
        record.info["read_only"] = not writable()
        cursor = dbapi_connection.cursor()
        for pragma in ("journal_mode=WAL", f"busy_timeout={BUSY_TIMEOUT_MS}", "foreign_keys=ON",
                       "synchronous=NORMAL"):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "checkout")
    def _checkout(_dbapi_connection, record, _proxy) -> None:
        if record.info.get("read_only") and writable():  # the file was made writable again: a fresh connection
            raise DisconnectionError(f"{path} is writable again")

    @event.listens_for(engine, "begin")
    def _begin(connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE" if connection.get_execution_options().get(WRITE) else "BEGIN")


def _server_gone(exc: Exception) -> bool:
    """A connection attempt refused because the server is down, starting, stopping or out of slots (not a wrong
    password or database name, which waiting does not fix)."""
    state = getattr(exc, "sqlstate", None) or ""
    return not state or state.startswith(("08", "57P", "53"))


def reconnecting(engine: Engine, seconds: float | None = None) -> Engine:
    """Make ``engine`` (PostgreSQL) wait for a server it reached once and then lost: each new connection is tried
    again, with backoff, for up to ``seconds`` (default :func:`wait_seconds`) before the error is raised. The pool
    checks a connection before lending it (``pool_pre_ping``), so a restart's dead connections are replaced by
    these. A server never reached fails at once: a wrong URL is not worth waiting for."""
    reached = [False]

    @event.listens_for(engine, "do_connect")
    def _connect(dialect, _record, cargs, cparams):
        deadline = None
        pause = 0.1
        while True:
            try:
                connection = dialect.loaded_dbapi.connect(*cargs, **cparams)
            except dialect.loaded_dbapi.OperationalError as exc:
                limit = wait_seconds() if seconds is None else seconds
                if not reached[0] or not limit or not _server_gone(exc):
                    raise
                now = time.monotonic()
                if deadline is None:
                    deadline = now + limit
                    log.warning("The database at %s is unreachable (%s); waiting up to %g s for it to come back",
                                safe_url(str(engine.url)), str(exc).splitlines()[0], limit)
                if now >= deadline:
                    raise
                time.sleep(min(pause, max(deadline - now, 0.01)))
                pause = min(pause * 2, 1.0)
                continue
            if deadline is not None:
                log.warning("The database at %s is back", safe_url(str(engine.url)))
            reached[0] = True
            return connection

    return engine


def _sqlite_file(url: str) -> Path | None:
    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:" \
            or parsed.database.startswith("file:"):
        return None
    return Path(parsed.database).expanduser().resolve()


def _free_bytes(folder: Path) -> int | None:
    try:
        stat = os.statvfs(folder)
    except OSError:
        return None
    return (stat.f_bfree if os.geteuid() == 0 else stat.f_bavail) * stat.f_frsize


def _read_only_folder(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _sqlite_fault(path: Path, code: str, first: str, action: str) -> tuple[str, str] | None:
    """The cause and the fix of a SQLite error on the file ``path``, or None when it is none of these faults."""
    folder = path.parent
    name = path.name
    free = _free_bytes(folder)
    low = free is not None and free < FULL_BYTES
    if code.startswith("SQLITE_FULL") or "database or disk is full" in first or (
            low and (code.startswith(("SQLITE_IOERR", "SQLITE_CANTOPEN")) or "disk I/O error" in first
                     or "unable to open" in first)):
        room = "free space unknown" if free is None else f"{free / 2**20:.1f} MB free" if free >= FULL_BYTES \
            else f"{free // 1024} KB free"
        cause = (f"the disk holding it is full ({room})" if low else
                 f"the database file cannot grow: SQLite says the database or disk is full ({room} on its disk)")
        return cause, (f"free some space on that disk (or set CLEARSIDE_DATA to a folder on a larger one), then "
                       f"{action} again")
    read_only = code.startswith("SQLITE_READONLY") or "readonly database" in first
    cannot_open = code.startswith("SQLITE_CANTOPEN") or "unable to open database file" in first
    if not (read_only or cannot_open):
        if code.startswith("SQLITE_IOERR") or "disk I/O error" in first:
            return (f"the disk reported an I/O error ({first})",
                    f"check the disk (free space, `dmesg`), then {action} again")
        return None
    if _read_only_folder(folder):
        return ("its file system is mounted read-only", f"remount it read-write (or set CLEARSIDE_DATA to a "
                f"writable folder), then {action} again")
    if path.exists() and not os.access(path, os.W_OK):
        return ("the file is read-only (no write permission for this user, or marked immutable)",
                f"make it writable (`chmod u+w {path}`; `chattr -i {path}` if it was made immutable), then "
                f"{action} again")
    if not os.access(folder, os.W_OK):
        return (f"its folder {folder} is read-only (SQLite also writes {name}-wal and {name}-shm beside the file)",
                f"make the folder writable (`chmod u+w {folder}`), then {action} again")
    if cannot_open:
        return ("SQLite cannot open it (a missing folder, or a file that is not a database)",
                f"check the path and its permissions (or set CLEARSIDE_DATA to a writable folder), then {action} "
                "again")
    return ("SQLite reports it read-only", f"make the file and its folder writable, then {action} again")


def fault(url: str, exc: BaseException, *, doing: str = "save to", action: str = "try") -> StoreError:
    """What the database refused, as a StoreError naming the database (its file, or its URL without the
    password), the cause and the fix; ``doing``: "save to", "read" or "open"."""
    orig = getattr(exc, "orig", None) or exc
    first = (str(orig).strip().splitlines() or [exc.__class__.__name__])[0]
    unchanged = ("Nothing from this change was written, and the debates saved before are unchanged."
                 if doing != "read" else "Nothing was changed.")
    path = _sqlite_file(url)
    found: tuple[str, str] | None = None
    if path is not None:
        where = str(path)
        found = _sqlite_fault(path, getattr(orig, "sqlite_errorname", "") or "", first, action)
    else:
        where = f"at {safe_url(url)}"
        if getattr(orig, "sqlstate", None) == "53100":
            found = (f"the PostgreSQL server's disk is full ({first})",
                     f"free space on the database server, then {action} again")
        elif isinstance(exc, DBAPIError) and (exc.connection_invalidated or (
                isinstance(exc, OperationalError) and _server_gone(orig))):
            found = (f"the database server is unreachable or was restarted ({first})",
                     f"check that the server is running and reachable, then {action} again (a server that restarts "
                     f"is waited for, up to {wait_seconds():g} s: CLEARSIDE_DB_WAIT_SECONDS)")
    if found is None:
        return StoreError(f"Cannot {doing} the debate store {where}: {first}. {unchanged} Fix: {action} again; "
                          "if it keeps failing, check the database.")
    cause, fix = found
    what = f"Cannot {doing} the debate store {where}: {cause}. {unchanged}"
    kept = " Your question and settings are kept." if doing == "save to" else ""
    return StoreError(f"{what} Fix: {fix}.", dashboard=f"{what}{kept} Fix: {fix}.")


def make_engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(f"DATABASE_URL {url!r} is not a database URL: use "
                         "postgresql+psycopg://user:password@host:5432/dbname, or unset it for SQLite.") from None
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            try:
                Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"Cannot create the folder for {parsed.database}: {exc.strerror}. "
                                 "Set CLEARSIDE_DATA to a writable folder.") from None
        engine = create_engine(parsed, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
        _sqlite_setup(engine, _sqlite_file(url))
        return engine
    if parsed.get_backend_name() != "postgresql":
        raise StoreError(f"The store supports SQLite and PostgreSQL, not {parsed.get_backend_name()!r} "
                         f"({safe_url(url)}).")
    try:
        return reconnecting(create_engine(parsed, pool_pre_ping=True, pool_size=10, max_overflow=10))
    except (ImportError, SQLAlchemyError) as exc:
        raise StoreError(f"Cannot use {safe_url(url)}: {exc}. PostgreSQL needs psycopg 3 "
                         "(`pip install -r requirements.txt`) and a URL like postgresql+psycopg://...") from None


def ensure_table(engine: Engine, table: Table) -> None:
    """Create ``table`` (and its schema on PostgreSQL) unless it exists, safely when processes start at once.

    ``Table.create(checkfirst=True)`` looks, then creates: two workers starting together can both look, and the
    second then fails with "already exists". ``IF NOT EXISTS`` closes most of that window; PostgreSQL can still
    refuse a twin ``CREATE`` with a unique violation on its catalogue, so a failure is retried and accepted once
    the table is there."""
    for attempt in range(5):
        try:
            with engine.connect().execution_options(**{WRITE: True}) as connection, connection.begin():
                if table.schema and connection.dialect.name == "postgresql":
                    connection.execute(CreateSchema(table.schema, if_not_exists=True))
                connection.execute(CreateTable(table, if_not_exists=True))
            return
        except DBAPIError:  # OperationalError included
            if inspect(engine).has_table(table.name, schema=table.schema):
                return
            if attempt == 4:
                raise
            time.sleep(0.1 * (attempt + 1))


def alembic_config() -> Config:
    """The Alembic configuration of the store's migrations (``clearside/store/migrations``)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def head() -> str:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the database to ``revision``, in one transaction; a database already there is only read (so a store
    on a read-only file or disk still opens for reading, and each write says why it cannot be saved)."""
    config = alembic_config()
    try:
        target = head() if revision == "head" else revision
        try:
            if current(engine) == target:
                return
        except OperationalError as exc:
            if "database is locked" not in str(exc):  # a new file being created by another process: migrate below
                raise
        for attempt in range(6):
            try:
                with engine.connect().execution_options(**{WRITE: True}) as connection, connection.begin():
                    if connection.dialect.name == "postgresql":
                        connection.execute(text("SELECT pg_advisory_xact_lock(20251122)"))
                    config.attributes["connection"] = connection
                    command.upgrade(config, revision)
                break
            except OperationalError as exc:
                # Processes opening a new SQLite file at once (two workers starting) race for its first locks;
                # SQLite reports "database is locked" at once instead of waiting. Try again shortly.
                if "database is locked" not in str(exc) or attempt == 5:
                    raise
                time.sleep(0.2 * (attempt + 1))
    except SQLAlchemyError as exc:
        url = engine.url.render_as_string(hide_password=False)
        if engine.dialect.name == "sqlite":
            raise fault(url, exc, doing="open") from None
        raise StoreError(f"Cannot open the debate store at {safe_url(url)}: "
                         f"{exc.__class__.__name__}: {str(exc).splitlines()[0]}. Check DATABASE_URL and that the "
                         "server is running, or unset DATABASE_URL to use the local SQLite file.") from None
