"""debate_versions: a static debate's re-maps and assumption stances, kept beside the original

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25 17:50:43

A re-map (clearside/remap.py) never changes the debate it was made from: it is saved here as a numbered
version of that debate, deleted with it.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "debate_versions",
        sa.Column("debate_id", sa.String(length=32), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("body", JSON, nullable=False),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["debate_id"], ["debates.id"], name=op.f("fk_debate_versions_debate_id"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("debate_id", "number", name=op.f("pk_debate_versions")),
    )


def downgrade() -> None:
    op.drop_table("debate_versions")
