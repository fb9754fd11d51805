"""The store's tables (SQLAlchemy 2 declarative models); migrations in ``migrations/`` create them.

One ``debates`` row per saved debate of any kind: ``static`` (the pro/con/moderator
pipeline), ``live`` (the six-phase protocol). Its parts live in child tables so a
debate being generated is saved piece by piece: ``sections`` (proposition, pro,
con, moderator, each written when its agent finishes), ``challenges`` (one row
per challenge response), ``live_turns`` and ``interventions`` (a live transcript,
turn by turn), ``debate_versions`` (a static debate's re-maps under the user's weights and
stances), ``debate_sources`` (the files the user attached, in order, each linking to its text in
``sources``, which holds each distinct text once: store/sources.py). ``runs`` records comparison and
regression runs. No column holds a user identifier (docs/design/requirements.md#nfr-400): nothing here knows who asked.
A debate made in the dashboard carries ``data["owner"]``, the hash of a random key its browser keeps in a cookie
(clearside_ui/owner.py): it tells that browser "yours" and names no one; one made through the HTTP API carries the
id of its API token (``api_tokens``: a name its creator chose and the hash of its secret, never the secret). The
``owner`` column repeats ``data["owner"]`` so a list can filter on it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, ForeignKey, Index, Integer, MetaData, String, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

Json = JSON().with_variant(JSONB(), "postgresql")
Stamp = DateTime(timezone=True)

NAMING = {"ix": "ix_%(table_name)s_%(column_0_name)s", "pk": "pk_%(table_name)s",
          "fk": "fk_%(table_name)s_%(column_0_name)s", "uq": "uq_%(table_name)s_%(column_0_name)s"}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Debate(Base):
    __tablename__ = "debates"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # uuid4 hex: unguessable
    kind: Mapped[str] = mapped_column(String(16))  # static | live | perspectives
    status: Mapped[str] = mapped_column(String(16))  # running | paused | failed | done
    title: Mapped[str] = mapped_column(Text)
    question: Mapped[str] = mapped_column(Text)
    provider: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(Text)
    prompt_versions: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    schema_version: Mapped[str] = mapped_column(String(16))
    document: Mapped[dict[str, Any] | None] = mapped_column(Json, nullable=True)
    data: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)  # context, usage, live header, imports
    search_text: Mapped[str] = mapped_column(Text, default="")  # lower-cased question, title and claims
    parent_id: Mapped[str | None] = mapped_column(String(32), nullable=True)  # duplicated or re-run from
    # data["owner"] as a column (migration 0010), so a list can ask for one owner's debates: a browser's token, or
    # "api-" and the id of the API token that made it (store/tokens.py); None: made by the command line
    owner: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(Stamp, index=True)
    updated_at: Mapped[datetime] = mapped_column(Stamp)


Index("ix_debates_provider_model", Debate.provider, Debate.model)
# Library search is LIKE '%word%' on lower-cased text: PostgreSQL answers it from a trigram index (migration 0002)
Index("ix_debates_search_trgm", Debate.search_text, postgresql_using="gin", postgresql_with={"fastupdate": "off"},
      postgresql_ops={"search_text": "gin_trgm_ops"}).ddl_if(dialect="postgresql")


def _parent() -> Any:
    return mapped_column(String(32), ForeignKey("debates.id", ondelete="CASCADE"), primary_key=True)


class Section(Base):
    __tablename__ = "sections"

    debate_id: Mapped[str] = _parent()
    name: Mapped[str] = mapped_column(String(16), primary_key=True)  # proposition | pro | con | moderator | quality
    body: Mapped[dict[str, Any]] = mapped_column(Json)
    created_at: Mapped[datetime] = mapped_column(Stamp)


class Challenge(Base):
    __tablename__ = "challenges"

    debate_id: Mapped[str] = _parent()
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    body: Mapped[dict[str, Any]] = mapped_column(Json)  # the schema's challenge response
    provider: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(Text)
    prompt_version: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(Stamp)


class LiveTurn(Base):
    __tablename__ = "live_turns"

    debate_id: Mapped[str] = _parent()
    turn: Mapped[int] = mapped_column(Integer, primary_key=True)
    phase: Mapped[str] = mapped_column(String(32))
    speaker: Mapped[str] = mapped_column(String(16))
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)
    body: Mapped[dict[str, Any]] = mapped_column(Json)  # the whole Turn: fields, speech, flags, prompt, reply
    updated_at: Mapped[datetime] = mapped_column(Stamp)


class InterventionRow(Base):
    __tablename__ = "interventions"

    debate_id: Mapped[str] = _parent()
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    type: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16))
    body: Mapped[dict[str, Any]] = mapped_column(Json)
    updated_at: Mapped[datetime] = mapped_column(Stamp)


class DebateVersion(Base):
    """A version of a static debate: the user's assumption stances and weights, and the re-mapped document made
    under them (clearside/remap.py). The debate's own row and document are never changed by a version."""

    __tablename__ = "debate_versions"

    debate_id: Mapped[str] = _parent()
    number: Mapped[int] = mapped_column(Integer, primary_key=True)  # 1, 2, ... in the order they were saved
    kind: Mapped[str] = mapped_column(String(16))  # remap: a re-mapped document (store/versions.py)
    label: Mapped[str] = mapped_column(Text, default="")  # the conditions in words, for lists
    body: Mapped[dict[str, Any]] = mapped_column(Json)  # {"weights", "stances", "document"}
    provider: Mapped[str] = mapped_column(String(64), default="")
    model: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(Stamp)


