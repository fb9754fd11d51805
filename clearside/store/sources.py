"""The files a user attaches to a debate (docs/design/requirements.md#us-010): stored with it, in order, each distinct
text once.

Values are plain dicts (the store knows neither ``clearside.sources`` nor any mode), one per file, in the
debate's order::

    {"ref": "S1", "name": "report.pdf", "sha256": "<64 hex: the file's bytes as attached>", "kind": "pdf",
     "text": "<the text read from it>", "pages": 12, "size": 48213}

``pages`` is None except for a PDF. Two tables hold them (migration 0004):

* ``debate_sources``: one row per file of a debate (``position`` 1, 2, ... in list order), with its label, name,
  file hash, kind, pages and size, deleted with the debate, copied when it is duplicated;
* ``sources``: each distinct text once, however many debates hold it, keyed by the SHA-256 of the text itself.

**Why the text's hash and not the file's.** The same file attached twice (to one debate or to many) has one
text, so it is stored once either way. But the text is what ClearSide *read* from the bytes, and the same
bytes can be read two ways: under another extension (``notes.txt`` and ``notes.html`` hold the same bytes and
different texts), or by another version of the PDF reader (pypdf's spacing changes between releases). Keyed by
the file's hash, a second debate would then have to be refused, or silently handed the first debate's text,
whose passages and offsets are not those its citations were made from. Keyed by the text's hash, each debate
gets back exactly the text it was given, and equal texts are still stored once. The file's hash (which the
store cannot check: it never sees the bytes) is kept per debate, as given, for the document's
``sources[].sha256``.

**Deleting.** A text is deleted with the last debate that holds it: a user who deletes a debate expects the
document they attached to go with it, not to linger, unreachable, in the database. Both sides lock the
``sources`` rows they decide about (``FOR UPDATE`` on PostgreSQL; SQLite runs one writer at a time), so a debate
saved at the same moment with the same file never loses its text.

**Secrets are not scrubbed from a source's text.** Every other value written passes through
:func:`~clearside.store.privacy.scrub`, which replaces the values of secret-looking environment variables and
registered keys with ``[redacted]`` wherever they appear. A source is the user's own document: a citation is
trusted only when its quote stands verbatim in it, and passages are located by their offsets in this text, so
one replacement (of a different length) would shift every later passage and fail every quote across it. The
text is kept as given, here and in exports; a key stands in it only if the user put it in their own file. The
file's name is scrubbed like any other label.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from typing import Any, get_args

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from ..errors import InputError, StoreError
from ..inputs import shown
from ..schema import SourceKind
from .database import Database
from .privacy import scrub
from .records import check_id, now
from .tables import DebateSource, SourceText

SOURCE_KINDS: tuple[str, ...] = get_args(SourceKind)  # text, markdown, html, pdf, csv
SOURCE_FIELDS = ("ref", "name", "sha256", "kind", "pages", "size", "text")  # "pages" may be absent (None)
REF = re.compile(r"^S[1-9][0-9]{0,14}$")  # S1, S2, ... (the schema's SourceRef; at most the column's 16)
SHA256 = re.compile(r"^[0-9a-f]{64}$")
MAX_NAME = 200  # clearside.sources.ingest.MAX_NAME: a file name as read
MAX_INT = 2**31 - 1  # the Integer columns (pages, size)


def text_digest(text: str) -> str:
    """The key of a text in ``sources``: the SHA-256 of its UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _text_problem(name: str, value: Any) -> str | None:
    if not isinstance(value, str):
        return f"{name} is {type(value).__name__}, not text"
    if not value.strip():
        return f"{name} is empty"
    if "\x00" in value:
        return f"{name} holds a NUL character, which no text read from a file has"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return f"{name} is not valid Unicode (it holds a lone surrogate)"
    return None


def _name_problem(name: str) -> str | None:
    """A file's name as ClearSide reads it (``clearside.sources.clean_name``): no folders, no control or format
    characters (a bidi override would show ``txt.exe`` as ``exe.txt``), at most 200 characters."""
    if "/" in name or "\\" in name:
        return f"name is {_shown(name)}, a path: a source's name is a file name alone"
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in name):
        return f"name is {_shown(name)}, which holds control or invisible formatting characters"
    if len(name) > MAX_NAME:
        return f"name is {len(name):,} characters long; the limit is {MAX_NAME}"
    return None


