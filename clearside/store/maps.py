"""Argument maps imported from other tools: rows of ``imported_maps``, read-only beside the debates.

A foreign AIF map holds no debate (no FOR and AGAINST cases, no moderator's map), so it is kept as the map it is:
the AIF JSON as imported, checked by :func:`clearside.render.aif_foreign.foreign_map` before it comes here, under
the title of its first claim. Nothing edits it; it is listed, read and deleted. ``owner`` is the importing browser's
token (clearside_ui/owner.py) or None for the command line; lists may be narrowed to one token, as the dashboard does.
"""

from __future__ import annotations

import copy
import re
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import select

from ..errors import InputError, NotFound
from ..inputs import shown
from .database import Database
from .privacy import scrub
from .records import iso, new_id, now
from .tables import ImportedMap

ANY_OWNER = "*"  # every map, whoever imported it (the command line's lists)
_TOKEN = re.compile(r"[0-9a-f]{32}")
TITLE_CHARS = 200


@dataclass(frozen=True)
class MapRow:
    """One imported map: ``data`` is its AIF JSON."""

    id: str
    title: str
    source: str
    owner: str | None
    created_at: str
    data: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _of(row: ImportedMap) -> MapRow:
    return MapRow(id=row.id, title=row.title, source=row.source, owner=row.owner, created_at=iso(row.created_at),
                  data=copy.deepcopy(row.data))


class Maps(Database):
    """The ``imported_maps`` table."""

    def save_map(self, data: dict[str, Any], *, title: str, source: str, owner: str | None = None) -> str:
        """Keep an imported map; returns its id."""
        if not isinstance(data, dict):
            raise InputError("An imported map must be an AIF object (nodes and edges).")
        if owner is not None and not _TOKEN.fullmatch(owner):
            raise InputError("An imported map's owner must be a browser token (32 hex characters) or none.")
        map_id = new_id()
        with self.write() as session:
            session.add(ImportedMap(id=map_id, owner=owner, title=(title.strip() or source)[:TITLE_CHARS],
                                    source=source[:TITLE_CHARS], data=scrub(data), created_at=now()))
        return map_id

    def maps(self, *, owner: str | None = ANY_OWNER) -> list[MapRow]:
        """The imported maps, newest first (only ``owner``'s unless ANY_OWNER; None: the command line's)."""
        query = select(ImportedMap)
        if owner != ANY_OWNER:
            query = query.where(ImportedMap.owner.is_(None) if owner is None else ImportedMap.owner == owner)
        with self.read() as session:
            return [_of(row) for row in session.scalars(query.order_by(ImportedMap.created_at.desc(),
                                                                       ImportedMap.id))]

    def get_map(self, map_id: str) -> MapRow:
        with self.read() as session:
            return _of(self._map_row(session, map_id))

    def delete_map(self, map_id: str) -> None:
        with self.write() as session:
            session.delete(self._map_row(session, map_id))

    def _map_row(self, session: Any, map_id: str) -> ImportedMap:
        key = (map_id or "").strip().lower()
        row = session.get(ImportedMap, key) if _TOKEN.fullmatch(key) else None
        if row is None:
            map_id = shown(map_id or "")  # a long or hostile value cut and escaped
            raise NotFound(f"No imported map has the id {map_id!r}: `python -m clearside maps` lists them.",
                           dashboard=f"No imported map has the id {map_id!r}: the Library's imported maps list them.")
        return row
