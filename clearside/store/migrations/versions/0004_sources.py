"""sources and debate_sources: the files a user attaches to a debate, each distinct text stored once

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27 09:00:00

``debate_sources`` lists a debate's files in order (label, name, the file's SHA-256, kind, pages, size), deleted
with the debate; each links to its text in ``sources``, keyed by the SHA-256 of the text, so the same file in
many debates is stored once (clearside/store/sources.py).
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sources",
        sa.Column("text_sha256", sa.String(length=64), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("text_sha256", name=op.f("pk_sources")),
    )
    op.create_table(
        "debate_sources",
        sa.Column("debate_id", sa.String(length=32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("ref", sa.String(length=16), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("pages", sa.Integer(), nullable=True),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("text_sha256", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["debate_id"], ["debates.id"], name=op.f("fk_debate_sources_debate_id"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["text_sha256"], ["sources.text_sha256"], name=op.f("fk_debate_sources_text_sha256")),
        sa.PrimaryKeyConstraint("debate_id", "position", name=op.f("pk_debate_sources")),
    )
    op.create_index(op.f("ix_debate_sources_text_sha256"), "debate_sources", ["text_sha256"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_debate_sources_text_sha256"), table_name="debate_sources")
    op.drop_table("debate_sources")
    op.drop_table("sources")
