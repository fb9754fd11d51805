"""A static debate's parts: its sections as they land, the finished document, and challenge responses.

Everything here is a plain dict: the store never sees the engine's ``DebateRun``
(``clearside.static.recorder`` turns a run into these values and back).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..schema import SCHEMA_VERSION
from .database import Database
from .privacy import scrub
from .records import NewDebate, check_id, document_text, now, search_text
from .sources import link_sources
from .tables import Challenge, Debate, Section
from .versions import restore_versions


class StaticParts(Database):
    """The ``sections`` and ``challenges`` tables, and finishing a static debate. Needs ``create`` (Debates)."""

    def start_static(self, debate: NewDebate, *, context: dict[str, Any] | None = None,
                     sections: dict[str, dict[str, Any]] | None = None,
                     sources: list[dict[str, Any]] | None = None) -> str:
        """Save a static debate before its agents run (``debate.data``: more keys for its data, e.g. its owner
        token; ``debate.debate_id``: the id to save it under, else a new one), with its ``context`` (the user's
        fields), the ``sections`` it already has (name → body) and ``sources``: the files the user attached (see
        :meth:`add_sources`), in the same transaction."""
        if not isinstance(debate, NewDebate) or debate.kind != "static":
            raise TypeError("Store.start_static takes a static NewDebate; to save an engine run use "
                            "clearside.static.recorder.start_static(store, run, ...).")
        data = {**(debate.data or {}), "context": context or {}}
        debate_id = check_id(debate.debate_id) if debate.debate_id is not None else None
        with self.write() as session:
            debate_id = self.create(dataclasses.replace(debate, data=data, debate_id=debate_id), session=session)
            for name, body in (sections or {}).items():
                session.add(Section(debate_id=debate_id, name=name, body=scrub(body), created_at=now()))
            if sources:
                link_sources(session, debate_id, sources)
        return debate_id

    def save_section(self, debate_id: str, name: str, body: dict[str, Any]) -> None:
        """Write one finished section (proposition, pro, con or moderator), replacing an older one."""
        with self.write() as session:
            row = self.debate_row(session, debate_id)
            section = session.get(Section, (row.id, name))
            if section is None:
                session.add(Section(debate_id=row.id, name=name, body=scrub(body), created_at=now()))
            else:
                section.body = scrub(body)
            row.updated_at = now()

    def sections(self, debate_id: str) -> dict[str, dict[str, Any]]:
        with self.read() as session:
            row = self.debate_row(session, debate_id)
            return {s.name: s.body for s in session.scalars(select(Section).where(Section.debate_id == row.id))}

    def finish_static(self, debate_id: str, document: dict[str, Any], *, usage: dict[str, Any] | None = None,
                      violations: int = 0) -> None:
        """Store the finished document; its challenge responses become challenge rows."""
        with self.write() as session:
            row = self.debate_row(session, debate_id)
            data = {**(row.data or {}), **({"usage": usage} if usage else {}), "violations": violations}
            data.pop("error", None)
            self._finish(session, row, document, data)

    def import_static(self, document: dict[str, Any], *, imported: dict[str, Any],
                      versions: Iterable[dict[str, Any]] = (), sources: Iterable[dict[str, Any]] = ()) -> str:
        """Save a finished document read from a file, with its ``versions`` (re-maps, as
        :func:`~clearside.store.versions.restore_versions` takes them) and its ``sources`` (the attached files,
        as :meth:`~clearside.store.sources.Sources.add_sources` takes them), in one transaction: all or nothing."""
        info = document.get("meta", {}).get("model_info", {})
        with self.write() as session:
            debate_id = self.create(NewDebate("static", document["proposition"]["raw_input"],
                                              provider=info.get("provider", ""), model=info.get("model", ""),
                                              status="done"), session=session)
            session.flush()
            self._finish(session, session.get(Debate, debate_id), document, {"imported": imported})
            restore_versions(session, debate_id, versions)
            link_sources(session, debate_id, sources)
        return debate_id

    @staticmethod
    def _finish(session: Session, row: Debate, document: dict[str, Any], data: dict[str, Any]) -> None:
        document = copy.deepcopy(document)
        responses = document.setdefault("challenges", {}).get("responses", [])
        document["challenges"]["responses"] = []
        info = document.get("meta", {}).get("model_info", {})
        row.document, row.data = scrub(document), scrub(data)
        row.status, row.schema_version = "done", document.get("meta", {}).get("schema_version", SCHEMA_VERSION)
        row.search_text = search_text(row.question, row.title, *document_text(document))
        row.updated_at = now()
        for seq, response in enumerate(responses, start=1):
            session.add(Challenge(debate_id=row.id, seq=seq, body=scrub(response),
                                  provider=info.get("provider", row.provider), model=info.get("model", row.model),
                                  prompt_version="", created_at=now()))

    def add_challenge(self, debate_id: str, response: dict[str, Any], *, provider: str, model: str,
                      prompt_version: str) -> int:
        """Append one challenge response; returns its number (1-based)."""
        with self.write() as session:
            row = self.debate_row(session, debate_id, lock=True)  # concurrent appends queue here
            last = session.scalar(select(func.max(Challenge.seq)).where(Challenge.debate_id == row.id)) or 0
            session.add(Challenge(debate_id=row.id, seq=last + 1, body=scrub(response), provider=provider,
                                  model=scrub(model), prompt_version=prompt_version, created_at=now()))
            row.updated_at = now()
            return last + 1

    def challenges(self, debate_id: str) -> list[dict[str, Any]]:
        with self.read() as session:
            row = self.debate_row(session, debate_id)
            rows = session.scalars(select(Challenge).where(Challenge.debate_id == row.id).order_by(Challenge.seq))
            return [c.body for c in rows]
