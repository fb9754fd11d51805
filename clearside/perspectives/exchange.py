"""A perspectives session as a file: exported as the session file ``perspectives --out`` writes.

Sessions are not imported: a session file carries no schema version to migrate from, so the import
command refuses it with a message saying so (``clearside.modes.import_data``).
"""

from __future__ import annotations

from typing import Any

from ..store import Store
from ..store.privacy import scrub
from .runner import load


def export_perspectives(store: Store, debate_id: str) -> dict[str, Any]:
    """The saved session as its file, secrets scrubbed."""
    return scrub(load(store, debate_id).file())
