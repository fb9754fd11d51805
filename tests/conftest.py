"""Shared test setup: make ``tests/helpers.py`` and the other kits importable under any import mode."""

from __future__ import annotations

import sys
from pathlib import Path

# The tests mirror the package's folders (tests/static/ for clearside/static/, tests/ui/ for the dashboard...); their
# kits (helpers, app_kit, pg_kit...) sit here, and a test may reuse another's builders by module name from any folder.
_TESTS = Path(__file__).resolve().parent
for _folder in (_TESTS, *sorted(p for p in _TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py")))):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))


import pytest  # noqa: E402

# The files whose tests take the longest (a minute or two each: dashboards killed and restarted, replicas, workers
# killed mid-batch), measured with --durations on a quiet 2-core machine. Under pytest-xdist a worker takes the tests
# in collection order, and tests/ui/ is collected last: those would start in the run's last minutes and stretch it
# while the other workers sit idle. They are collected first instead; every other test keeps its order.
SLOW_FIRST = ("tests/ui/test_browser_recovery.py", "tests/ui/test_browser_replicas.py",
              "tests/ui/test_browser_study.py", "tests/quality/test_runtime_batch.py",
              "tests/runtime/test_runtime_workers.py", "tests/perspectives/test_runtime_perspectives.py",
              "tests/store/test_db_faults.py")


def pytest_collection_modifyitems(config, items):
    rank = {path: n for n, path in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: the rest keep order


@pytest.fixture(scope="session")
def postgres_admin():
    """One real PostgreSQL server for the whole run (see tests/pg_kit.py)."""
    import pg_kit

    with pg_kit.server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """A fresh, empty database: a SQLite file, then a new database on the real PostgreSQL server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    import pg_kit

    admin = request.getfixturevalue("postgres_admin")
    url = pg_kit.new_database(admin)
    yield url
    stop_hosting()  # before the database goes: a host polling a dropped database would never stop
    from clearside import store

    cached = store._stores.pop(url, None)
    if cached is not None:
        cached.close()
    pg_kit.drop_database(admin, url)


@pytest.fixture(autouse=True)
def private_store(tmp_path_factory, monkeypatch):
    """Every test saves into its own data folder (never ~/.clearside) and SQLite unless it asks otherwise; a test
    that made this process a runtime host (the dashboard does on every run) stops hosting when it ends."""
    monkeypatch.setenv("CLEARSIDE_DATA", str(tmp_path_factory.mktemp("data")))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    yield
    stop_hosting()


def stop_hosting() -> None:
    """Let the jobs this process runs stop (a cancelled step stops at its next token), then stop hosting."""
    runtime = sys.modules.get("clearside.runtime.host")
    if runtime is None or runtime.current_host() is None:
        return
    steps = sys.modules["clearside.runtime.steps"]
    stuck = [job_id for job_id in list(steps.RUNNING) if not steps.wait_stopped(job_id)]
    runtime.reset()
    if stuck:  # said once, and forgotten: otherwise every later test that hosts would wait 30 s for them again
        steps.RUNNING.difference_update(stuck)
        import warnings

        warnings.warn(f"jobs still running 30 s after their test: {stuck}", stacklevel=1)


@pytest.fixture
def db(store_url, monkeypatch):
    """The CLI's store (``DATABASE_URL``) is a fresh SQLite file, then a fresh PostgreSQL database."""
    from clearside.store import open_store

    monkeypatch.setenv("DATABASE_URL", store_url)
    return open_store()


@pytest.fixture(scope="session", autouse=True)
def embedding_model_loaded_on_the_main_thread():
    """Load the checks' MiniLM once, here, before any test starts a worker.

    Otherwise the first debate of the run loads it on a side thread (Engine.run warms it while the first agent
    writes), and importing transformers generates thousands of methods with ``exec`` while AppTest parses a page
    script on the main thread. CPython before 3.11.8 and 3.12.1 can then fail that parse with "SystemError: AST
    constructor recursion depth mismatch" (gh-106905), a race in its AST validator, not in ClearSide.
    """
    from clearside import checks

    checks.Embeddings().warm()


@pytest.fixture(scope="session", autouse=True)
def dbos_logs_to_the_real_stderr():
    """DBOS's console log handler writes to whatever ``sys.stderr`` was when DBOS first started: inside a test
    that captures it (``capsys``), a later host's start flushes that closed capture and fails ("I/O operation on
    closed file"). Its handler is made here, on the process's own stderr, before any test starts a host."""
    import logging

    dbos_logger = logging.getLogger("dbos")
    if not dbos_logger.handlers:
        handler = logging.StreamHandler(sys.__stderr__)
        handler.name = "__dbos_console_log_handler__"  # the name DBOS's own handler has: its settings apply to it
        handler.setFormatter(logging.Formatter("%(asctime)s [%(levelname)8s] (%(name)s:%(filename)s:%(lineno)s) "
                                               "%(message)s", datefmt="%H:%M:%S"))
        dbos_logger.addHandler(handler)
        dbos_logger.propagate = False


@pytest.fixture
def downloads(monkeypatch) -> dict[str, bytes]:
    """The data behind every download button, by media file id (AppTest keeps no runtime to ask)."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    files: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        files[file_id] = path_or_data
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return files


@pytest.fixture
def store():
    """The default store (this test's private data folder, or DATABASE_URL), closed and forgotten afterwards; a
    test module that needs another store defines its own ``store``."""
    from clearside import store as store_module
    from clearside.store import open_store

    opened = open_store()
    yield opened
    store_module._stores.pop(opened.url, None)
    opened.close()
