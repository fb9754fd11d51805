"""A static debate as a file: its v1 document, exported as is and imported across 1.x versions (spec 002)."""

from __future__ import annotations

import copy
from typing import Any

from ..errors import InputError
from ..schema import SCHEMA_VERSION, document_validator, stamped, validate_document
from ..store import Store
from ..store.exchange import Imported, check_major, drop_unknown, import_record, migration_notes
from ..store.privacy import scrub


def is_document(data: dict[str, Any]) -> bool:
    """Whether an imported file is a v1 document (it has ``meta``)."""
    return "meta" in data


def migrate_document(data: dict[str, Any]) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """A v1 document of any 1.x version as a valid current one: ``(document, original version, dropped)``."""
    if not isinstance(data.get("meta"), dict):
        raise InputError("Not imported: the file has no meta.schema_version, so it is not a ClearSide document.")
    original = data["meta"].get("schema_version")
    check_major(original, "meta.schema_version", SCHEMA_VERSION)
    document = copy.deepcopy(data)
    dropped = drop_unknown(document, document_validator())
    stamped(document)  # 1.0.0 unless it uses a 1.1 addition
    try:
        validate_document(document)
    except InputError as exc:
        raise InputError(f"Not imported: {exc} Nothing was changed.") from None
    return document, original, dropped


def import_static(store: Store, data: dict[str, Any], source: str) -> Imported:
    document, original, dropped = migrate_document(data)
    debate_id = store.import_static(scrub(document), imported=scrub(import_record(original, dropped, source)))
    return Imported(debate_id, "static", original,
                    migration_notes(original, dropped, document["meta"]["schema_version"]))


def export_static(store: Store, debate_id: str) -> dict[str, Any]:
    """The finished debate's v1 document, with every challenge response, secrets scrubbed."""
    record = store.get(debate_id)
    if record.document is None:
        raise InputError(f"Debate {debate_id} is not finished ({record.status}), so it has no complete document to "
                         "export yet. Resume it from the Library page or with "
                         f"`python -m clearside debate --resume {debate_id}`.")
    return scrub(record.document)
