"""Saved debates: SQLite by default, PostgreSQL when ``DATABASE_URL`` says so (see ``db``).

``open_store()`` returns one :class:`Store` per database URL for the whole
process, so the dashboard, its worker threads and the CLI share an engine. Only
entry points (the dashboard, the command line) call it; the core takes the
store as an argument. The store is a leaf: it imports ``schema``, ``contract``, ``errors``,
``inputs``, ``paths`` and its own modules, never a mode (``.importlinter`` checks this).
"""

from __future__ import annotations

import threading

from .db import data_dir, database_url, safe_url
from .live import LiveWriter
from .store import KINDS, ListQuery, NewDebate, NewRun, Page, Record, Store, Summary, check_id, new_id

_stores: dict[str, Store] = {}
_lock = threading.Lock()


def open_store(url: str | None = None) -> Store:
    """The store for ``url`` (default: ``DATABASE_URL`` or the SQLite file), opened and migrated once."""
    resolved = database_url(url)
    with _lock:
        store = _stores.get(resolved)
        if store is None:
            store = _stores[resolved] = Store(resolved)
        return store


__all__ = ["KINDS", "ListQuery", "LiveWriter", "NewDebate", "NewRun", "Page", "Record", "Store", "Summary",
           "check_id", "data_dir", "database_url", "new_id", "open_store", "safe_url"]
