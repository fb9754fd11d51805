"""Versions of a static debate: each re-map, with the user's value weights and assumption stances it was made under.

A version is a numbered row of ``debate_versions`` beside the debate; the debate's own row, document and
sections are never touched, so the original stays as it was generated. Values are plain dicts (the store
knows no engine): ``body`` holds ``weights``, ``stances`` and the re-mapped ``document``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..errors import InputError, NotFound
from .database import Database
from .privacy import scrub
from .records import check_id, iso, now
from .tables import DebateVersion

VERSION_KINDS = ("remap",)  # the kind column leaves room for other kinds of version


@dataclass(frozen=True)
class Version:
    """One saved version; ``body`` is None in lists (read one version for it)."""

    debate_id: str
    number: int
    kind: str
    label: str
    provider: str
    model: str
    created_at: str
    body: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _of(row: DebateVersion, body: bool) -> Version:
    return Version(debate_id=row.debate_id, number=row.number, kind=row.kind, label=row.label,
                   provider=row.provider, model=row.model, created_at=iso(row.created_at),
                   body=copy.deepcopy(row.body) if body else None)


class Versions(Database):
    """The ``debate_versions`` table."""

    def add_version(self, debate_id: str, kind: str, body: dict[str, Any], *, label: str = "", provider: str = "",
                    model: str = "") -> int:
        """Save the next version of a debate; returns its number (1 for the first)."""
        if kind not in VERSION_KINDS:
            raise InputError(f"Unknown version kind {kind!r}: use {' or '.join(VERSION_KINDS)}.")
        with self.write() as session:
            row = self.debate_row(session, debate_id, lock=True)  # numbers are taken one writer at a time
            last = session.scalar(select(func.max(DebateVersion.number)).where(DebateVersion.debate_id == row.id))
            number = (last or 0) + 1
            session.add(DebateVersion(debate_id=row.id, number=number, kind=kind, label=scrub(label),
                                      body=scrub(body), provider=provider, model=scrub(model), created_at=now()))
        return number

    def versions(self, debate_id: str, *, bodies: bool = False) -> list[Version]:
        """The debate's versions, oldest first, without their bodies unless ``bodies`` (an export wants them)."""
        with self.read() as session:
            row = self.debate_row(session, debate_id)
            rows = session.scalars(select(DebateVersion).where(DebateVersion.debate_id == row.id)
                                   .order_by(DebateVersion.number)).all()
            return [_of(r, body=bodies) for r in rows]

    def version_counts(self, debate_ids: Iterable[str]) -> dict[str, int]:
        """How many versions each of these debates has (0 for none, or for an id no debate has), in one query:
        a page of the Library asks once for all its rows."""
        ids = list(dict.fromkeys(check_id(i) for i in debate_ids))
        if not ids:
            return {}
        with self.read() as session:
            counted = {debate_id: count for debate_id, count in session.execute(
                select(DebateVersion.debate_id, func.count()).where(DebateVersion.debate_id.in_(ids))
                .group_by(DebateVersion.debate_id))}
        return {i: int(counted.get(i, 0)) for i in ids}

    def version(self, debate_id: str, number: int) -> Version:
        """One version with its body."""
        with self.read() as session:
            row = self.debate_row(session, debate_id)
            found = session.get(DebateVersion, (row.id, int(number)))
            if found is None:
                raise NotFound(f"Debate {row.id} has no version {number}: `python -m clearside remap --versions "
                               f"{row.id}` lists them.", dashboard=f"This debate has no version {number}.")
            return _of(found, body=True)


def restore_versions(session: Session, debate_id: str, entries: Iterable[dict[str, Any]]) -> int:
    """Add versions read from an export file to ``debate_id`` in the caller's transaction, each keeping its
    ``number``, ``kind``, ``label``, ``provider``, ``model`` and ``created_at`` (a datetime); returns how many.
    The file's reader has checked them; this refuses only what the table cannot hold."""
    seen: set[int] = set()
    for entry in entries:
        number, kind = entry["number"], entry["kind"]
        if kind not in VERSION_KINDS:
            raise InputError(f"Unknown version kind {kind!r}: use {' or '.join(VERSION_KINDS)}.")
        if not isinstance(number, int) or number < 1 or number in seen:
            raise InputError(f"Version number {number!r} is not a new whole number from 1.")
        if not isinstance(entry["created_at"], datetime):
            raise InputError(f"Version {number}'s created_at is not a datetime.")
        seen.add(number)
        session.add(DebateVersion(debate_id=debate_id, number=number, kind=kind, label=scrub(entry.get("label", "")),
                                  body=scrub(entry["body"]), provider=entry.get("provider", ""),
                                  model=scrub(entry.get("model", "")), created_at=entry["created_at"]))
    return len(seen)
