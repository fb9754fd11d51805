"""The rules every import follows, whatever the kind of file (docs/design/schema.md#exchange); each mode applies them to
its own format.

A static debate exports as its v1 document (the contract every other tool reads),
a live debate as its transcript, a perspectives session as its session file; the
mode registry (``clearside.modes``) says which mode reads which file. The rules:

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
from typing import TYPE_CHECKING, Any

from ..contract import document_validator, stamped, validate_document
from ..errors import InputError
from ..schema import SCHEMA_VERSION
from .records import iso, now

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

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


def migration_notes(original: str, dropped: dict[str, Any], current: str = SCHEMA_VERSION) -> list[str]:
    """What the user is told about a migration (nothing when the file was already ``current``, whole)."""
    notes = []
    if original != current:
        notes.append(f"Migrated from version {original} to {current}.")
    if dropped:
        notes.append(f"Set aside {len(dropped)} field(s) this version does not know, kept in the import record: "
                     + ", ".join(sorted(dropped)[:8]) + ".")
    return notes


def import_record(original: str, dropped: dict[str, Any], source: str) -> dict[str, Any]:
    """What an imported debate keeps about its file: the version it had, the fields set aside, when and whence."""
    return {"from_version": original, "dropped": dropped, "at": iso(now()), "source": source}


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
