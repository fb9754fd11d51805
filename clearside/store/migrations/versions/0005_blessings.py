"""blessings: the bless history, one row each time a batch becomes its suite's baseline

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 10:00:00

Each row keeps the suite, the batch blessed, the baseline it replaced, the note of why (required on the flagship
suite) and the warnings recorded at that moment (not significantly better than the baseline it replaced, a
version change), written in the transaction that moves the baseline (clearside/store/runs.py).
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "blessings",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("suite", sa.String(length=64), nullable=False),
        sa.Column("batch", sa.String(length=32), nullable=False),
        sa.Column("previous", sa.String(length=32), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("warnings", JSON, nullable=False),
        sa.Column("detail", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_blessings")),
    )
    op.create_index("ix_blessings_suite_created_at", "blessings", ["suite", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_blessings_suite_created_at", table_name="blessings")
    op.drop_table("blessings")
