"""One database: its SQLAlchemy engine, short read and write sessions, and the debate row lookup.

Every part of :class:`~clearside.store.Store` (debates, static parts, runs) is a subclass of
:class:`Database`, so they share this one engine and its transactions.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from ..errors import NotFound
from .db import WRITE, database_url, fault, make_engine, migrate, safe_url
from .records import check_id
from .tables import Debate


class Database:
    """The database at ``url`` (default: ``DATABASE_URL`` or the SQLite file), migrated on open."""

    def __init__(self, url: str | None = None) -> None:
        self.url = database_url(url)
        self.engine = make_engine(self.url)
        migrate(self.engine)
        self._reader = sessionmaker(self.engine, expire_on_commit=False)
        self._writer = sessionmaker(self.engine.execution_options(**{WRITE: True}), expire_on_commit=False)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({safe_url(self.url)!r})"

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One transaction: everything in the block is saved, or nothing is."""
        try:
            with self._writer.begin() as session:
                yield session
        except SQLAlchemyError as exc:  # names the file or server, the cause (read-only, disk full...), the fix
            if isinstance(exc, OperationalError) and self.dialect == "sqlite":
                # a connection SQLite opened while the file was read-only stays read-only: once the fault is
                # fixed, the next write must reconnect to succeed (no restart needed)
                self.engine.dispose()
            raise fault(self.url, exc, doing="save to") from None

    @contextmanager
    def read(self) -> Iterator[Session]:
        try:
            with self._reader() as session:
                yield session
        except SQLAlchemyError as exc:
            raise fault(self.url, exc, doing="read") from None

    @staticmethod
    def debate_row(session: Session, debate_id: str, *, lock: bool = False) -> Debate:
        """The debate row; ``lock`` holds it for this transaction (PostgreSQL ``FOR UPDATE``)."""
        row = session.get(Debate, check_id(debate_id), with_for_update=lock or None)
        if row is None:
            raise NotFound(f"No saved debate has the id {debate_id}. `python -m clearside list` shows the saved ones.",
                           dashboard=f"No saved debate has the id {debate_id}: it may have been deleted. The "
                                     "Library lists the saved ones.")
        return row
