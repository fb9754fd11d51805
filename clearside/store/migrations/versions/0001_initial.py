"""debates, sections, challenges, live turns, interventions, runs

Revision ID: 0001
Revises:
Create Date: 2026-11-22 07:56:25.608267
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "debates",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("prompt_versions", JSON, nullable=False),
        sa.Column("schema_version", sa.String(length=16), nullable=False),
        sa.Column("document", JSON, nullable=True),
        sa.Column("data", JSON, nullable=False),
        sa.Column("search_text", sa.Text(), nullable=False),
        sa.Column("parent_id", sa.String(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_debates")),
    )
    with op.batch_alter_table("debates", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_debates_created_at"), ["created_at"], unique=False)
        batch_op.create_index("ix_debates_provider_model", ["provider", "model"], unique=False)

    op.create_table(
        "challenges",
        sa.Column("debate_id", sa.String(length=32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("body", JSON, nullable=False),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("prompt_version", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["debate_id"], ["debates.id"], name=op.f("fk_challenges_debate_id"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("debate_id", "seq", name=op.f("pk_challenges")),
    )
    op.create_table(
        "interventions",
        sa.Column("debate_id", sa.String(length=32), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("body", JSON, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["debate_id"], ["debates.id"], name=op.f("fk_interventions_debate_id"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("debate_id", "number", name=op.f("pk_interventions")),
    )
    op.create_table(
        "live_turns",
        sa.Column("debate_id", sa.String(length=32), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(length=32), nullable=False),
        sa.Column("speaker", sa.String(length=16), nullable=False),
        sa.Column("flagged", sa.Boolean(), nullable=False),
        sa.Column("body", JSON, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["debate_id"], ["debates.id"], name=op.f("fk_live_turns_debate_id"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("debate_id", "turn", name=op.f("pk_live_turns")),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("suite", sa.String(length=64), nullable=False),
        sa.Column("debate_id", sa.String(length=32), nullable=True),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("prompt_versions", JSON, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("baseline", sa.Boolean(), nullable=False),
        sa.Column("metrics", JSON, nullable=False),
        sa.Column("data", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["debate_id"], ["debates.id"], name=op.f("fk_runs_debate_id"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_runs_suite"), ["suite"], unique=False)

    op.create_table(
        "sections",
        sa.Column("debate_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=16), nullable=False),
        sa.Column("body", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["debate_id"], ["debates.id"], name=op.f("fk_sections_debate_id"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("debate_id", "name", name=op.f("pk_sections")),
    )


def downgrade() -> None:
    op.drop_table("sections")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_runs_suite"))

    op.drop_table("runs")
    op.drop_table("live_turns")
    op.drop_table("interventions")
    op.drop_table("challenges")
    with op.batch_alter_table("debates", schema=None) as batch_op:
        batch_op.drop_index("ix_debates_provider_model")
        batch_op.drop_index(batch_op.f("ix_debates_created_at"))

    op.drop_table("debates")
