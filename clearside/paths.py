"""Where ClearSide keeps its files: the data folder, ``$CLEARSIDE_DATA`` (default ``~/.clearside``).

A module of its own that imports nothing of ClearSide's, so an entry point can look in the folder before it imports
the store: the command line checks for an earlier ClearSide's live files on every command (``clearside.cli.main``),
``--help`` and ``schema`` included, and importing the store (SQLAlchemy, Alembic) would cost them ~0.4 s.
"""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    return Path(os.environ.get("CLEARSIDE_DATA", "~/.clearside")).expanduser()


def legacy_live_files() -> list[Path]:
    """The transcripts an earlier ClearSide kept as ``$CLEARSIDE_DATA/live/<id>.json`` files (no store needed);
    ``clearside.live.exchange.adopt_live_files`` takes them into the store."""
    folder = data_dir() / "live"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []
