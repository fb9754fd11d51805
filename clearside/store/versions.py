"""Versions of a static debate: each re-map, with the user's value weights and assumption stances it was made under.

A version is a numbered row of ``debate_versions`` beside the debate; the debate's own row, document and
sections are never touched, so the original stays as it was generated. Values are plain dicts (the store
knows no engine): ``body`` holds ``weights``, ``stances`` and the re-mapped ``document``.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import func, select

from ..errors import InputError, NotFound
from .database import Database
from .privacy import scrub
from .records import iso, now
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

    def versions(self, debate_id: str) -> list[Version]:
        """The debate's versions, oldest first, without their bodies."""
        with self.read() as session:
            row = self.debate_row(session, debate_id)
            rows = session.scalars(select(DebateVersion).where(DebateVersion.debate_id == row.id)
                                   .order_by(DebateVersion.number)).all()
            return [_of(r, body=False) for r in rows]

    def version(self, debate_id: str, number: int) -> Version:
        """One version with its body."""
        with self.read() as session:
            row = self.debate_row(session, debate_id)
            found = session.get(DebateVersion, (row.id, int(number)))
            if found is None:
                raise NotFound(f"Debate {row.id} has no version {number}: `python -m clearside remap --versions "
                               f"{row.id}` lists them.", dashboard=f"This debate has no version {number}.")
            return _of(found, body=True)