class SourceText(Base):
    """The text of an attached file, stored once however many debates hold it: keyed by the SHA-256 of the text
    itself (UTF-8), which the store computes (store/sources.py says why not the file's hash). Deleting the last
    debate that holds a text deletes the text."""

    __tablename__ = "sources"

    text_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(Stamp)


class DebateSource(Base):
    """One file attached to a debate, in its place: its label, name, file hash, kind, pages, size, and its text
    (a row of ``sources``)."""

    __tablename__ = "debate_sources"

    debate_id: Mapped[str] = _parent()
    position: Mapped[int] = mapped_column(Integer, primary_key=True)  # 1, 2, ... as attached
    ref: Mapped[str] = mapped_column(String(16))  # S1, S2, ...
    name: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))  # of the file's bytes as attached
    kind: Mapped[str] = mapped_column(String(16))  # text | markdown | html | pdf | csv
    pages: Mapped[int | None] = mapped_column(Integer, nullable=True)  # a PDF's page count
    size: Mapped[int] = mapped_column(Integer)  # bytes as attached
    text_sha256: Mapped[str] = mapped_column(String(64), ForeignKey("sources.text_sha256"), index=True)


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    suite: Mapped[str] = mapped_column(String(64), index=True)  # flagship, argkp-dev, compare, ...
    batch: Mapped[str | None] = mapped_column(String(32), index=True, nullable=True)  # data.batch, or the run's id
    debate_id: Mapped[str | None] = mapped_column(
        String(32), ForeignKey("debates.id", ondelete="SET NULL"), nullable=True)
    provider: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(Text)
    prompt_versions: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    status: Mapped[str] = mapped_column(String(16))
    baseline: Mapped[bool] = mapped_column(Boolean, default=False)
    metrics: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    data: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    created_at: Mapped[datetime] = mapped_column(Stamp)
    updated_at: Mapped[datetime] = mapped_column(Stamp)


class Blessing(Base):
    """One ``bless``: which batch became its suite's baseline, which one it replaced, the note of why, and the
    warnings recorded then (a batch not significantly better than the baseline it replaced, a version change).
    Written in the transaction that moves the baseline (store/runs.py); never changed afterwards."""

    __tablename__ = "blessings"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    suite: Mapped[str] = mapped_column(String(64))
    batch: Mapped[str] = mapped_column(String(32))
    previous: Mapped[str | None] = mapped_column(String(32), nullable=True)  # the baseline it replaced
    note: Mapped[str] = mapped_column(Text, default="")
    warnings: Mapped[list[str]] = mapped_column(Json, default=list)
    detail: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)  # provider, versions, the comparison
    created_at: Mapped[datetime] = mapped_column(Stamp)


Index("ix_blessings_suite_created_at", Blessing.suite, Blessing.created_at)