def _count_problem(name: str, value: Any, what: str) -> str | None:
    if type(value) is not int or not 1 <= value <= MAX_INT:
        return f"{name} is {_shown(value)}, not {what}"
    return None


def entry_problem(entry: Any) -> str | None:
    """What keeps one source entry out of the store, naming the field; None when it can be stored."""
    if not isinstance(entry, dict):
        return f"it is {type(entry).__name__}, not an object with {', '.join(SOURCE_FIELDS)}"
    missing = [name for name in SOURCE_FIELDS if name not in entry and name != "pages"]
    if missing:
        return f"it has no {' and no '.join(missing)}"
    ref, sha256, kind = entry["ref"], entry["sha256"], entry["kind"]
    if not isinstance(ref, str) or not REF.match(ref):
        return f"ref is {_shown(ref)}, not a label like S1"
    if problem := _text_problem("name", entry["name"]) or _name_problem(entry["name"]):
        return problem
    if not isinstance(sha256, str) or not SHA256.match(sha256):
        return f"sha256 is {_shown(sha256)}, not 64 lowercase hexadecimal characters (the file's SHA-256)"
    if kind not in SOURCE_KINDS:
        return f"kind is {_shown(kind)}; use {', '.join(SOURCE_KINDS[:-1])} or {SOURCE_KINDS[-1]}"
    pages = entry.get("pages")
    if pages is not None and (problem := _count_problem("pages", pages, "a page count from 1 (or null)")):
        return problem
    if problem := _count_problem("size", entry["size"], "a size in bytes from 1"):
        return problem
    return _text_problem("text", entry["text"])


def where_of(key: str, index: int, entry: Any) -> str:
    """How a message names an entry: ``sources_files[1] (S2 notes.txt)``, or its place alone."""
    where = f"{key}[{index}]"
    if isinstance(entry, dict) and isinstance(entry.get("ref"), str) and REF.match(entry["ref"]):
        name = entry.get("name")
        named = f" {shown(name, 60)}" if isinstance(name, str) and name.strip() else ""
        where += f" ({entry['ref']}{named})"
    return where


def sources_problem(entries: Any, key: str = "sources") -> tuple[str, str] | None:
    """The first problem of a debate's list of sources as ``(where, what)``: an entry that cannot be stored
    (:func:`entry_problem`), or a label or a file twice; None when the whole list can be stored."""
    if not isinstance(entries, list | tuple):
        return key, f"it is {type(entries).__name__}, not a list of sources"
    refs: dict[str, int] = {}
    hashes: dict[str, int] = {}
    for index, entry in enumerate(entries):
        where = where_of(key, index, entry)
        if problem := entry_problem(entry):
            return where, problem
        if entry["ref"] in refs:
            return where, f"ref {entry['ref']} is also {key}[{refs[entry['ref']]}]'s: each source has its own label"
        if entry["sha256"] in hashes:
            return where, (f"sha256 is also {key}[{hashes[entry['sha256']]}]'s: the same file is attached once "
                           "per debate")
        refs[entry["ref"]], hashes[entry["sha256"]] = index, index
    return None


def _insert(session: Session) -> Any:
    return postgresql_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert


def _hold_texts(session: Session, texts: Iterable[str]) -> None:
    """Make sure ``sources`` has each text, and lock its row for this transaction (so that a debate deleted at
    the same moment cannot take the text away), in key order (two writers never wait for each other in turn)."""
    by_digest = {text_digest(text): text for text in texts}
    for digest in sorted(by_digest):
        for _ in range(3):  # a row deleted between the two statements is inserted again
            session.execute(_insert(session)(SourceText).values(text_sha256=digest, text=by_digest[digest],
                                                                created_at=now()).on_conflict_do_nothing())
            held = session.execute(select(SourceText.text_sha256).where(SourceText.text_sha256 == digest)
                                   .with_for_update()).scalar()
            if held is not None:
                break
        else:
            raise StoreError("Could not save a source's text: another writer kept deleting it. Try again.")


