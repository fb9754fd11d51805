"""Export saved debates as JSON files and import them back, across schema versions (spec 002).

A static debate exports as its v1 document (the contract every other tool reads);
a live debate as its transcript. Import reads either, and applies spec 002's rules:

* ``schema_version`` (a transcript's ``version``) must be ``MAJOR.MINOR.PATCH``; a
  major version other than this ClearSide's is refused, since a major change may
  add required fields or change types.
* Any other minor or patch version of the same major is migrated: minor versions
  only ever add optional fields, so fields this version does not know are removed
  (their values are kept in the debate's import record, nothing is lost), the rest
  is validated, and the version is stamped as the current one.

A refused file raises :class:`~clearside.errors.InputError` and leaves the store
exactly as it was: each import is one transaction.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from ..engine import validate_document
from ..errors import InputError
from ..inputs import read_json
from ..schema import SCHEMA_VERSION, _validator
from .live import LiveWriter, load_live
from .privacy import scrub
from .store import Store, check_id, iso, new_id, now

VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


@dataclass
class Imported:
    id: str
    kind: str
    from_version: str
    notes: list[str] = field(default_factory=list)


def version_parts(value: Any, where: str) -> tuple[int, int, int]:
    match = VERSION.match(value) if isinstance(value, str) else None
    if match is None:
        raise InputError(f"Not imported: {where} is {value!r}, not a version like {SCHEMA_VERSION}. "
                         "Is this a ClearSide export?")
    return int(match[1]), int(match[2]), int(match[3])


def check_major(value: Any, where: str, current: str) -> None:
    major = version_parts(value, where)[0]
    if major != version_parts(current, "current")[0]:
        raise InputError(f"Not imported: {where} is {value}, major version {major}; this ClearSide reads "
                         f"{current.split('.')[0]}.x files only (a new major version may add required fields "
                         "or change types). Nothing was changed.")


def _additional(errors) -> list[tuple[list[Any], list[str]]]:
    """Every ``additionalProperties`` failure, including those nested in anyOf/oneOf branches."""
    found = []
    for error in errors:
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = set(error.schema.get("properties", {}))
            found.append((list(error.absolute_path), sorted(set(error.instance) - known)))
        found += _additional(error.context or [])
    return found


def drop_unknown(data: dict[str, Any], validator: Draft202012Validator) -> dict[str, Any]:
    """Remove fields the schema does not define; returns them as ``{"a/b/0/c": value}``."""
    dropped: dict[str, Any] = {}
    for _ in range(20):  # nested unknowns surface once their parent is valid
        progress = False
        for path, names in _additional(validator.iter_errors(data)):
            node: Any = data
            try:
                for part in path:
                    node = node[part]
            except (KeyError, IndexError, TypeError):
                continue
            for name in names:
                if isinstance(node, dict) and name in node:
                    dropped["/".join(map(str, [*path, name]))] = node.pop(name)
                    progress = True
        if not progress:
            break
    return dropped


def migrate_document(data: dict[str, Any]) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """A v1 document of any 1.x version as a valid current one: ``(document, original version, dropped)``."""
    if not isinstance(data.get("meta"), dict):
        raise InputError("Not imported: the file has no meta.schema_version, so it is not a ClearSide document.")
    original = data["meta"].get("schema_version")
    check_major(original, "meta.schema_version", SCHEMA_VERSION)
    document = copy.deepcopy(data)
    dropped = drop_unknown(document, _validator())
    document["meta"]["schema_version"] = SCHEMA_VERSION
    try:
        validate_document(document)
    except InputError as exc:
        raise InputError(f"Not imported: {exc} Nothing was changed.") from None
    return document, original, dropped


@cache
def _transcript_validator() -> Draft202012Validator:
    from ..live.transcript import Transcript

    return Draft202012Validator(Transcript.model_json_schema())


def _notes(original: str, dropped: dict[str, Any], current: str = SCHEMA_VERSION) -> list[str]:
    """What the user is told about a migration (nothing when the file was already ``current``, whole)."""
    notes = []
    if original != current:
        notes.append(f"Migrated from version {original} to {current}.")
    if dropped:
        notes.append(f"Set aside {len(dropped)} field(s) this version does not know, kept in the import record: "
                     + ", ".join(sorted(dropped)[:8]) + ".")
    return notes


def import_data(store: Store, data: Any, source: str = "the file") -> Imported:
    """Add one exported debate to ``store``; refuses (InputError) anything it cannot read faithfully."""
    if not isinstance(data, dict):
        raise InputError(f"Not imported: {source} holds JSON but not a ClearSide debate (expected an object).")
    if "turns" in data and "version" in data:
        return _import_live(store, data, source)
    if "meta" in data:
        return _import_static(store, data, source)
    raise InputError(f"Not imported: {source} is neither a ClearSide debate document (with meta.schema_version) "
                     "nor a live transcript (with version and turns).")


def _import_static(store: Store, data: dict[str, Any], source: str) -> Imported:
    document, original, dropped = migrate_document(data)
    record = {"from_version": original, "dropped": dropped, "at": iso(now()), "source": source}
    debate_id = store.import_static(scrub(document), imported=scrub(record))
    return Imported(debate_id, "static", original, _notes(original, dropped))


def _import_live(store: Store, data: dict[str, Any], source: str) -> Imported:
    from ..live.transcript import TRANSCRIPT_VERSION, parse

    original = data.get("version")
    check_major(original, "version", TRANSCRIPT_VERSION)
    transcript_data = copy.deepcopy(data)
    dropped = drop_unknown(transcript_data, _transcript_validator())
    notes = _notes(original, dropped, TRANSCRIPT_VERSION)
    if isinstance(transcript_data.get("document"), dict):
        transcript_data["document"], doc_version, doc_dropped = migrate_document(transcript_data["document"])
        dropped.update({f"document/{k}": v for k, v in doc_dropped.items()})
        notes += [f"Its document: {note}" for note in _notes(doc_version, doc_dropped)]
    transcript_data["version"] = TRANSCRIPT_VERSION
    try:
        wanted = check_id(str(transcript_data.get("id", "")))
    except InputError:
        wanted = ""
    transcript_data["id"] = wanted if wanted and not store.exists(wanted) else new_id()
    transcript = parse(transcript_data, f"Not imported: {source}")
    writer = LiveWriter(store, transcript.id)
    writer.imported = {"from_version": original, "dropped": scrub(dropped), "at": iso(now()), "source": source}
    writer.save(transcript)
    return Imported(transcript.id, "live", original, notes)


def import_file(store: Store, path: str) -> Imported:
    return import_data(store, read_json(path, "the import file"), path)


def export_data(store: Store, debate_id: str) -> dict[str, Any]:
    """The debate as its file: a v1 document (static), a transcript (live) or a session file (perspectives);
    secrets scrubbed."""
    record = store.get(debate_id)
    if record.kind == "live":
        return scrub(load_live(store, debate_id).model_dump(mode="json"))
    if record.kind == "perspectives":  # the session file, as `perspectives --out` writes it
        from ..perspectives import load

        return scrub(load(store, debate_id).file())
    if record.document is None:
        raise InputError(f"Debate {debate_id} is not finished ({record.status}), so it has no complete document to "
                         "export yet. Resume it from the Library page or with "
                         f"`python -m clearside debate --resume {debate_id}`.")
    return scrub(record.document)
