"""A live debate in and out of the store: load it from its rows, export and import its transcript file, and
adopt the JSON files an earlier ClearSide kept instead of a database.

Import follows the contract's rules (docs/design/schema.md#exchange, ``clearside.store.exchange``); a
transcript's assembled document is migrated like a static one's.
"""

from __future__ import annotations

import copy
import logging
from functools import cache
from typing import TYPE_CHECKING, Any

from ..errors import ClearSideError, InputError
from ..inputs import read_json
from ..paths import legacy_live_files
from ..store import LiveWriter, Store, check_id, new_id
from ..store.exchange import Imported, check_major, drop_unknown, import_record, migrate_document, migration_notes
from ..store.live import live_rows
from ..store.privacy import scrub
from .evidence import sync_store
from .transcript import TRANSCRIPT_VERSION, Transcript, parse

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator


def load_live(store: Store, debate_id: str) -> Transcript:
    """The saved live transcript, rebuilt from its rows."""
    data = live_rows(store, debate_id)
    known = {k: v for k, v in data.items() if k in Transcript.model_fields}
    return parse(known, f"saved live debate {debate_id}")


def export_live(store: Store, debate_id: str) -> dict[str, Any]:
    """The saved transcript as its file, secrets scrubbed."""
    return scrub(load_live(store, debate_id).model_dump(mode="json"))


def is_transcript(data: dict[str, Any]) -> bool:
    """Whether an imported file is a live transcript (it has ``version`` and ``turns``)."""
    return "turns" in data and "version" in data


@cache
def _transcript_validator() -> Draft202012Validator:
    from ..contract import draft202012  # jsonschema on first use (see there)

    return draft202012()(Transcript.model_json_schema())


def import_live(store: Store, data: dict[str, Any], source: str) -> Imported:
    """Add an exported transcript (any 1.x version) as a new live debate, keeping its id when it is free."""
    original = data.get("version")
    check_major(original, "version", TRANSCRIPT_VERSION)
    transcript_data = copy.deepcopy(data)
    dropped = drop_unknown(transcript_data, _transcript_validator())
    notes = migration_notes(original, dropped, TRANSCRIPT_VERSION)
    if isinstance(transcript_data.get("document"), dict):
        transcript_data["document"], doc_version, doc_dropped = migrate_document(transcript_data["document"])
        dropped.update({f"document/{k}": v for k, v in doc_dropped.items()})
        notes += [f"Its document: {note}" for note in migration_notes(doc_version, doc_dropped)]
    transcript_data["version"] = TRANSCRIPT_VERSION
    try:
        wanted = check_id(str(transcript_data.get("id", "")))
    except InputError:
        wanted = ""
    transcript_data["id"] = wanted if wanted and not store.exists(wanted) else new_id()
    transcript = parse(transcript_data, f"Not imported: {source}")
    writer = LiveWriter(store, transcript.id)
    writer.imported = import_record(original, scrub(dropped), source)
    writer.save(transcript)
    if any(item.source is not None for item in transcript.interventions):  # the files injected as evidence
        count = sync_store(store, transcript)
        notes.append(f"Linked {count} source file{'s' if count != 1 else ''} injected as evidence.")
    return Imported(transcript.id, "live", original, notes)


def adopt_live_files(store: Store) -> list[str]:
    """Import each legacy live file whose id the store lacks; the files are left in place.

    The entry points that open a store for a person call this: the dashboard once per database
    (``clearside_ui.jobs.adopt_live_files``), the command line when such files exist (``clearside.cli.main``)."""
    adopted = []
    for path in legacy_live_files():
        if store.exists(path.stem):
            continue
        try:
            adopted.append(import_transcript_file(store, str(path)).id)
        except ClearSideError as exc:  # unreadable: keep the file, say why, go on
            logging.getLogger("clearside.live").warning("Not adopted %s: %s", path, exc)
    return adopted


def import_transcript_file(store: Store, path: str) -> Imported:
    """Import a transcript file (``live --resume FILE.json``, an adopted legacy file)."""
    data = read_json(path, "the import file")
    if not isinstance(data, dict) or not is_transcript(data):
        raise InputError(f"Not imported: {path} is not a ClearSide live transcript (with version and turns); "
                         "import other debates with `python -m clearside import FILE`.")
    return import_live(store, data, path)
