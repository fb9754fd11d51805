"""Database faults: the store's database restarted under a batch, a read-only SQLite store, a
full disk. After every SQLite fault ``PRAGMA integrity_check`` says ``ok`` and the debates saved before it are
unchanged.

- PostgreSQL restarted (``pg_ctl stop -m fast``, down 6 s: longer than the workers' DEAD_AFTER) in the middle of a
  regression batch that two ``python -m clearside worker`` processes run against a model server counting every
  call by agent (bench/latency_server.py): both workers live through the outage, the batch finishes once the
  server is back, every item is started once and every stage of every item is asked exactly once.
- A read-only store on the command line (each command run as a new process would, with no connection left open):
  the file read-only (``chattr +i`` as root, where ``chmod`` stops nothing; ``chmod 0444`` otherwise), then its
  folder on a read-only file system (a read-only bind mount as root; ``chmod 0555`` otherwise): a read-only file
  still lists its debates, and every write exits 5 with a message naming the file, the cause and the fix.
- A full disk on the command line: the store on a 4 MB tmpfs (as root; otherwise SQLite's ``max_page_count``,
  the same SQLITE_FULL) filled by a file: imports until one does not fit, then a disk full to the last byte.
- The dashboard (AppTest): Generate on a full disk, then on a read-only file, says why on the page and keeps the
  typed question; once the fault is fixed, Generate runs the debate with no restart.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import helpers
import pg_kit
import pytest
from helpers import QUESTION, fixture_dict, full_script, run_cli, scripted_debate
from test_runtime_workers import AGENTS, REPO, Worker, until

from bench.latency_server import MODEL, start
from clearside import runtime
from clearside.providers.openai_compat import OpenAIProvider
from clearside.quality import workflow as batches
from clearside.quality.batch import find_batch
from clearside.runtime import steps

ROOT = os.geteuid() == 0
APP = str(Path(__file__).resolve().parents[2] / "app.py")
DEAD_AFTER = 5  # the workers' (see PatientWorker)
DOWN_SECONDS = 6.0  # longer than DEAD_AFTER: every worker's heartbeat is stale when the server is back


class PatientWorker(Worker):
    """A :class:`Worker` (tests/test_runtime_workers.py) that takes another host for dead after 5 s without a
    heartbeat, not 3: on a loaded machine a worker starved of CPU for 3 s would be, and this test counts
    takeovers."""

    def __init__(self, tmp_path: Path, name: str, *args: str) -> None:
        self.log = tmp_path / f"{name}.log"
        env = {**os.environ, "CLEARSIDE_HEARTBEAT_SECONDS": "0.5", "CLEARSIDE_DEAD_AFTER_SECONDS": str(DEAD_AFTER),
               "OPENAI_API_KEY": "not-needed", "PYTHONUNBUFFERED": "1"}
        with self.log.open("w") as out:
            self.process = subprocess.Popen([sys.executable, "-m", "clearside", "worker", *args], cwd=REPO, env=env,
                                            stdout=out, stderr=subprocess.STDOUT)


# --- PostgreSQL restarted under a batch ----------------------------------------------------------------------------

@pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)
def test_a_postgresql_restart_mid_batch_loses_nothing_and_runs_nothing_twice(db, postgres_admin, tmp_path):
    if not pg_kit.restartable(postgres_admin):
        pytest.skip("CLEARSIDE_TEST_DATABASE_URL names a server these tests did not start: they cannot restart it")
    items = 3  # one per worker under way when the server stops, and one still queued
    with start(0, ttft=0.05, tps=400) as server:
        workers = [PatientWorker(tmp_path, name, "--concurrency", "1") for name in ("a", "b")]
        try:
            for worker in workers:
                until(lambda w=worker: "serving queued" in w.text(), 60, "the worker never started", worker)
            provider = OpenAIProvider(MODEL, base_url=server.base_url)
            try:
                batch_id = batches.enqueue_regress("flagship", provider, batches.RegressSettings(runs=items, retries=1),
                                                   lend=False)
                until(lambda: server.stats()["agents"].get("pro", 0) >= 1, 60, "no item started", workers[0])
                assert not runtime.state(batch_id).finished
                before = dict(server.stats()["agents"])
                down = pg_kit.restart(postgres_admin, down=DOWN_SECONDS)
                until(lambda: runtime.state(batch_id).finished, 120, "the batch never finished after the restart",
                      workers[1])
                state = runtime.state(batch_id)
            finally:
                runtime.reset()  # this process was only a client: its connections go first
            alive = [w.process.poll() is None for w in workers]
        finally:
            for worker in workers:
                worker.stop()
        asked = server.stats()["agents"]
    logs = [w.text() for w in workers]
    assert down >= DOWN_SECONDS and before.get("moderator", 0) < items, before
    assert alive == [True, True], "a worker died of the outage:\n" + "\n---\n".join(logs)
    assert all("Runtime heartbeat held up" in log for log in logs), "each worker logs the outage"
    assert state.status == "done", state
    report = state.result["report"]
    assert len(report["debates"]) == items and {d["status"] for d in report["debates"]} == {"done"}, report
    assert asked == dict.fromkeys(AGENTS, items), f"every stage of every item exactly once: {asked}"
    started = [sum(f"of batch {batch_id}" in line and "started" in line for line in log.splitlines())
               for log in logs]
    assert sum(started) == items, f"each item started once (no takeover of a live worker's item): {started}"
    rows = find_batch(db, batch_id).rows  # the store: one run row per item, each its own debate, done
    assert len(rows) == items and {r["status"] for r in rows} == {"done"}
    assert len({r["debate_id"] for r in rows}) == items
    assert all(db.get(r["debate_id"]).status == "done" for r in rows)
    print(f"\nFIGURES pg-restart down={down:.1f}s asked={asked} started={started} alive={alive}")


# --- SQLite: faults, made real -------------------------------------------------------------------------------------

def integrity(path: Path) -> str:
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute("PRAGMA integrity_check").fetchone()[0]


def close_stores() -> None:
    """Forget every opened store, as a new process starts: each command opens the database afresh."""
    from clearside import store as store_module

    for url in list(store_module._stores):
        store_module._stores.pop(url).close()


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """``python -m clearside ARGS`` as a new process runs it (no connection of an earlier command left open)."""
    close_stores()
    return run_cli(capsys, *args)


def _run(*cmd: str) -> bool:
    return subprocess.run(cmd, capture_output=True, timeout=30).returncode == 0


@contextmanager
def read_only_file(path: Path) -> Iterator[str]:
    """``path`` read-only: ``chmod 0444``, or as root (whom permissions do not stop) ``chattr +i``, else a
    read-only bind mount of the file itself. Yields how."""
    if not ROOT:
        mode = path.stat().st_mode
        path.chmod(0o444)
        try:
            yield "chmod 0444"
        finally:
            path.chmod(mode)
        return
    if shutil.which("chattr") and _run("chattr", "+i", str(path)):
        try:
            yield "chattr +i"
        finally:
            _run("chattr", "-i", str(path))
        return
    with read_only_bind(path):
        yield "read-only bind mount"


@contextmanager
def read_only_bind(path: Path) -> Iterator[None]:
    if not (_run("mount", "--bind", str(path), str(path))):
        pytest.skip(f"running as root, chattr +i and `mount --bind` both failed on {path}: no way to make it "
                    "read-only for root here")
    try:
        if not _run("mount", "-o", "remount,bind,ro", str(path)):
            pytest.skip(f"cannot remount the bind mount of {path} read-only")
        yield
    finally:
        _run("umount", str(path)) or _run("umount", "-l", str(path))


@contextmanager
def read_only_folder(folder: Path) -> Iterator[str]:
    """The store's folder on a read-only file system (a read-only bind mount as root), or ``chmod 0555``."""
    if not ROOT:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            yield "chmod 0555 on the folder"
        finally:
            folder.chmod(mode)
        return
    with read_only_bind(folder):
        yield "read-only bind mount of the folder"


