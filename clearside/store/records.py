"""What the store hands back (plain frozen dataclasses) and the small value helpers every store module shares."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
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


@dataclass(frozen=True)
class NewDebate:
    """A debate to save (:meth:`~clearside.store.debates.Debates.create`): its kind, the user's question and the
    provider and model that make it; ``title`` defaults to the question, ``debate_id`` to a new id and
    ``created_at`` to now; ``parent_id``: the debate it was copied or derived from."""

    kind: str
    question: str
    provider: str
    model: str
    title: str = ""
    prompt_versions: dict[str, str] | None = None
    data: dict[str, Any] | None = None
    document: dict[str, Any] | None = None
    status: str = "running"
    parent_id: str | None = None
    schema_version: str = SCHEMA_VERSION
    debate_id: str | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class ListQuery:
    """Which saved debates a list shows (:meth:`~clearside.store.debates.Debates.list`), newest first.

    ``search`` matches every word in the question, title, claims and hinges; ``kind``, ``provider``, ``model`` and
    ``status`` must match when given; ``since`` and ``until`` bound the creation time (``until`` is inclusive of
    that whole day when given as a date); ``origin``: ``"own"`` for the debates people made, ``"runs"`` for those
    a comparison or regression run made (a ``runs`` row names them), None for all; ``owner``: only the debates of
    that owner (``data["owner"]``: a browser's token, or an API token's ``api-`` id), None for anyone's; ``limit``
    and ``offset``: the page."""

    search: str = ""
    kind: str | None = None
    provider: str | None = None
    model: str | None = None
    since: date | datetime | None = None
    until: date | datetime | None = None
    status: str | None = None
    origin: str | None = None
    owner: str | None = None
    limit: int = 50
    offset: int = 0


@dataclass(frozen=True)
class NewRun:
    """A run of a comparison or a regression suite to save (:meth:`~clearside.store.runs.Runs.add_run`): its
    suite, provider and model, the debate it generated, its metrics and data (``data["batch"]``: its batch);
    ``run_id``: the row to write afresh (a re-run after a crash), else a new one."""

    suite: str
    provider: str
    model: str
    debate_id: str | None = None
    prompt_versions: dict[str, str] | None = None
    status: str = "running"
    metrics: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    run_id: str | None = None


# ---- partial debates ------------------------------------------------------------------------------------------

PARTS = {"proposition": "the proposition", "pro": "the case for", "con": "the case against",
         "moderator": "the moderator's synthesis"}
PERSONA_DROPPED = "persona_dropped"  # the quality check of a persona dropped from its debate (item text: its name)
PARTIAL = "partial"  # the label beside a partial debate's status


def missing_parts(parts: dict[str, Any] | None) -> list[str]:
    """What a static debate lacks to be whole, in the reader's words (``[]``: it is whole): the sections never
    written ("the case against", "the moderator's synthesis") and the personas whose case is not in it ("persona
    'ethicist'"). The one definition of a *partial* debate: one for which this is not empty is labelled partial
    wherever it shows (:func:`partial_notice`, :func:`status_label`).

    ``parts``: a document (``Document.dump()``), or the sections a debate holds as the store saves them (name to
    body, a persona debate's panel with the cases that landed: ``Store.sections``, ``DebateRun.sections()``)."""
    parts = parts or {}
    gone = [label for name, label in PARTS.items() if not parts.get(name)]
    panel = parts.get("personas")
    if isinstance(panel, dict):  # a saved panel: the personas picked and the cases that landed
        cases = panel.get("cases") or {}
        names = [p.get("name", "") for i, p in enumerate(panel.get("personas") or []) if str(i) not in cases]
    else:  # a document's cases: the personas dropped are in its quality record
        agents = (parts.get("quality") or {}).get("agents") or {}
        names = [item.get("text") or "" for record in agents.values() for item in record.get("items", [])
                 if item.get("check") == PERSONA_DROPPED]
    return gone + [f"persona '{name}'" for name in names]


def partial_notice(gone: list[str]) -> str | None:
    """The line a partial debate opens with wherever it shows, from :func:`missing_parts` (``None``: whole), e.g.
    "Partial debate: the moderator's synthesis is missing." """
    if not gone:
        return None
    listed = gone[0] if len(gone) == 1 else f"{', '.join(gone[:-1])} and {gone[-1]}"
    return f"Partial debate: {listed} {'is' if len(gone) == 1 else 'are'} missing."


def status_label(status: str, gone: list[str] | None) -> str:
    """A debate's status as a list shows it: ``"failed (partial)"`` for a debate that stopped with sections kept or
    finished without a part (:func:`missing_parts`); a queued or running one is still being written."""
    return f"{status} ({PARTIAL})" if gone and status not in ("queued", "running") else status
