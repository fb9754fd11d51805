"""The v1 contract beyond its models (:mod:`clearside.schema`): the JSON Schema exported from them (in
``clearside/data/schemas/``), a document validated against that schema and the models, the version a document is
stamped with, and the meta values an assembled document carries (``generated_at``, ``confidence_level``).

jsonschema is imported by the first validation, not with this module (see :func:`draft202012`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema

from .errors import InputError
from .schema import SCHEMA_VERSION, Document, Side

if TYPE_CHECKING:  # jsonschema is imported by the first validation: importing it takes ~0.8 s (see _validator)
    from jsonschema import Draft202012Validator

SCHEMA_DIR = Path(__file__).resolve().parent / "data" / "schemas"
SCHEMA_FILE = SCHEMA_DIR / f"clearside-{SCHEMA_VERSION}.schema.json"
BASE_VERSION = "1.0.0"  # what a document that uses no 1.1 addition is stamped


class _ContractSchema(GenerateJsonSchema):
    """Optional keys are simply not required: no ``null`` branch, no ``default: null``."""

    def nullable_schema(self, schema):  # type: ignore[override]
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema):  # type: ignore[override]
        json_schema = self.generate_inner(schema["schema"])
        default = schema.get("default")
        if default is None or isinstance(default, list):
            return json_schema
        return super().default_schema(schema)


def json_schema(model: type[BaseModel] = Document) -> dict[str, Any]:
    """The Draft 2020-12 JSON Schema of a model, as exported to ``clearside/data/schemas/``."""
    schema = model.model_json_schema(schema_generator=_ContractSchema)
    if model is Document:
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    return schema


def schema_file_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def draft202012() -> type[Draft202012Validator]:
    """jsonschema's ``Draft202012Validator``, imported on first use, without its ``iri`` format checker.

    Importing jsonschema loads every format checker it can, and where the package ``rfc3987_syntax`` is
    installed (jsonschema's ``format-nongpl`` extra) its ``iri`` checker builds a Lark grammar at import: 0.8 s
    on a quiet 2-core machine, 1.8 s on a busy one, paid by the first debate of every process. No ClearSide
    schema uses ``iri`` or ``iri-reference`` (the formats checked are ``date-time``), so the import runs with that
    package hidden, and it is importable again afterwards. Commands that validate nothing (``--help``, ``list``,
    a worker's start) never import jsonschema at all."""
    import sys

    if "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # an ImportError, which jsonschema skips
        try:
            import jsonschema  # noqa: F401  (imported for its side effect: loaded once, here)
        finally:
            del sys.modules["rfc3987_syntax"]
    from jsonschema import Draft202012Validator

    return Draft202012Validator


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    """A Draft 2020-12 validator of ``schema`` that checks formats (the schemas use ``date-time``)."""
    validator = draft202012()
    return validator(schema, format_checker=validator.FORMAT_CHECKER)


@lru_cache(maxsize=1)
def document_validator() -> Draft202012Validator:
    """The validator of the exported v1 JSON Schema (the schema file when present)."""
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) if SCHEMA_FILE.exists() else json_schema()
    return _validator(schema)


@lru_cache(maxsize=1)
def base_validator() -> Draft202012Validator:
    """The validator of the 1.0.0 schema: what a 1.0 reader accepts."""
    schema = json.loads((SCHEMA_DIR / f"clearside-{BASE_VERSION}.schema.json").read_text(encoding="utf-8"))
    return _validator(schema)


def version_for(document: dict[str, Any]) -> str:
    """The version a document is stamped with: 1.0.0 when a 1.0 reader accepts it as it is, else the current one."""
    probe = {**document, "meta": {**document.get("meta", {}), "schema_version": BASE_VERSION}}
    return BASE_VERSION if base_validator().is_valid(probe) else SCHEMA_VERSION


def stamped(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with ``meta.schema_version`` set by :func:`version_for` (in place, and returned)."""
    document["meta"]["schema_version"] = version_for(document)
    return document


def jsonschema_errors(document: dict[str, Any]) -> list[str]:
    """Every violation of the exported JSON Schema, as readable lines."""
    errors = sorted(document_validator().iter_errors(document), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors]


def validate_document(data: dict[str, Any]) -> Document:
    """Validate a document with pydantic and the exported JSON Schema; raises InputError listing problems."""
    errors = jsonschema_errors(data)
    if errors:
        raise InputError("Not a valid ClearSide v1 document: " + "; ".join(errors[:8]))
    return Document.model_validate(data)


def utc_stamp() -> str:
    """Now, in UTC to the second, as a document's ``generated_at`` writes it (``2026-11-24T08:00:00Z``)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def overall_confidence(pro: Side, con: Side) -> str:
    levels = {"low": 0, "medium": 1, "high": 2}
    scores = [levels[a.confidence] for a in (*pro.arguments, *con.arguments)]
    return ("low", "medium", "high")[round(sum(scores) / len(scores))]