class UnderstandingAnswer(Base):
    """One answer of the understanding check (clearside/quality/understanding/): the reasons a person knew for and
    against, their lean and confidence, before reading the debate, after, or at a later re-test. No name: ``owner``
    is the answering browser's token (clearside_ui/owner.py), or empty when the command line recorded it. ``match``
    is how the reasons matched the debate's arguments, written once the debate has its document. Deleted with the
    debate, never copied with it (a copy is someone else's)."""

    __tablename__ = "understanding_answers"

    debate_id: Mapped[str] = _parent()
    number: Mapped[int] = mapped_column(Integer, primary_key=True)  # 1, 2, ... in the order answered
    stage: Mapped[str] = mapped_column(String(16))  # before | after | retest
    owner: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    body: Mapped[dict[str, Any]] = mapped_column(Json)  # reasons_for, reasons_against, lean, confidence
    match: Mapped[dict[str, Any] | None] = mapped_column(Json, nullable=True)
    created_at: Mapped[datetime] = mapped_column(Stamp)


class Study(Base):
    """A study (clearside/quality/study/): questions and arms whose gains are compared across participants.
    ``owner`` is the creating browser's token (clearside_ui/owner.py), or empty when the command line made it: only
    that browser sees the results. ``invite`` is the secret of the participant link (its ``join=``). ``spec`` holds the
    questions, the arms and the provider the documents were made with."""

    __tablename__ = "studies"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    title: Mapped[str] = mapped_column(Text)
    spec: Mapped[dict[str, Any]] = mapped_column(Json)
    invite: Mapped[str] = mapped_column(String(32), unique=True)
    created_at: Mapped[datetime] = mapped_column(Stamp)


class StudyItem(Base):
    """What one arm of a study shows for one question: a debate made once and shared by every participant of the
    arm (``debate_id``, the ``debate`` and ``single`` arms), or the creator's files (``sources``, the ``sources``
    arm, as the store's source entries)."""

    __tablename__ = "study_items"

    study_id: Mapped[str] = mapped_column(String(32), ForeignKey("studies.id", ondelete="CASCADE"), primary_key=True)
    question: Mapped[int] = mapped_column(Integer, primary_key=True)  # 1, 2, ... in the study's order
    arm: Mapped[str] = mapped_column(String(16), primary_key=True)  # debate | single | sources
    debate_id: Mapped[str | None] = mapped_column(String(32), ForeignKey("debates.id", ondelete="SET NULL"),
                                                  nullable=True)
    sources: Mapped[list[dict[str, Any]] | None] = mapped_column(Json, nullable=True)


class StudyParticipant(Base):
    """One participant: no name, only the hash of their link's secret (``token_hash``), the question and arm drawn
    when they joined, and their number in the order of joining."""

    __tablename__ = "study_participants"

    token_hash: Mapped[str] = mapped_column(String(32), primary_key=True)
    study_id: Mapped[str] = mapped_column(String(32), ForeignKey("studies.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    question: Mapped[int] = mapped_column(Integer)
    arm: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(Stamp)


class StudyAnswer(Base):
    """A participant's answer at one stage (before, after, retest: one each), as the understanding check's, and
    how its reasons matched the question's arguments once matched."""

    __tablename__ = "study_answers"

    respondent: Mapped[str] = mapped_column(String(32), ForeignKey("study_participants.token_hash",
                                                                   ondelete="CASCADE"), primary_key=True)
    stage: Mapped[str] = mapped_column(String(16), primary_key=True)
    body: Mapped[dict[str, Any]] = mapped_column(Json)
    match: Mapped[dict[str, Any] | None] = mapped_column(Json, nullable=True)
    created_at: Mapped[datetime] = mapped_column(Stamp)


class ImportedMap(Base):
    """An argument map another tool made (a foreign AIF map, clearside/render/aif_foreign.py), kept read-only beside
    the debates: ``data`` is the AIF JSON as imported (its nodes and edges, checked before it is saved), ``title`` its
    first claim, ``source`` the file's name. ``owner`` is the importing browser's token (clearside_ui/owner.py), or
    empty when the command line imported it. Never a debate: it has no FOR and AGAINST cases and no moderator's map."""

    __tablename__ = "imported_maps"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    title: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(Text)
    data: Mapped[dict[str, Any]] = mapped_column(Json)
    created_at: Mapped[datetime] = mapped_column(Stamp)


class ApiToken(Base):
    """A token of the HTTP API (clearside/api/): the SHA-256 of its secret (the secret itself is shown once, when
    it is made, and never kept), the name its creator gave it, whether it is an admin token (it sees every debate),
    and when it was revoked (a revoked token is refused, and kept so its debates still name it)."""

    __tablename__ = "api_tokens"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    name: Mapped[str] = mapped_column(Text, default="")
    secret_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(Stamp)
    revoked_at: Mapped[datetime | None] = mapped_column(Stamp, nullable=True)
