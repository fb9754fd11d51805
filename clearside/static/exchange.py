"""A static debate as a file: its v1 document, exported as is and imported across 1.x versions
(docs/design/schema.md#exchange).

The file is the debate's v1 document. When the debate has versions (its re-maps, ``clearside/remap.py``), the
file also has one optional top-level key beside the document's own, ``versions``: a list, oldest first, of

    {"number": 1, "kind": "remap", "label": "economic 3", "provider": "ollama", "model": "llama3.2",
     "created_at": "2026-11-22T08:00:00Z", "body": {"weights": {...}, "stances": [...], "document": {...}}}

(the store's versions, ``body["document"]`` a whole v1 document). The document is the file without that key,
and ClearSide's readers of a document file (``render``, ``challenge``, ``metrics``, ``cruxes``, ``remap``) set it
aside (:func:`document_of`); ``import`` restores the versions on the new debate, numbers and all. A debate with
no versions exports exactly as before: the document alone. A ClearSide older than the key imports such a file as
it does any newer minor version's: the key is set aside in the debate's import record.

When the debate has sources (the files the user attached), the file has a second optional top-level
key, ``sources_files`` (not ``sources``: that is the document's own list of the sources and the passages its
arguments cite): a list, in the debate's order, of the store's sources (``clearside/store/sources.py``)

    {"ref": "S1", "name": "report.pdf", "sha256": "<64 hex: the file's bytes>", "kind": "pdf", "pages": 12,
     "size": 48213, "text": "<the text read from it, verbatim>"}

It travels as ``versions`` does: set aside by :func:`document_of`, restored by ``import`` in the same
transaction (each text stored once), each entry checked first and a malformed one refused by its place, its
label and name (``sources_files[1] (S2 notes.txt)``) and the field, with nothing imported. A source's text is
exported verbatim, never scrubbed (its quotes must verify against it; store/sources.py says why).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..schema import AssumptionStance, Weights
from ..store import Store
from ..store.exchange import Imported, import_record, migrate_document, migration_notes
from ..store.privacy import scrub
from ..store.records import missing_parts
from ..store.sources import SOURCE_FIELDS, sources_problem, where_of
from ..store.versions import VERSION_KINDS, Version

VERSIONS = "versions"  # the export file's optional top-level key: the debate's versions
SOURCES_FILES = "sources_files"  # the other: the debate's sources, with their texts
BESIDE = (VERSIONS, SOURCES_FILES)  # the keys an export file has beside its document's own
VERSION_FIELDS = ("number", "kind", "label", "provider", "model", "created_at", "body")
OPTIONAL_FIELDS = ("label", "provider", "model")  # "" when absent
BODY_FIELDS = ("weights", "stances", "document")  # a re-map's body (remap.save_version)
MAX_PROVIDER = 64  # the store's provider column


def is_document(data: dict[str, Any]) -> bool:
    """Whether an imported file is a v1 document (it has ``meta``)."""
    return "meta" in data


def document_of(data: Any) -> Any:
    """An exported file's v1 document: the file without its ``versions`` and ``sources_files`` keys (anything
    else as it is)."""
    if isinstance(data, dict) and is_document(data) and any(key in data for key in BESIDE):
        return {key: value for key, value in data.items() if key not in BESIDE}
    return data


# -- versions -----------------------------------------------------------------------------------------------------

def exported_version(version: Version) -> dict[str, Any]:
    """One version as the file carries it (the store's fields but the old debate's id)."""
    return {name: getattr(version, name) for name in VERSION_FIELDS}


def _refuse(where: str, problem: str) -> InputError:
    return InputError(f"Not imported: {where}: {problem}. Nothing was changed.")


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()[:4])


def _moment(value: Any, where: str) -> datetime:
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            moment = None
        if moment is not None:
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # as the store writes it: UTC
    raise _refuse(where, f"created_at is {value!r}, not a date and time like 2026-11-22T08:00:00Z")


def _body(body: Any, where: str, path: str, dropped: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _refuse(where, f"body is {type(body).__name__}, not an object with {', '.join(BODY_FIELDS)}")
    missing = [name for name in BODY_FIELDS if name not in body]
    if missing:
        raise _refuse(where, f"body has no {' and no '.join(missing)}")
    try:
        weights = Weights.model_validate(body["weights"]).dump()
    except ValidationError as exc:
        raise _refuse(where, f"body.weights is not a set of weights 0 to 3 by category ({_problems(exc)})") from None
    if not isinstance(body["stances"], list):
        raise _refuse(where, f"body.stances is {type(body['stances']).__name__}, not a list")
    stances = []
    for index, stance in enumerate(body["stances"]):
        try:
            stances.append(AssumptionStance.model_validate(stance).dump())
        except ValidationError as exc:
            raise _refuse(where, f"body.stances[{index}] is not a stance ({_problems(exc)})") from None
    if not isinstance(body["document"], dict):
        raise _refuse(where, f"body.document is {type(body['document']).__name__}, not a ClearSide document")
    try:
        document, _, unknown = migrate_document(body["document"])
    except InputError as exc:
        reason = str(exc).removeprefix("Not imported: ").removesuffix(" Nothing was changed.").rstrip(".")
        raise _refuse(where, f"body.document: {reason}") from None
    dropped.update({f"{path}/body/document/{key}": value for key, value in unknown.items()})
    dropped.update({f"{path}/body/{key}": copy.deepcopy(value) for key, value in body.items()
                    if key not in BODY_FIELDS})
    return {"weights": weights, "stances": stances, "document": document}


def read_versions(value: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ``versions`` of an export file as the store restores them, and the fields set aside
    (``{"versions/0/extra": value}``). Checks every entry before anything is saved; InputError names the entry
    (its place in the list and its number) and the field."""
    if not isinstance(value, list):
        raise InputError(f"Not imported: {VERSIONS} is {type(value).__name__}, not a list of versions. "
                         "Nothing was changed.")
    entries: list[dict[str, Any]] = []
    dropped: dict[str, Any] = {}
    numbers: dict[int, int] = {}
    for position, item in enumerate(value):
        where, path = f"{VERSIONS}[{position}]", f"{VERSIONS}/{position}"
        if not isinstance(item, dict):
            raise _refuse(where, f"it is {type(item).__name__}, not an object with {', '.join(VERSION_FIELDS)}")
        number = item.get("number")
        if type(number) is not int or number < 1:
            raise _refuse(where, f"number is {number!r}, not a whole number from 1")
        where += f" (version {number})"
        if number in numbers:
            raise _refuse(where, f"number {number} is also {VERSIONS}[{numbers[number]}]'s: each version has its "
                                 "own number")
        numbers[number] = position
        missing = [name for name in ("kind", "created_at", "body") if name not in item]
        if missing:
            raise _refuse(where, f"it has no {' and no '.join(missing)}")
        if item["kind"] not in VERSION_KINDS:
            raise _refuse(where, f"kind is {item['kind']!r}; this ClearSide knows {' and '.join(VERSION_KINDS)}")
        texts = {name: item.get(name, "") for name in OPTIONAL_FIELDS}
        for name, text in texts.items():
            if not isinstance(text, str):
                raise _refuse(where, f"{name} is {type(text).__name__}, not text")
        if len(texts["provider"]) > MAX_PROVIDER:
            raise _refuse(where, f"provider is {len(texts['provider'])} characters long, more than {MAX_PROVIDER}")
        created_at = _moment(item["created_at"], where)
        body = _body(item["body"], where, path, dropped)
        dropped.update({f"{path}/{key}": copy.deepcopy(val) for key, val in item.items() if key not in VERSION_FIELDS})
        entries.append({"number": number, "kind": item["kind"], **texts, "created_at": created_at, "body": body})
    return sorted(entries, key=lambda entry: entry["number"]), dropped


