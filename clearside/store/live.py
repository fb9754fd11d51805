"""Live transcripts in the store, turn by turn.

The transcript's header (question, config, state, cursor, partial speech, the
assembled document) is the debate row's ``data``; each turn and each intervention
is a row of its own. :class:`LiveWriter` is what a running live debate saves
through: after every change it writes the header plus only the turns and
interventions that changed, in one transaction, so a crash loses at most the turn
in flight and a save stays small however long the debate grows.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select

from .privacy import scrub
from .store import Store, check_id, now, search_text
from .tables import Debate, InterventionRow, LiveTurn

if TYPE_CHECKING:
    from ..live.transcript import Transcript

HEADER_EXCLUDE = {"turns", "interventions"}


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _texts(transcript: Transcript) -> list[str]:
    return [turn.text for turn in transcript.turns]


class LiveWriter:
    """Saves one live transcript; keeps digests of what it wrote so unchanged rows are skipped."""

    def __init__(self, store: Store, debate_id: str, *, title: str = "", parent_id: str | None = None,
                 owner: str | None = None) -> None:
        """``owner``: the starting browser's token, written with the row (later saves keep it)."""
        self.store = store
        self.debate_id = check_id(debate_id)
        self.title = title
        self.parent_id = parent_id
        self.owner = owner
        self.imported: dict[str, Any] | None = None  # set by an import: where the transcript came from
        self._written: dict[tuple[str, int], str] = {}

    def save(self, transcript: Transcript) -> None:
        header = scrub(transcript.model_dump(mode="json", exclude=HEADER_EXCLUDE))
        if self.imported is not None:
            header["imported"] = self.imported
        turns = [(t.turn, scrub(t.model_dump(mode="json"))) for t in transcript.turns]
        notes = [(i.id, scrub(i.model_dump(mode="json"))) for i in transcript.interventions]
        changed: dict[tuple[str, int], str] = {}
        with self.store.write() as session:
            row = session.get(Debate, self.debate_id)
            if row is None:
                data = {**header, "owner": self.owner} if self.owner else header
                self.store.create("live", transcript.question, provider=transcript.provider, model=transcript.model,
                                  title=self.title, prompt_versions=transcript.prompt_versions, data=data,
                                  document=transcript.document, status=transcript.state, parent_id=self.parent_id,
                                  debate_id=self.debate_id, session=session)
                session.flush()
            else:
                kept = {k: v for k, v in (row.data or {}).items() if k not in header}  # e.g. the import record
                row.data, row.status, row.document = {**kept, **header}, transcript.state, scrub(transcript.document)
                row.updated_at = now()
            stamp = now()
            for number, body in turns:
                digest = _digest(body)
                if self._written.get(("turn", number)) != digest:
                    session.merge(LiveTurn(debate_id=self.debate_id, turn=number, phase=body["phase"],
                                           speaker=body["speaker"], flagged=bool(body.get("flags")), body=body,
                                           updated_at=stamp))
                    changed[("turn", number)] = digest
            for number, body in notes:
                digest = _digest(body)
                if self._written.get(("note", number)) != digest:
                    session.merge(InterventionRow(debate_id=self.debate_id, number=number, type=body["type"],
                                                  status=body["status"], body=body, updated_at=stamp))
                    changed[("note", number)] = digest
            if not self._written:  # first save by this writer: drop rows a longer, older version left behind
                session.execute(delete(LiveTurn).where(LiveTurn.debate_id == self.debate_id,
                                                       LiveTurn.turn > len(turns)))
            if not self._written or any(kind == "turn" for kind, _ in changed):  # searchable as it goes
                row = session.get(Debate, self.debate_id)
                row.search_text = search_text(row.question, row.title, *_texts(transcript))
        self._written.update(changed)


def load_live(store: Store, debate_id: str) -> Transcript:
    """The saved live transcript, rebuilt from its rows."""
    from ..errors import InputError
    from ..live.transcript import Transcript, parse

    with store.read() as session:
        row = store._row(session, debate_id)
        if row.kind != "live":
            raise InputError(f"Debate {debate_id} is a {row.kind} debate, not a live one: open it on the Debate page.")
        turns = session.scalars(select(LiveTurn.body).where(LiveTurn.debate_id == row.id).order_by(LiveTurn.turn))
        notes = session.scalars(select(InterventionRow.body).where(InterventionRow.debate_id == row.id)
                                .order_by(InterventionRow.number))
        header = {k: v for k, v in row.data.items() if k in Transcript.model_fields}
        data = {**header, "id": row.id, "turns": list(turns), "interventions": list(notes)}
    return parse(data, f"saved live debate {debate_id}")
