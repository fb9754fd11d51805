"""studies: a study's questions and arms, what each arm shows, its participants (no name) and their answers

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-29 15:00:00

clearside/store/studies.py: ``studies`` (owner token, title, spec, ``invite``: the participant link's secret),
``study_items`` (one debate or the creator's sources per question and arm), ``study_participants`` (``token_hash``:
the hash of each participant's link secret; the question and arm drawn) and ``study_answers`` (one answer per
participant, ``respondent``, and stage). No column is named for a person (tests/store/test_store.py). Everything is
deleted with its study; a study's debate deleted leaves its item without one.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "studies",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("owner", sa.String(length=32), nullable=True),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("spec", JSON, nullable=False),
        sa.Column("invite", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_studies")),
        sa.UniqueConstraint("invite", name=op.f("uq_studies_invite")),
    )
    op.create_index(op.f("ix_studies_owner"), "studies", ["owner"], unique=False)
    op.create_table(
        "study_items",
        sa.Column("study_id", sa.String(length=32), nullable=False),
        sa.Column("question", sa.Integer(), nullable=False),
        sa.Column("arm", sa.String(length=16), nullable=False),
        sa.Column("debate_id", sa.String(length=32), nullable=True),
        sa.Column("sources", JSON, nullable=True),
        sa.ForeignKeyConstraint(["study_id"], ["studies.id"], name=op.f("fk_study_items_study_id"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["debate_id"], ["debates.id"], name=op.f("fk_study_items_debate_id"),
                                ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("study_id", "question", "arm", name=op.f("pk_study_items")),
    )
    op.create_table(
        "study_participants",
        sa.Column("token_hash", sa.String(length=32), nullable=False),
        sa.Column("study_id", sa.String(length=32), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("question", sa.Integer(), nullable=False),
        sa.Column("arm", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["study_id"], ["studies.id"], name=op.f("fk_study_participants_study_id"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_study_participants")),
    )
    op.create_index(op.f("ix_study_participants_study_id"), "study_participants", ["study_id"], unique=False)
    op.create_table(
        "study_answers",
        sa.Column("respondent", sa.String(length=32), nullable=False),
        sa.Column("stage", sa.String(length=16), nullable=False),
        sa.Column("body", JSON, nullable=False),
        sa.Column("match", JSON, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["respondent"], ["study_participants.token_hash"],
                                name=op.f("fk_study_answers_respondent"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("respondent", "stage", name=op.f("pk_study_answers")),
    )


def downgrade() -> None:
    op.drop_table("study_answers")
    op.drop_index(op.f("ix_study_participants_study_id"), table_name="study_participants")
    op.drop_table("study_participants")
    op.drop_table("study_items")
    op.drop_index(op.f("ix_studies_owner"), table_name="studies")
    op.drop_table("studies")
