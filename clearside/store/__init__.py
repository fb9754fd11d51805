"""Saved debates: SQLite by default, PostgreSQL when ``DATABASE_URL`` says so (see ``db``).

``open_store()`` returns one :class:`Store` per database URL for the whole
process, so the dashboard, its worker threads and the CLI share an engine.
"""

from __future__ import annotations

import logging
import threading

from ..errors import ClearSideError
from .db import data_dir, database_url, safe_url
from .live import LiveWriter, load_live
from .store import KINDS, Page, Record, Store, Summary, check_id, new_id

_stores: dict[str, Store] = {}
_lock = threading.Lock()


def open_store(url: str | None = None) -> Store:
    """The store for ``url`` (default: ``DATABASE_URL`` or the SQLite file), opened and migrated once.

    The first open also adopts live transcripts an earlier ClearSide kept as JSON files
    in ``$CLEARSIDE_DATA/live`` (see :func:`adopt_live_files`)."""
    resolved = database_url(url)
    with _lock:
        store = _stores.get(resolved)
        if store is None:
            store = _stores[resolved] = Store(resolved)
            adopt_live_files(store)
        return store


def adopt_live_files(store: Store) -> list[str]:
    """Import each ``$CLEARSIDE_DATA/live/<id>.json`` whose id the store lacks; the files are left in place."""
    from .exchange import import_file

    folder = data_dir() / "live"
    adopted = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if store.exists(path.stem):
            continue
        try:
            adopted.append(import_file(store, str(path)).id)
        except ClearSideError as exc:  # unreadable: keep the file, say why, go on
            logging.getLogger("clearside.store").warning("Not adopted %s: %s", path, exc)
    return adopted


__all__ = ["KINDS", "LiveWriter", "Page", "Record", "Store", "Summary", "adopt_live_files", "check_id", "data_dir",
           "database_url", "load_live", "new_id", "open_store", "safe_url"]
