"""PostgreSQL: a trigram index so library search (LIKE '%word%') reads the index, not every row

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 08:20:00

pg_trgm ships with PostgreSQL (contrib) and is a trusted extension, so a
database owner may create it. Where it cannot be created the migration still
succeeds: search works the same, only without the index. SQLite needs nothing.
"""

import logging

from alembic import op
from sqlalchemy.exc import DBAPIError

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

INDEX = "ix_debates_search_trgm"


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    try:
        with bind.begin_nested():
            op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except DBAPIError as exc:
        logging.getLogger("clearside.store").warning("pg_trgm unavailable, search runs without an index: %s", exc)
        return
    # fastupdate off: each saved debate goes straight into the index. With the default pending list, rows saved
    # since the last (auto)vacuum are scanned one by one, and after a bulk import the planner drops the index
    op.create_index(INDEX, "debates", ["search_text"], postgresql_using="gin",
                    postgresql_ops={"search_text": "gin_trgm_ops"}, postgresql_with={"fastupdate": "off"})


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index(INDEX, table_name="debates", if_exists=True)
