"""ClearSide: think both sides, decide with clarity.

Separate agents write the strongest case for and against a proposition, a
neutral moderator maps the disagreement, and a challenge agent answers the
user's challenges; everything is one schema-v1 JSON document.
"""

import logging

from .engine import DebateRun, Engine, Event, run_debate, validate_document
from .schema import SCHEMA_VERSION, Document

logging.getLogger("clearside").addHandler(logging.NullHandler())

__all__ = ["SCHEMA_VERSION", "DebateRun", "Document", "Engine", "Event", "run_debate", "validate_document"]
