"""A real PostgreSQL server for the store's tests: Debian's binaries, a throwaway cluster on 127.0.0.1.

``scripts/test.sh`` installs Debian's ``postgresql`` when it is missing. The server
runs from a temporary folder on a free port, as the ``postgres`` user when the tests
run as root (PostgreSQL refuses to run as root), and is stopped at the end of the
session. ``CLEARSIDE_TEST_DATABASE_URL`` points the tests at an existing server
instead (a database the tests may create and drop databases in).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

USER = "clearside"
# the servers this process started, by admin URL: their data folder, start options and log (for restart)
_STARTED: dict[str, tuple[Path, str, Path]] = {}


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} is not installed: run `bash scripts/test.sh` (it installs "
                           "Debian's postgresql), or `apt-get install postgresql`, or set CLEARSIDE_TEST_DATABASE_URL.")
    return found[-1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_owner(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@contextmanager
def server() -> Iterator[str]:
    """Yields an admin URL (``postgresql+psycopg://clearside@127.0.0.1:PORT/postgres``)."""
    if os.environ.get("CLEARSIDE_TEST_DATABASE_URL"):
        yield os.environ["CLEARSIDE_TEST_DATABASE_URL"]
        return
    folder = Path(tempfile.mkdtemp(prefix="clearside-pg-"))
    data = folder / "data"
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    port = _free_port()
    run = {"check": True, "capture_output": True, "text": True, "timeout": 120}
    subprocess.run(_as_owner([_bin("initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8",
                              "--no-sync"]), **run)
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(_as_owner([_bin("pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"),
                              "-w", "start"]), **run)
    url = f"postgresql+psycopg://{USER}@127.0.0.1:{port}/postgres"
    _STARTED[url] = (data, options, folder / "log")
    try:
        yield url
    finally:
        _STARTED.pop(url, None)
        subprocess.run(_as_owner([_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


def restartable(admin_url: str) -> bool:
    """Whether :func:`restart` can restart this server (one :func:`server` started, not an existing one)."""
    return admin_url in _STARTED


def restart(admin_url: str, *, down: float = 0.0) -> float:
    """Stop the server :func:`server` started (``pg_ctl stop -m fast``: every session is ended, as in a real
    restart), keep it down ``down`` seconds, start it again on the same data folder and port, and wait until it
    accepts connections. Returns the seconds it was unreachable."""
    data, options, log = _STARTED[admin_url]
    run = {"check": True, "capture_output": True, "text": True, "timeout": 60}
    stopped = time.monotonic()
    subprocess.run(_as_owner([_bin("pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]), **run)
    time.sleep(down)
    subprocess.run(_as_owner([_bin("pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w", "start"]), **run)
    return time.monotonic() - stopped


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def new_database(admin_url: str) -> str:
    """A fresh, empty database on the server; returns its SQLAlchemy URL."""
    name = f"clearside_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_libpq(admin_url), autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


def drop_database(admin_url: str, url: str) -> None:
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(_libpq(admin_url), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