def can_mount() -> bool:
    return ROOT and shutil.which("mount") is not None and os.environ.get("CLEARSIDE_TEST_NO_MOUNT") != "1"


@contextmanager
def small_disk(folder: Path, mb: int = 4) -> Iterator[Path]:
    """A tmpfs of ``mb`` MB mounted on ``folder``; everything using it is closed before it is unmounted."""
    folder.mkdir(parents=True, exist_ok=True)
    if not _run("mount", "-t", "tmpfs", "-o", f"size={mb}m", "tmpfs", str(folder)):
        pytest.skip(f"cannot mount a tmpfs on {folder}")
    try:
        yield folder
    finally:
        stop_using(folder)
        _run("umount", str(folder)) or _run("umount", "-l", str(folder))


def stop_using(folder: Path) -> None:
    """Close the store and the runtime (DBOS keeps jobs.db open) so the disk can be unmounted."""

    if runtime.current_host() is not None:
        for job_id in list(steps.RUNNING):
            steps.wait_stopped(job_id)
    runtime.reset()
    close_stores()


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill the disk holding ``folder`` with a file, leaving about ``leave`` bytes free; the file."""
    filler = folder / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (1 << 16, 4096, 512, 1):  # unbuffered: the last bytes that fit are written too
            try:
                while os.write(fd, b"\0" * size):
                    pass
            except OSError:
                continue
        if leave:
            os.ftruncate(fd, max(os.fstat(fd).st_size - leave, 0))
    finally:
        os.close(fd)
    return filler


@contextmanager
def page_limit(monkeypatch, db_file: Path) -> Iterator[None]:
    """Without root: the store may not grow past its present size (``PRAGMA max_page_count``), SQLite's own
    SQLITE_FULL, as a full disk gives it."""
    from sqlalchemy import event

    from clearside.store import database

    pages = page_count(db_file)
    made = database.make_engine

    def limited(url: str):
        engine = made(url)
        event.listen(engine, "connect", lambda connection, _: connection.execute(f"PRAGMA max_page_count={pages}"))
        return engine

    with monkeypatch.context() as patch:
        patch.setattr(database, "make_engine", limited)
        yield


def page_count(path: Path) -> int:
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute("PRAGMA page_count").fetchone()[0]


def exported(capsys, debate_id: str) -> dict:
    code, out, err = cli(capsys, "export", debate_id)
    assert code == 0, err
    return json.loads(out)


def listed(capsys) -> list[dict]:
    code, out, err = cli(capsys, "list", "--format", "json", "--limit", "100")
    assert code == 0, err
    return json.loads(out)


def refused(err: str, db_file: Path, *words: str) -> bool:
    """The message names the database file, the cause and the fix."""
    return err.startswith("error: ") and str(db_file) in err and all(w in err for w in words)


def test_a_read_only_store_still_reads_refuses_every_write_with_exit_5_and_corrupts_nothing(tmp_path, capsys):
    data = Path(os.environ["CLEARSIDE_DATA"])
    db_file = data / "clearside.db"
    document = tmp_path / "debate.json"
    document.write_text(json.dumps(fixture_dict()), encoding="utf-8")
    code, out, err = cli(capsys, "import", str(document))
    assert code == 0, err
    saved = out.strip()
    before = exported(capsys, saved)
    script = full_script(tmp_path)
    writes = [("rename", saved, "A new title"), ("import", str(document)),
              ("debate", QUESTION, "--save", "--provider", script)]

    with read_only_file(db_file) as how:
        assert [d["id"] for d in listed(capsys)] == [saved], "a read-only store still lists its debates"
        for args in writes:
            code, _, err = cli(capsys, *args)
            assert code == 5, (how, args, err)
            assert refused(err, db_file, "the file is read-only", "Nothing from this change was written",
                           f"chmod u+w {db_file}"), err
        message = err
    assert integrity(db_file) == "ok"

    with read_only_folder(data) as where:
        for args in writes[:2]:
            code, _, err = cli(capsys, *args)
            assert code == 5, (where, args, err)
            assert refused(err, db_file, "read-only") and ("remount it read-write" in err or "chmod u+w" in err), err
        folder_message = err
    assert integrity(db_file) == "ok"
    assert listed(capsys)[0]["id"] == saved and len(listed(capsys)) == 1, "nothing was added"
    assert exported(capsys, saved) == before, "the debate saved before the faults is unchanged"
    assert cli(capsys, "rename", saved, "A new title")[0] == 0, "fixed: writes work again"
    print(f"\nFIGURES read-only-file ({how}): exit 5: {message}\nFIGURES read-only-folder ({where}): exit 5: "
          f"{folder_message}")


def test_a_full_disk_refuses_the_write_that_does_not_fit_with_exit_5_and_corrupts_nothing(tmp_path, capsys,
                                                                                         monkeypatch):
    document = tmp_path / "debate.json"
    document.write_text(json.dumps(fixture_dict()), encoding="utf-8")
    with (small_disk(tmp_path / "disk") if can_mount() else _nothing(tmp_path / "disk")) as disk:
        monkeypatch.setenv("CLEARSIDE_DATA", str(disk))
        db_file = disk / "clearside.db"
        code, out, err = cli(capsys, "import", str(document))
        assert code == 0, err
        saved = [out.strip()]
        before = exported(capsys, saved[0])
        with _full(disk, db_file, monkeypatch, leave=96 * 1024) as how:
            for _ in range(40):  # debates keep coming until one does not fit: refused whole
                code, out, err = cli(capsys, "import", str(document))
                if code:
                    break
                saved.append(out.strip())
            assert code == 5, err
            assert refused(err, db_file, "full", "Nothing from this change was written", "free some space"), err
            message = err
            if can_mount():  # then full to the last byte: a new process cannot even open the store to write
                fill(disk)
                code, _, err = cli(capsys, "rename", saved[0], "A new title")
                assert code == 5 and refused(err, db_file, "the disk holding it is full", "free some space"), err
                last_byte = err
        assert integrity(db_file) == "ok"
        assert sorted(d["id"] for d in listed(capsys)) == sorted(saved), "every import that fitted, nothing else"
        assert exported(capsys, saved[0]) == before
        assert cli(capsys, "rename", saved[0], "A new title")[0] == 0, "space freed: writes work again"
        close_stores()
    print(f"\nFIGURES full-disk ({how}): {len(saved) - 1} import(s) fitted, then exit 5: {message}"
          + (f"\nFIGURES full-to-the-byte: exit 5: {last_byte}" if can_mount() else ""))


@contextmanager
def _nothing(folder: Path) -> Iterator[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield folder
    finally:
        close_stores()


@contextmanager
def _full(disk: Path, db_file: Path, monkeypatch, leave: int = 0) -> Iterator[str]:
    """The disk full but for ``leave`` bytes (a tmpfs filled by a file), or, without mounting, the store
    unable to grow (SQLITE_FULL); the fault is cleared when the block ends."""
    if can_mount():
        filler = fill(disk, leave)
        size = os.statvfs(disk).f_blocks * os.statvfs(disk).f_frsize
        try:
            yield f"{size // 2**20} MB tmpfs filled, {leave // 1024} KB left"
        finally:
            close_stores()
            filler.unlink()
        return
    with page_limit(monkeypatch, db_file):
        close_stores()  # the store is opened again, unable to grow
        try:
            yield "PRAGMA max_page_count at the file's size (SQLITE_FULL): no mount here"
        finally:
            close_stores()


# --- The dashboard ---------------------------------------------------------------------------------------------------

def page_errors(at) -> str:
    return "\n".join(e.value for e in at.error).replace("\\", "")


def test_the_dashboard_says_why_it_cannot_save_keeps_the_question_and_saves_once_fixed(tmp_path, monkeypatch):
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    from clearside.providers.scripted import ScriptedProvider
    from clearside.store import open_store

    question = QUESTION  # the scripted replies answer it
    document = tmp_path / "debate.json"
    document.write_text(json.dumps(fixture_dict()), encoding="utf-8")
    with (small_disk(tmp_path / "disk", mb=8) if can_mount() else _nothing(tmp_path / "disk")) as disk:
        monkeypatch.setenv("CLEARSIDE_DATA", str(disk))
        db_file = disk / "clearside.db"
        from clearside.modes import import_file

        saved = import_file(open_store(), str(document)).id
        before = open_store().get(saved).document
        provider = ScriptedProvider()
        at = AppTest.from_file(APP, default_timeout=60)
        at.session_state["provider_override"] = provider
        at.run()
        assert not at.exception, at.exception
        at.text_area(key="question").set_value(question)

        faults = []
        if can_mount():  # (without a mount, max_page_count cannot stop a write that fits the file's free space)
            with _full(disk, db_file, monkeypatch) as how:
                open_store().engine.dispose()  # its next connection meets the fault, as a restarted server's would
                at.button(key="generate").click().run()
                assert not at.exception, at.exception
                shown = page_errors(at)
                assert str(db_file) in shown and "the disk holding it is full" in shown, shown
                assert "Your question and settings are kept" in shown and "free some space" in shown, shown
                assert at.text_area(key="question").value == question, "the typed question is kept"
                faults.append((f"full disk ({how})", shown))
        with read_only_file(db_file) as how:
            open_store().engine.dispose()
            at.button(key="generate").click().run()
            assert not at.exception, at.exception
            shown = page_errors(at)
            assert str(db_file) in shown and "the file is read-only" in shown and "chmod u+w" in shown, shown
            assert at.text_area(key="question").value == question
            faults.append((f"read-only file ({how})", shown))
        assert provider.requests == [], "no model was asked while nothing could be saved"
        assert [r.id for r in open_store().list(limit=10).items] == [saved], "nothing half-saved"

        scripted_debate(provider)  # fixed: the same question, Generate again, no restart
        at.button(key="generate").click().run()
        helpers.settle(at, lambda a: any("MODERATOR SYNTHESIS" in m.value for m in a.markdown), timeout=90,
                       describe=page_errors)
        assert not page_errors(at)
        assert integrity(db_file) == "ok"
        records = open_store().list(limit=10).items
        assert len(records) == 2 and records[0].question == question and records[0].status == "done"
        assert open_store().get(saved).document == before
    for what, shown in faults:
        print(f"\nFIGURES dashboard {what}: {shown}")


# --- processes creating the runtime's tables at once ----------------------------------------------------------------

def test_hosts_starting_at_once_create_the_runtime_tables_without_refusing_each_other(store_url):
    """Two workers started together both found the heartbeat table missing and both created it; the second was
    refused with "table clearside_executors already exists" and never started. Eight connections now create one
    table (in its own schema on PostgreSQL) at the same moment, ten times over: none may fail."""
    import threading

    import sqlalchemy as sa

    from clearside.store.db import ensure_table

    schema = "race_check" if store_url.startswith("postgresql") else None
    engines = [runtime.system_engine(store_url) for _ in range(8)]
    try:
        for round_ in range(10):
            table = sa.Table(f"race_{round_}", sa.MetaData(), sa.Column("id", sa.Integer, primary_key=True),
                             schema=schema)
            barrier, errors = threading.Barrier(len(engines)), []

            def create(engine: sa.Engine, table: sa.Table, barrier: threading.Barrier, errors: list[str]) -> None:
                barrier.wait()
                try:
                    ensure_table(engine, table)
                except Exception as exc:  # noqa: BLE001 - any refusal fails the test, with its text
                    errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")

            threads = [threading.Thread(target=create, args=(engine, table, barrier, errors)) for engine in engines]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            assert not errors, errors
            assert sa.inspect(engines[0]).has_table(table.name, schema=schema)
    finally:
        for engine in engines:
            engine.dispose()
