"""A store written by the previous release still opens, and every item in it lists, exports, renders, reports its
status and shows on its dashboard page exactly as that release did.

``tests/data/previous_release/`` holds the store that release b95a83e wrote (``store.db`` and the runtime's
``jobs.db``, made by ``make_store.py`` there, with that release's code), ``manifest.json`` (its items, and every
command and page whose output is expected) and ``expected/`` (what the release said). The folder is copied first
(opening a store migrates it: the committed files stay as the release wrote them), and only entry points that stay
put when modules move are used: the command line (``python -m clearside``: its ``__main__`` run in this process,
and once in a process of its own), the mode registry (``clearside.modes``), ``clearside.store.open_store`` and
the dashboard's pages (``app.py``, the pages the registry names). No model runs.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.util
import io
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).resolve().parent / "data" / "previous_release"
EXPECTED = FIXTURE / "expected"
MANIFEST = json.loads((FIXTURE / "manifest.json").read_text(encoding="utf-8"))
ITEMS = {entry["name"]: entry for entry in MANIFEST["items"]}
PLACE = "<FIXTURE>"  # the fixture copy's folder, in any output that names it


# -- the fixture's copy -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The committed store copied once for this module (its files never opened in place)."""
    folder = tmp_path_factory.mktemp("previous_release")
    for name in (MANIFEST["store"], MANIFEST["system_database"]):
        shutil.copy2(FIXTURE / name, folder / name)
    (folder / "data").mkdir()
    (folder / "actual").mkdir()
    return folder


@pytest.fixture
def release_store(copy, monkeypatch) -> Path:
    """``DATABASE_URL`` and ``CLEARSIDE_DATA`` on the copy (conftest gives each test a fresh data folder)."""
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{copy / MANIFEST['store']}")
    monkeypatch.setenv("CLEARSIDE_DATA", str(copy / "data"))
    return copy


def normalize(text: str, copy: Path | None = None, name: str = "") -> str:
    """What may differ between two runs on the same store, made equal: the copy's folder, and in ``runs --format
    json`` each batch's age (its time since it was made, counted from now)."""
    if copy is not None:
        text = text.replace(str(copy), PLACE)
    if name == "runs.json":
        text = re.sub(r'("age": )"[^"]*"', r'\1"<AGE>"', text)
    return text


# -- the command line ---------------------------------------------------------------------------------------------

def cli(*args: str) -> tuple[int, str, str]:
    """``python -m clearside ARGS`` run in this process (its ``__main__``, as ``-m`` runs it): exit code, stdout,
    stderr."""
    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["clearside", *args]
    code: Any = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_module("clearside", run_name="__main__", alter_sys=True)
            except SystemExit as exc:
                code = exc.code
    finally:
        sys.argv = argv
    return (code if isinstance(code, int) else 0 if code is None else 1), out.getvalue(), err.getvalue()


COMMANDS = {command["file"]: command for command in MANIFEST["commands"]}


def actual(copy: Path, file: str) -> tuple[int, str, list[str]]:
    """The command that made the expected ``file``, run now on the copy: its exit code, its output (kept in the
    copy's ``actual/`` folder, where a later command's ``@file`` argument reads it) and its ``error:`` lines."""
    command = COMMANDS[file]
    args = []
    for arg in command["args"]:
        if arg.startswith("@"):  # the output of an earlier command: the file this run made
            if not (copy / "actual" / arg[1:]).exists():
                actual(copy, arg[1:])
            arg = str(copy / "actual" / arg[1:])
        args.append(arg)
    code, out, err = cli(*args)
    (copy / "actual" / file).write_text(out, encoding="utf-8")
    assert code in (0, 1, 2), f"clearside {' '.join(args)} exited {code}: {err}"
    return code, out, [normalize(line, copy) for line in err.splitlines() if line.startswith("error:")]


def difference(name: str, expected: str, got: str) -> str:
    diff = difflib.unified_diff(expected.splitlines(), got.splitlines(), f"expected/{name}", f"now/{name}",
                                lineterm="", n=2)
    return "\n".join(list(diff)[:60])


def check_outputs(copy: Path, files: list[str]) -> None:
    problems = []
    for file in files:
        code, out, errors = actual(copy, file)
        expected = normalize((EXPECTED / file).read_text(encoding="utf-8"), name=file)
        got = normalize(out, copy, file)
        said = f"`clearside {' '.join(COMMANDS[file]['args'])}`"
        if code != COMMANDS[file]["exit"]:
            problems.append(f"{file}: {said} exited {code}, the release {COMMANDS[file]['exit']}")
        if errors != COMMANDS[file].get("errors", []):
            problems.append(f"{file}: {said} said {errors}, the release {COMMANDS[file].get('errors', [])}")
        if got != expected:
            problems.append(difference(file, expected, got))
    assert not problems, "\n\n".join(problems)


def files_of(item_id: str) -> list[str]:
    """The expected files of one item's commands, its export first."""
    return [file for file, command in COMMANDS.items() if item_id in command["args"]
            or any(arg.startswith("@") and COMMANDS[arg[1:]]["args"][1:2] == [item_id] for arg in command["args"])]


def test_the_manifest_covers_every_kind_and_each_item_has_its_outputs():
    kinds = {entry["kind"] for entry in ITEMS.values()}
    assert kinds == {"static", "live", "perspectives", "comparison", "regression"}
    for name, entry in ITEMS.items():
        files = files_of(entry["id"])
        assert f"{name}.export.json" in files and f"{name}.status.json" in files, name
        assert all((EXPECTED / file).is_file() for file in files), name
    assert all((EXPECTED / file).is_file() for file in COMMANDS)


