"""What the store hands back (plain frozen dataclasses) and the small value helpers every store module shares."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from ..errors import NotFound
from ..inputs import shown
from ..schema import SCHEMA_VERSION
from .tables import Debate

KINDS = ("static", "live", "perspectives")
SEARCH_LIMIT = 20_000  # characters of a debate's text kept for search


def now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # SQLite hands back naive UTC
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_id() -> str:
    return uuid.uuid4().hex


def check_id(debate_id: str) -> str:
    debate_id = (debate_id or "").strip().lower()
    if len(debate_id) != 32 or any(c not in "0123456789abcdef" for c in debate_id):
        named = shown(debate_id)  # a long or hostile value cut and escaped
        raise NotFound(f"'{named}' is not a debate id (32 hex characters, as `python -m clearside list` shows).",
                       dashboard=f"'{named}' is not a debate id: check the link, or find the debate in the Library.")
    return debate_id


def document_text(document: dict[str, Any] | None) -> list[str]:
    """The searchable text of a v1 document: proposition, claims, summaries, hinges."""
    if not document:
        return []
    texts = [document.get("proposition", {}).get("normalized_question", "")]
    for side in ("pro", "con"):
        part = document.get(side) or {}
        texts += part.get("executive_summary", [])
        texts += [f"{a.get('claim', '')} {a.get('explanation', '')}" for a in part.get("arguments", [])]
        texts += part.get("assumptions", [])
    texts += (document.get("moderator") or {}).get("decision_hinges", [])
    return texts


def search_text(*texts: str) -> str:
    return " ".join(" ".join(t.split()) for t in texts if t).lower()[:SEARCH_LIMIT]


SUMMARY_COLUMNS = (Debate.id, Debate.kind, Debate.status, Debate.title, Debate.question, Debate.provider,
                   Debate.model, Debate.created_at, Debate.updated_at, Debate.parent_id)


@dataclass(frozen=True)
class Summary:
    """One saved debate as a list shows it (no document)."""

    id: str
    kind: str
    status: str
    title: str
    question: str
    provider: str
    model: str
    created_at: str
    updated_at: str
    parent_id: str | None

    @classmethod
    def of(cls, row: Any) -> Summary:
        """From a ``Debate`` row or a result row holding the summary columns."""
        return cls(id=row.id, kind=row.kind, status=row.status, title=row.title, question=row.question,
                   provider=row.provider, model=row.model, created_at=iso(row.created_at),
                   updated_at=iso(row.updated_at), parent_id=row.parent_id)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Record(Summary):
    """One saved debate in full: its data (context, usage, live header) and assembled document."""

    prompt_versions: dict[str, Any] | None = None
    schema_version: str = SCHEMA_VERSION
    data: dict[str, Any] | None = None
    document: dict[str, Any] | None = None


@dataclass(frozen=True)
class Page:
    items: list[Summary]
    total: int
