"""search word forms: the Library's search finds a word's other forms ("flags" finds "feature-flag")

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-29 18:30:00

clearside/store/debates.py: a search word of letters also matches the stemmed words of ``debates.search_text``.
SQLite: an FTS5 table ``debates_fts`` with the porter stemmer, holding no text of its own (external content: it
indexes ``debates.search_text`` by the row's rowid), kept in step by three triggers on ``debates``, and built here
for the debates saved before. A later migration that recreates ``debates`` (a batch "move and copy") must create
the triggers again and rebuild the table. PostgreSQL: a GIN index on ``to_tsvector('english', search_text)``,
which needs no extension. The search's literal part (LIKE, migration 0002) is unchanged.
"""

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

TABLE = "debates_fts"  # clearside.store.debates.SEARCH_FTS
INDEX = "ix_debates_search_fts"  # clearside.store.debates.SEARCH_INDEX
_NEW = f"INSERT INTO {TABLE}(rowid, search_text) VALUES (new.rowid, new.search_text);"
_OLD = f"INSERT INTO {TABLE}({TABLE}, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);"
SQLITE = (
    f"CREATE VIRTUAL TABLE {TABLE} USING fts5(search_text, content='debates', content_rowid='rowid', "
    "tokenize='porter unicode61')",
    f"CREATE TRIGGER {TABLE}_insert AFTER INSERT ON debates BEGIN {_NEW} END",
    f"CREATE TRIGGER {TABLE}_delete AFTER DELETE ON debates BEGIN {_OLD} END",
    f"CREATE TRIGGER {TABLE}_update AFTER UPDATE OF search_text ON debates BEGIN {_OLD} {_NEW} END",
    f"INSERT INTO {TABLE}({TABLE}) VALUES ('rebuild')",  # the debates saved before this migration
)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for statement in SQLITE:
            op.execute(statement)
    elif dialect == "postgresql":
        op.execute(f"CREATE INDEX {INDEX} ON debates USING gin (to_tsvector('english'::regconfig, search_text))")


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for trigger in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS {TABLE}_{trigger}")
        op.execute(f"DROP TABLE IF EXISTS {TABLE}")
    elif dialect == "postgresql":
        op.execute(f"DROP INDEX IF EXISTS {INDEX}")