def link_sources(session: Session, debate_id: str, entries: Iterable[dict[str, Any]], *, key: str = "sources") -> int:
    """Attach ``entries`` (checked here: InputError names the entry and the field) to ``debate_id`` in the
    caller's transaction, positions 1, 2, ... in list order; each text stored once. Returns how many."""
    entries = list(entries)
    if found := sources_problem(entries, key):
        where, problem = found
        raise InputError(f"Sources not saved: {where}: {problem}. Nothing was saved.")
    _hold_texts(session, (entry["text"] for entry in entries))
    for position, entry in enumerate(entries, start=1):
        session.add(DebateSource(debate_id=debate_id, position=position, ref=entry["ref"], name=scrub(entry["name"]),
                                 sha256=entry["sha256"], kind=entry["kind"], pages=entry.get("pages"),
                                 size=entry["size"], text_sha256=text_digest(entry["text"])))
    return len(entries)


def drop_unheld_texts(session: Session, digests: Iterable[str]) -> None:
    """Delete those of these texts that no debate holds any more (after the caller removed its links)."""
    digests = sorted(set(digests))
    if not digests:
        return
    # Wait for any writer linking one of them; the statement after it then sees that writer's link
    session.execute(select(SourceText.text_sha256).where(SourceText.text_sha256.in_(digests))
                    .order_by(SourceText.text_sha256).with_for_update()).all()
    held = select(DebateSource.text_sha256).where(DebateSource.text_sha256.in_(digests))
    session.execute(delete(SourceText).where(SourceText.text_sha256.in_(digests),
                                             SourceText.text_sha256.not_in(held)))


def held_texts(session: Session, debate_id: str) -> list[str]:
    """The keys of the texts a debate holds (what :func:`drop_unheld_texts` reconsiders once it is deleted)."""
    return list(session.scalars(select(DebateSource.text_sha256).where(DebateSource.debate_id == debate_id)))


def _of(row: DebateSource, text: str | None) -> dict[str, Any]:
    value = {"ref": row.ref, "name": row.name, "sha256": row.sha256, "kind": row.kind, "pages": row.pages,
             "size": row.size}
    return value if text is None else {**value, "text": text}


class Sources(Database):
    """The ``debate_sources`` and ``sources`` tables."""

    def add_sources(self, debate_id: str, sources: Iterable[dict[str, Any]]) -> int:
        """Attach a debate's files, in order, each a dict with ``ref``, ``name``, ``sha256`` (64 lowercase hex:
        the file's bytes, trusted as given), ``kind``, ``text``, ``pages`` (None but for a PDF) and ``size``; keys
        beyond these are ignored. Returns how many. All or nothing; refused (InputError, naming the entry and
        the field) for a debate that already has its sources, an entry that cannot be stored, or a label or a
        file twice."""
        with self.write() as session:
            row = self.debate_row(session, debate_id, lock=True)  # two writers do not both attach
            if session.scalar(select(func.count()).select_from(DebateSource).where(DebateSource.debate_id == row.id)):
                raise InputError(f"Sources not saved: debate {row.id} already has its sources; a debate's sources "
                                 "are attached once, when it starts.")
            return link_sources(session, row.id, sources)

    def sources(self, debate_id: str, *, texts: bool = True) -> list[dict[str, Any]]:
        """The debate's files in order, as :meth:`add_sources` took them (``[]`` for none); without the texts
        when not ``texts`` (a list of names wants none)."""
        with self.read() as session:
            row = self.debate_row(session, debate_id)
            ordered = select(DebateSource).where(DebateSource.debate_id == row.id).order_by(DebateSource.position)
            if not texts:
                return [_of(link, None) for link in session.scalars(ordered)]
            joined = ordered.add_columns(SourceText.text).join(
                SourceText, SourceText.text_sha256 == DebateSource.text_sha256)
            return [_of(link, text) for link, text in session.execute(joined)]

    def source_counts(self, debate_ids: Iterable[str]) -> dict[str, int]:
        """How many files each of these debates has (0 for none, or for an id no debate has), in one query."""
        ids = list(dict.fromkeys(check_id(i) for i in debate_ids))
        if not ids:
            return {}
        with self.read() as session:
            counted = {debate_id: count for debate_id, count in session.execute(
                select(DebateSource.debate_id, func.count()).where(DebateSource.debate_id.in_(ids))
                .group_by(DebateSource.debate_id))}
        return {i: int(counted.get(i, 0)) for i in ids}
