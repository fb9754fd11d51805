"""The understanding check's answers in a static debate's export file, under ``understanding``: each answer's stage,
when it was given, its reasons, lean and confidence, in the order given; never the browser token (it names a browser
of the store that exported them, so imported answers belong to no browser: the command line lists them). An import
reads them as strictly as a person's new answer, and refuses the whole file when one is malformed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ...errors import InputError
from ...store import Store
from .answers import answer

KEY = "understanding"
MAX_ANSWERS = 200


def exported(store: Store, debate_id: str) -> list[dict[str, Any]]:
    """The debate's answers as the file carries them (empty: the file has no ``understanding`` key)."""
    return [{"stage": row.stage, "answered_at": row.created_at, **row.body} for row in store.answers(debate_id)]


def _moment(value: Any, where: str) -> datetime:
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"Not imported: {where}.answered_at is {str(value)[:40]!r}, not a date and time like "
                         "2026-12-01T10:00:00Z. Nothing was changed.") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def read(value: Any) -> list[dict[str, Any]]:
    """The file's answers checked, as the store restores them (``stage``, ``body``, ``created_at``)."""
    if not isinstance(value, list) or len(value) > MAX_ANSWERS:
        raise InputError(f"Not imported: {KEY} must be a list of at most {MAX_ANSWERS} answers. Nothing was changed.")
    entries = []
    for number, item in enumerate(value, start=1):
        where = f"{KEY}[{number}]"
        if not isinstance(item, dict):
            raise InputError(f"Not imported: {where} is not an object. Nothing was changed.")
        try:
            checked = answer(item.get("stage"), item.get("reasons_for"), item.get("reasons_against"),
                             lean_value=item.get("lean"), confidence_value=item.get("confidence"))
        except InputError as exc:
            raise InputError(f"Not imported: {where}: {exc} Nothing was changed.") from None
        entries.append({"stage": checked.stage, "body": checked.body(),
                        "created_at": _moment(item.get("answered_at"), where)})
    return entries
