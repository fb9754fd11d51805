"""``pip install .`` and ``pip install -e .``: the wheel holds the code and its data, and the installed ``clearside``
command works from outside the repository.

The wheel is built from a copy of the packaging inputs (pyproject.toml, README.md, clearside/, clearside_ui/) so the
work tree gets no build/ or egg-info, with ``--no-build-isolation --no-index`` (setuptools and wheel are installed,
nothing is downloaded). It goes with ``--no-deps`` into a venv made with ``--system-site-packages``, whose
dependencies are this machine's; every command then runs from a directory outside the repository without PYTHONPATH.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest

from clearside.contract import SCHEMA_FILE

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("clearside", "clearside_ui")


def run(*cmd: str | Path, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{cmd} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """What a checkout hands to the build: pyproject.toml, README.md and the two packages."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return src


@pytest.fixture(scope="module")
def wheel(source, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", out,
        source, cwd=out)
    (built,) = out.glob("clearside-*.whl")
    return built


def venv(path: Path) -> Path:
    """A venv that sees this machine's packages. Without a pip of its own: the machine's pip and setuptools then
    serve it (a venv's bundled setuptools would shadow the machine's, and is too old to build an editable wheel)."""
    run(sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", path, cwd=path.parent)
    return path / "bin"


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The bin/ of a venv holding the wheel (and this machine's packages for its dependencies)."""
    bin_dir = venv(tmp_path_factory.mktemp("venv") / "env")
    run(bin_dir / "python", "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel, cwd=wheel.parent)
    return bin_dir


@pytest.fixture
def outside(tmp_path) -> Path:
    """A working directory outside the repository."""
    assert ROOT not in tmp_path.parents
    return tmp_path


def repo_files(folder: str, pattern: str) -> set[str]:
    return {path.relative_to(ROOT).as_posix() for path in (ROOT / folder).rglob(pattern)
            if path.is_file() and "__pycache__" not in path.parts}


def test_the_wheel_holds_the_code_prompts_schemas_references_migrations_and_dashboard(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = (repo_files("clearside", "*.py") | repo_files("clearside_ui", "*.py")
                | repo_files("clearside/data/prompts", "*.toml") | repo_files("clearside/data/schemas", "*.json")
                | repo_files("clearside/quality/references", "*.json")
                | repo_files("clearside/quality/references/argkp", "*")
                | repo_files("clearside/store/migrations", "*") | {"clearside_ui/streamlit.toml"})
    assert "clearside/store/migrations/versions/0001_initial.py" in expected  # the listing itself is not empty
    assert {"clearside_ui/app.py", "clearside_ui/app_pages/debate.py", "clearside/quality/references/flagship.json",
            "clearside/data/prompts/advocate.toml", "clearside/store/migrations/script.py.mako"} <= expected
    assert expected - names == set(), "files of the packages missing from the wheel"
    assert not [n for n in names if n.endswith((".gguf", ".bin", ".safetensors", ".pyc"))], "no weights, no bytecode"
    assert not [n for n in names if n.split("/")[0] in ("tests", "bench", "app.py")]
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "clearside = clearside.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_the_installed_command_works_outside_the_repository(installed, outside):
    where = run(installed / "python", "-c", "import clearside, clearside_ui; print(clearside.__file__); "
                "print(clearside_ui.__file__)", cwd=outside).stdout.split()
    for path in where:
        assert Path(path).is_relative_to(installed.parent) and not Path(path).is_relative_to(ROOT), where
    helped = run(installed / "clearside", "--help", cwd=outside).stdout
    assert "schema" in helped and "ui" in helped and "debate" in helped
    assert run(installed / "python", "-m", "clearside", "--help", cwd=outside).stdout == helped
    printed = run(installed / "clearside", "schema", cwd=outside).stdout
    assert json.loads(printed) == json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert printed == SCHEMA_FILE.read_text(encoding="utf-8"), "the installed models export the committed schema"
    scored = run(installed / "clearside", "metrics", str(ROOT / "clearside/quality/references/flagship.json"),
                 "--reference", "argkp-dev:1", "--no-embeddings", cwd=outside)  # the installed ArgKP data is read
    assert "coverage" in json.loads(scored.stdout)
    data = run(installed / "python", "-c", "from clearside import prompts; from clearside.quality import references; "
               "print(prompts.load('advocate').version); print(prompts.PROMPTS_DIR); print(references.FLAGSHIP)",
               cwd=outside).stdout.split()
    assert data[0] and all(Path(path).is_relative_to(installed.parent) for path in data[1:]), data


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_clearside_ui_serves_the_installed_dashboard(installed, outside):
    dry = run(installed / "clearside", "ui", "--port", "8765", "--dry-run", cwd=outside).stdout.split()
    app = Path(dry[dry.index("run") + 1])
    assert app.is_relative_to(installed.parent) and app.name == "app.py", dry
    assert "--runner.postScriptGC=false" in dry and dry[-1] == "--server.port=8765"  # the settings hold anywhere
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen([installed / "clearside", "ui", "--port", str(port), "--server.address", "127.0.0.1"],
                            cwd=outside, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline, health = time.monotonic() + 60, ""
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                    health = response.read().decode()
                    break
            except OSError:
                time.sleep(0.5)
        assert health == "ok", f"no health answer; the server said:\n{proc.stdout.read() if proc.poll() else ''}"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
            assert response.status == 200
        proc.send_signal(signal.SIGTERM)  # to `clearside ui` alone, as a service manager would: the server stops
        proc.wait(timeout=20)
        with pytest.raises(OSError):  # nothing left behind on the port
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)


APPTEST = """
import json, sys
from streamlit.testing.v1 import AppTest
import clearside_ui
at = AppTest.from_file(sys.argv[1], default_timeout=60).run()
seen = {"exception": [str(e.value) for e in at.exception], "buttons": [b.label for b in at.button]}
at.switch_page("app_pages/library.py").run()
seen["library"] = [str(e.value) for e in at.exception] + [t.value for t in at.title]
seen["package"] = clearside_ui.__file__
print(json.dumps(seen))
"""


def test_the_installed_dashboard_draws_its_pages_from_any_directory(installed, outside):
    """The installed app.py, run by Streamlit's AppTest in the venv: its pages resolve from site-packages."""
    app = run(installed / "clearside", "ui", "--dry-run", cwd=outside).stdout.split()[4]
    seen = json.loads(run(installed / "python", "-c", APPTEST, app, cwd=outside, timeout=180).stdout.splitlines()[-1])
    assert seen["exception"] == [] and Path(seen["package"]).is_relative_to(installed.parent), seen
    assert any("Generate" in label for label in seen["buttons"]), seen
    assert seen["library"] and "Library" in " ".join(seen["library"]), seen


def test_clearside_ui_without_streamlit_says_how_to_install_it(monkeypatch, capsys):
    import importlib.util

    from clearside.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "streamlit" else real(name, *a))
    assert main(["ui", "--dry-run"]) == 2
    assert "pip install 'streamlit" in capsys.readouterr().err


def test_an_editable_install_runs_the_checkout_it_points_at(source, tmp_path, outside):
    bin_dir = venv(tmp_path / "editable")
    run(bin_dir / "python", "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-e",
        source, cwd=tmp_path)
    where = run(bin_dir / "python", "-c", "import clearside; print(clearside.__file__)", cwd=outside).stdout.strip()
    assert Path(where).is_relative_to(source), where
    assert json.loads(run(bin_dir / "clearside", "schema", cwd=outside).stdout)["$id"].endswith(".schema.json")


def test_requirements_txt_is_the_packages_dependencies_and_its_test_extra():
    """The README's `pip install -r requirements.txt` and `pip install .[test]` install the same things."""
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["test"]
    assert sorted(line.replace(" ", "") for line in lines if line) == sorted(declared)


def test_the_dashboards_streamlit_settings_are_one_text():
    """``streamlit run app.py`` in a checkout reads .streamlit/config.toml; ``clearside ui`` the packaged copy."""
    assert (ROOT / ".streamlit/config.toml").read_text() == (ROOT / "clearside_ui/streamlit.toml").read_text()


def test_the_dashboards_streamlit_settings_are_safe_by_default_and_each_is_a_streamlit_option():
    from streamlit import config

    from clearside.sources import MAX_BYTES

    settings = tomllib.loads((ROOT / "clearside_ui/streamlit.toml").read_text(encoding="utf-8"))
    named = {f"{section}.{key}": value for section, values in settings.items() for key, value in values.items()}
    unknown = set(named) - set(config.get_config_options())
    assert not unknown, f"not options of the installed Streamlit: {sorted(unknown)}"
    assert {key: named.get(key) for key in ("server.address", "server.enableXsrfProtection", "server.enableCORS",
                                            "client.showErrorDetails", "server.maxUploadSize")} == {
        "server.address": "127.0.0.1", "server.enableXsrfProtection": True, "server.enableCORS": True,
        "client.showErrorDetails": "none", "server.maxUploadSize": MAX_BYTES // 2**20}
    assert "server.runOnSave" not in named and named["server.fileWatcherType"] == "none"


def test_clearside_ui_hands_unknown_options_to_streamlit_and_other_commands_still_refuse_them(capsys):
    from clearside.cli import main

    assert main(["ui", "--port", "8600", "--server.address", "0.0.0.0", "--dry-run"]) == 0
    printed = capsys.readouterr().out.split()
    assert printed[1:4] == ["-m", "streamlit", "run"] and Path(printed[4]) == ROOT / "clearside_ui" / "app.py"
    assert printed[-3:] == ["--server.port=8600", "--server.address", "0.0.0.0"], "given flags come last and win"
    assert main(["schema", "--server.address", "0.0.0.0"]) == 2
    assert "unrecognized arguments: --server.address 0.0.0.0" in capsys.readouterr().err


def test_pages_are_named_relative_to_the_dashboard_package():
    from clearside.modes import MODES
    from clearside_ui import page_path

    for entry in MODES.values():
        for page in (entry.page, entry.watch_page):
            assert Path(page_path(page)) == ROOT / "clearside_ui" / page
    with pytest.raises(FileNotFoundError, match="clearside_ui/app_pages/"):
        page_path("app_pages/nowhere.py")
