"""imported_maps: argument maps another tool made (foreign AIF), kept read-only beside the debates

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-29 18:00:00

clearside/store/maps.py: ``imported_maps`` (owner token or none, title, the file's name, the AIF JSON as imported).
No column is named for a person.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "imported_maps",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("owner", sa.String(length=32), nullable=True),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("data", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_imported_maps")),
    )
    op.create_index(op.f("ix_imported_maps_owner"), "imported_maps", ["owner"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_imported_maps_owner"), table_name="imported_maps")
    op.drop_table("imported_maps")