def test_the_store_opens_and_the_registry_exports_every_item_as_the_release_did(release_store):
    from clearside.modes import export_data
    from clearside.store import open_store

    store = open_store()  # migrates the release's store, if this code's store is newer
    for name, entry in ITEMS.items():
        command = COMMANDS[f"{name}.export.json"]
        if command["exit"]:  # an unfinished static debate: refused, as the release refused it
            with pytest.raises(Exception) as refused:  # noqa: PT011 - the message is the check
                export_data(store, entry["id"])
            assert [f"error: {refused.value}"] == command["errors"], name
            continue
        expected = json.loads((EXPECTED / f"{name}.export.json").read_text(encoding="utf-8"))
        assert export_data(store, entry["id"]) == expected, f"{name}: export_data differs from the release's export"


def test_list_and_runs_show_every_item_as_the_release_did(release_store):
    check_outputs(release_store, ["list.txt", "list.json", "runs.txt", "runs.json"])
    listed = {row["id"] for row in json.loads((release_store / "actual" / "list.json").read_text(encoding="utf-8"))}
    table = (release_store / "actual" / "list.txt").read_text(encoding="utf-8")
    runs = {row["batch"] for row in json.loads((release_store / "actual" / "runs.json").read_text(encoding="utf-8"))}
    for name, entry in ITEMS.items():
        if entry["kind"] in ("comparison", "regression"):
            assert entry["id"] in runs, f"{name} is not among the batches `runs` lists"
        else:
            assert entry["id"] in listed and entry["id"] in table, f"{name} is not among the debates `list` shows"


@pytest.mark.parametrize("name", list(ITEMS))
def test_export_render_and_status_of_each_item_are_as_the_release_said(release_store, name):
    check_outputs(release_store, files_of(ITEMS[name]["id"]))


def test_the_command_line_in_a_process_of_its_own_lists_and_exports_as_the_release_did(release_store):
    """The same as above, through a real ``python -m clearside`` (two commands: each start costs seconds)."""
    name = next(name for name, entry in ITEMS.items() if entry["kind"] == "static")
    for file in ("list.txt", f"{name}.export.json"):
        result = subprocess.run([sys.executable, "-m", "clearside", *COMMANDS[file]["args"]], cwd=ROOT,
                                env=os.environ.copy(), capture_output=True, text=True, timeout=120)
        assert result.returncode == COMMANDS[file]["exit"], result.stderr
        expected = (EXPECTED / file).read_text(encoding="utf-8")
        got = normalize(result.stdout, release_store, file)
        assert got == expected, difference(file, expected, got)


# -- the dashboard ------------------------------------------------------------------------------------------------

def page_of(entry: dict[str, Any], role: str) -> tuple[str, dict[str, str]]:
    """The page (a path relative to app.py's folder) that shows the item, as the registry says now, and its query:
    ``page`` is the item's own page and share link; ``watch`` the page that follows a live debate."""
    from clearside.modes import BATCH_MODES, MODES

    ui = Path(importlib.util.find_spec("clearside_ui").origin).parent
    if entry["kind"] in BATCH_MODES:
        mode = BATCH_MODES[entry["kind"]]
        page, query = mode.page, dict(parse_qsl(urlsplit(mode.share_link(entry["id"])).query))
    elif role == "watch":
        mode = MODES[entry["kind"]]
        page, query = mode.watch_page, {mode.watch_param: entry["id"]}
    else:
        mode = MODES[entry["kind"]]
        page, query = mode.page, dict(parse_qsl(urlsplit(mode.share_link(entry["id"])).query))
    return os.path.relpath(ui / page, ROOT), query


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


# downloads a debate's page has offered since the release (the argument map's formats)
ADDED_DOWNLOADS = {"Argument map: Argdown", "Argument map: AIF", "Argument map: Kialo"}
TEXT = ("title", "header", "subheader", "markdown", "caption", "info", "warning", "success", "text_area",
        "text_input", "selectbox")


@pytest.mark.parametrize(("name", "role"), [(page["item"], page["role"]) for page in MANIFEST["pages"]])
def test_each_item_shows_on_its_dashboard_page_and_offers_the_same_files(release_store, downloads, name, role):
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    from clearside.providers import get_provider

    [expected] = [page for page in MANIFEST["pages"] if (page["item"], page["role"]) == (name, role)]
    page, query = page_of(ITEMS[name], role)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["provider_override"] = get_provider("scripted")  # the sidebar's model: no model is loaded
    at.session_state["detected_servers"] = []  # and no model server probed
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    text = "\n".join(e.value for kind in TEXT for e in at.get(kind)
                     if isinstance(getattr(e, "value", None), str)).replace("\\", "")
    assert expected["shows"] in text, f"{page}?{query} does not show {expected['shows']!r}"
    offered = {button.proto.label: downloads[button.proto.url.rsplit("/", 1)[-1].split(".")[0]]
               for button in at.get("download_button")}
    assert set(expected["downloads"]) <= set(offered), "the page no longer offers a download of the release's"
    assert set(offered) - set(expected["downloads"]) <= ADDED_DOWNLOADS, "a download no release has"
    problems = []
    for label, file in expected["downloads"].items():
        data = offered[label]
        got = normalize(data.decode("utf-8") if isinstance(data, bytes) else data, release_store)
        want = (EXPECTED / file).read_text(encoding="utf-8")
        if got != want:
            problems.append(difference(file, want, got))
    assert not problems, "\n\n".join(problems)