# -- sources ------------------------------------------------------------------------------------------------------

def read_sources_files(value: Any, document: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ``sources_files`` of an export file as the store restores them, and the fields set aside
    (``{"sources_files/0/extra": value}``). Every entry is checked before anything is saved (InputError names
    it and the field); a source the document lists (its ``sources``: label and file hash) must be among them,
    with the same file."""
    if not isinstance(value, list):
        raise InputError(f"Not imported: {SOURCES_FILES} is {type(value).__name__}, not a list of sources. "
                         "Nothing was changed.")
    if found := sources_problem(value, SOURCES_FILES):
        raise _refuse(*found)
    listed = {info["ref"]: info for info in document.get("sources") or []}
    entries: list[dict[str, Any]] = []
    dropped: dict[str, Any] = {}
    for index, item in enumerate(value):
        where = where_of(SOURCES_FILES, index, item)
        info = listed.get(item["ref"])
        if info is not None and info.get("sha256") != item["sha256"]:
            raise _refuse(where, f"sha256 is not that of the document's {item['ref']} ({info.get('sha256')})")
        if info is not None and info.get("kind") != item["kind"]:
            raise _refuse(where, f"kind is {item['kind']!r}, but the document's {item['ref']} is {info.get('kind')!r}")
        dropped.update({f"{SOURCES_FILES}/{index}/{key}": copy.deepcopy(val) for key, val in item.items()
                        if key not in SOURCE_FIELDS})
        entries.append({name: item.get(name) for name in SOURCE_FIELDS})
    if value:
        held = {entry["ref"] for entry in entries}
        if missing := [ref for ref in listed if ref not in held]:
            raise _refuse(SOURCES_FILES, f"the document's sources name {', '.join(missing)}, which it does not hold")
    return entries, dropped


def exported_sources(store: Store, debate_id: str) -> list[dict[str, Any]]:
    """The debate's sources as the file carries them, in order, each text verbatim."""
    return [{name: source[name] for name in SOURCE_FIELDS} for source in store.sources(debate_id)]


# -- import and export -------------------------------------------------------------------------------------------

def import_static(store: Store, data: dict[str, Any], source: str) -> Imported:
    """A new debate from the file's document, with the file's versions and sources when it has any: all of it
    or nothing."""
    document, original, dropped = migrate_document(document_of(data))
    versions, versions_dropped = read_versions(data[VERSIONS]) if VERSIONS in data else ([], {})
    files, files_dropped = (read_sources_files(data[SOURCES_FILES], document) if SOURCES_FILES in data
                            else ([], {}))
    dropped = {**dropped, **versions_dropped, **files_dropped}
    debate_id = store.import_static(scrub(document), imported=scrub(import_record(original, dropped, source)),
                                    versions=versions, sources=files)
    if gone := missing_parts(document):  # a persona dropped: listed as partial, as where it was made
        store.update(debate_id, data={"missing": gone})
    notes = migration_notes(original, dropped, document["meta"]["schema_version"])
    if versions:
        notes.append(f"Restored {len(versions)} version{'s' if len(versions) != 1 else ''} (re-maps), numbered as "
                     "in the file.")
    if files:
        notes.append(f"Restored {len(files)} source{'s' if len(files) != 1 else ''} "
                     f"({', '.join(entry['ref'] for entry in files)}).")
    return Imported(debate_id, "static", original, notes)


def finished_document(store: Store, debate_id: str) -> dict[str, Any]:
    """A saved debate's finished v1 document (a live debate's assembled one), or an InputError saying it has none
    yet (an unknown id: the store's NotFound)."""
    record = store.get(debate_id)
    if record.document is None:
        raise InputError(f"Debate {debate_id} has no finished document yet (status {record.status}).")
    return record.document


def export_static(store: Store, debate_id: str) -> dict[str, Any]:
    """The finished debate's v1 document, with every challenge response, its versions under ``versions`` and its
    sources under ``sources_files`` when it has any; secrets scrubbed (but from a source's text)."""
    record = store.get(debate_id)
    if record.document is None:
        raise InputError(f"Debate {debate_id} is not finished ({record.status}), so it has no complete document to "
                         "export yet. Resume it from the Library page or with "
                         f"`python -m clearside debate --resume {debate_id}`.")
    exported = scrub(record.document)
    versions = store.versions(debate_id, bodies=True)
    if versions:
        exported[VERSIONS] = scrub([exported_version(version) for version in versions])
    files = exported_sources(store, debate_id)
    if files:
        exported[SOURCES_FILES] = files  # verbatim: a quote verifies against exactly this text
    return exported
