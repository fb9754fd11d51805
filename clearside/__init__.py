"""ClearSide: think both sides, decide with clarity.

Separate agents write the strongest case for and against a proposition, a
neutral moderator maps the disagreement, and a challenge agent answers the
user's challenges; everything is one schema-v1 JSON document.

The names below are imported on first use (``clearside.Engine``, ``from clearside import Engine``), not with the
package: ``python -m clearside --help`` and the other entry points load only what their command needs.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .contract import validate_document
    from .runtime.events import Event
    from .schema import SCHEMA_VERSION, Document
    from .static.engine import Engine, run_debate
    from .static.run import DebateRun
    from .store.records import missing_parts, partial_notice

logging.getLogger("clearside").addHandler(logging.NullHandler())

_LAZY = {"DebateRun": "static.engine", "Engine": "static.engine", "Event": "runtime.events",
         "run_debate": "static.engine", "validate_document": "contract",
         "SCHEMA_VERSION": "schema", "Document": "schema",
         # a partial debate (a persona dropped, a section missing): what it lacks, and the line that says so
         "missing_parts": "store.records", "partial_notice": "store.records"}

__all__ = ["SCHEMA_VERSION", "DebateRun", "Document", "Engine", "Event", "missing_parts", "partial_notice",
           "run_debate", "validate_document"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
