"""understanding_answers: the understanding check's answers, before, after and at a re-test, beside their debate

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-08 10:00:00

One row per answer (clearside/store/understanding.py): the stage, the answering browser's token (no name), the
reasons, lean and confidence, and how the reasons matched the debate's arguments once it had its document. Deleted
with the debate.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "understanding_answers",
        sa.Column("debate_id", sa.String(length=32), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("stage", sa.String(length=16), nullable=False),
        sa.Column("owner", sa.String(length=32), nullable=True),
        sa.Column("body", JSON, nullable=False),
        sa.Column("match", JSON, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["debate_id"], ["debates.id"], name=op.f("fk_understanding_answers_debate_id"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("debate_id", "number", name=op.f("pk_understanding_answers")),
    )
    op.create_index(op.f("ix_understanding_answers_owner"), "understanding_answers", ["owner"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_understanding_answers_owner"), table_name="understanding_answers")
    op.drop_table("understanding_answers")
