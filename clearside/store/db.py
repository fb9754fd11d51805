"""Connecting to the store: which database, its engine settings, and migrating it to the latest version.

``DATABASE_URL`` chooses PostgreSQL (``postgresql+psycopg://user:pw@host/db``; plain
``postgres://`` and ``postgresql://`` are read as psycopg 3). Without it the store is
the SQLite file ``$CLEARSIDE_DATA/clearside.db`` (default ``~/.clearside``), opened
with WAL, a busy timeout and foreign keys on every connection. SQLite transactions
use SQLAlchemy's documented recipe (driver autocommit plus an explicit ``BEGIN``),
so a transaction really is one; writes take the lock up front (``BEGIN IMMEDIATE``)
so two writers queue instead of failing. Migrations are Alembic scripts, applied on
open; a PostgreSQL advisory lock keeps two processes from migrating at once.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError, SQLAlchemyError

from ..errors import StoreError
from ..paths import data_dir

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
BUSY_TIMEOUT_MS = 10_000
WRITE = "clearside_write"  # execution option: this transaction writes (SQLite: BEGIN IMMEDIATE)


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


def _sqlite_setup(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None  # the driver stops managing transactions; "begin" below does
        cursor = dbapi_connection.cursor()
        for pragma in ("journal_mode=WAL", f"busy_timeout={BUSY_TIMEOUT_MS}", "foreign_keys=ON",
                       "synchronous=NORMAL"):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE" if connection.get_execution_options().get(WRITE) else "BEGIN")


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
        _sqlite_setup(engine)
        return engine
    if parsed.get_backend_name() != "postgresql":
        raise StoreError(f"The store supports SQLite and PostgreSQL, not {parsed.get_backend_name()!r} "
                         f"({safe_url(url)}).")
    try:
        return create_engine(parsed, pool_pre_ping=True, pool_size=10, max_overflow=10)
    except (ImportError, SQLAlchemyError) as exc:
        raise StoreError(f"Cannot use {safe_url(url)}: {exc}. PostgreSQL needs psycopg 3 "
                         "(`pip install -r requirements.txt`) and a URL like postgresql+psycopg://...") from None


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
    """Bring the database to ``revision``, in one transaction; a database already there is left alone."""
    config = alembic_config()
    try:
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
        raise StoreError(f"Cannot open the debate store at {safe_url(str(engine.url))}: "
                         f"{exc.__class__.__name__}: {str(exc).splitlines()[0]}. Check DATABASE_URL and that the "
                         "server is running, or unset DATABASE_URL to use the local SQLite file.") from None
