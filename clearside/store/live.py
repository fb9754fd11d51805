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
from typing import Any, Protocol

from sqlalchemy import delete, func, select

from ..errors import InputError
from .privacy import scrub
from .records import NewDebate, check_id, now, search_text
from .store import Store
from .tables import Debate, InterventionRow, LiveTurn

HEADER_EXCLUDE = {"turns", "interventions"}


class Dumps(Protocol):
    """What the writer needs of a transcript: its JSON form (``clearside.live.transcript.Transcript`` is one)."""

    def model_dump(self, *, mode: str) -> dict[str, Any]: ...


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()


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

    def save(self, transcript: Dumps) -> None:
        """Write the transcript's header and the turns and interventions that changed, in one transaction."""
        body = scrub(transcript.model_dump(mode="json"))
        header = {k: v for k, v in body.items() if k not in HEADER_EXCLUDE}
        if self.imported is not None:
            header["imported"] = self.imported
        turns = [(t["turn"], t) for t in body["turns"]]
        notes = [(i["id"], i) for i in body["interventions"]]
        changed: dict[tuple[str, int], str] = {}
        with self.store.write() as session:
            row = session.get(Debate, self.debate_id)
            if row is None:
                data = {**header, "owner": self.owner} if self.owner else header
                self.store.create(NewDebate("live", body["question"], provider=body["provider"], model=body["model"],
                                            title=self.title, prompt_versions=body["prompt_versions"], data=data,
                                            document=body["document"], status=body["state"],
                                            parent_id=self.parent_id, debate_id=self.debate_id), session=session)
                session.flush()
            else:
                kept = {k: v for k, v in (row.data or {}).items() if k not in header}  # e.g. the import record
                row.data, row.status, row.document = {**kept, **header}, body["state"], body["document"]
                row.updated_at = now()
            stamp = now()
            for number, turn in turns:
                digest = _digest(turn)
                if self._written.get(("turn", number)) != digest:
                    session.merge(LiveTurn(debate_id=self.debate_id, turn=number, phase=turn["phase"],
                                           speaker=turn["speaker"], flagged=bool(turn.get("flags")), body=turn,
                                           updated_at=stamp))
                    changed[("turn", number)] = digest
            for number, note in notes:
                digest = _digest(note)
                if self._written.get(("note", number)) != digest:
                    session.merge(InterventionRow(debate_id=self.debate_id, number=number, type=note["type"],
                                                  status=note["status"], body=note, updated_at=stamp))
                    changed[("note", number)] = digest
            if not self._written:  # first save by this writer: drop rows a longer, older version left behind
                session.execute(delete(LiveTurn).where(LiveTurn.debate_id == self.debate_id,
                                                       LiveTurn.turn > len(turns)))
            if not self._written or any(kind == "turn" for kind, _ in changed):  # searchable as it goes
                row = session.get(Debate, self.debate_id)
                row.search_text = search_text(row.question, row.title, *(turn["text"] for _, turn in turns))
        self._written.update(changed)


def add_intervention(store: Store, debate_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """Append one intervention to a saved live debate while another process may be saving it: numbered after
    the last one and stamped with the last finished turn in the same transaction (the debate row is locked on
    PostgreSQL), nothing else of the transcript touched. Returns the body as saved."""
    with store.write() as session:
        row = store.debate_row(session, debate_id, lock=True)
        if row.kind != "live":
            raise InputError(f"Debate {debate_id} is a {row.kind} debate, not a live one.")
        number = (session.scalar(select(func.max(InterventionRow.number))
                                 .where(InterventionRow.debate_id == row.id)) or 0) + 1
        last = session.scalar(select(func.max(LiveTurn.turn)).where(LiveTurn.debate_id == row.id)) or 0
        saved = scrub({**body, "id": number, "after_turn": last})
        session.add(InterventionRow(debate_id=row.id, number=number, type=saved["type"], status=saved["status"],
                                    body=saved, updated_at=now()))
        row.updated_at = now()
    return saved


def live_rows(store: Store, debate_id: str) -> dict[str, Any]:
    """A saved live debate as its transcript's JSON (header, id, turns, interventions), for
    ``clearside.live.exchange.load_live`` to parse. Header keys a transcript does not define are left in
    (e.g. ``owner``, ``imported``): the reader keeps the ones it knows."""
    with store.read() as session:
        row = store.debate_row(session, debate_id)
        if row.kind != "live":
            raise InputError(f"Debate {debate_id} is a {row.kind} debate, not a live one: open it on the Debate page.")
        turns = session.scalars(select(LiveTurn.body).where(LiveTurn.debate_id == row.id).order_by(LiveTurn.turn))
        notes = session.scalars(select(InterventionRow.body).where(InterventionRow.debate_id == row.id)
                                .order_by(InterventionRow.number))
        return {**(row.data or {}), "id": row.id, "turns": list(turns), "interventions": list(notes)}
