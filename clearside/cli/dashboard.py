"""``clearside ui``: the dashboard (clearside_ui) under ``python -m streamlit run``, wherever it is installed.

The core never imports Streamlit or the dashboard: the package is found with ``importlib.util.find_spec`` and
Streamlit replaces this process (``os.execv``), so a signal meant for ``clearside ui`` (Ctrl+C, a service manager's
SIGTERM) reaches the server itself: a child left behind would keep the port. Its settings
(clearside_ui/streamlit.toml, the same text as a checkout's .streamlit/config.toml) go to Streamlit as flags, so
they hold from any directory; flags given after them win.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from ..errors import ConfigError

PASSTHROUGH = "passthrough"  # the Namespace attribute that lets main() hand unknown arguments to this command


def app_file() -> Path:
    """The installed (or checked-out) clearside_ui/app.py."""
    spec = importlib.util.find_spec("clearside_ui")
    if spec is None or not spec.origin:
        raise ConfigError("The dashboard package clearside_ui is not installed: reinstall ClearSide "
                          "(pip install . from a checkout).")
    return Path(spec.origin).resolve().parent / "app.py"


def settings_flags(app: Path) -> list[str]:
    """clearside_ui/streamlit.toml as ``--section.key=value`` flags."""
    path = app.parent / "streamlit.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"The dashboard's settings {path} are missing or malformed ({exc}): "
                          "reinstall ClearSide.") from exc
    flags = []
    for section, values in data.items():
        for key, value in values.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            flags.append(f"--{section}.{key}={text}")
    return flags


def command(args: argparse.Namespace) -> list[str]:
    """The Streamlit command line ``clearside ui`` runs."""
    if importlib.util.find_spec("streamlit") is None:
        raise ConfigError("The dashboard needs Streamlit, which is not installed: pip install 'streamlit~=1.67.0' "
                          "(or install ClearSide with its dependencies: pip install .).")
    app = app_file()
    port = [f"--server.port={args.port}"] if args.port is not None else []
    extra = [arg for arg in args.streamlit_args if arg != "--"]
    return [sys.executable, "-m", "streamlit", "run", str(app), *settings_flags(app), *port, *extra]


def cmd_ui(args: argparse.Namespace) -> int:
    cmd = command(args)
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    print(f"Starting the dashboard: {' '.join(cmd[1:4])} {cmd[4]}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os.execv(cmd[0], cmd)  # Streamlit becomes this process: it gets the signals (returns only on failure)
    return 1


def add_parser(sub: Any) -> None:
    ui = sub.add_parser("ui", help="start the dashboard (python -m streamlit run clearside_ui/app.py); any other "
                                   "arguments go to streamlit run, e.g. --server.address 0.0.0.0")
    ui.add_argument("--port", type=int, metavar="N", help="the port to serve on (Streamlit's default: 8501)")
    ui.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    ui.set_defaults(func=cmd_ui, streamlit_args=[], **{PASSTHROUGH: True})
