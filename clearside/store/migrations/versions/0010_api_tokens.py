"""api tokens: the HTTP API's tokens (hashed), and the owner of every debate as a column

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-29 18:00:00

clearside/store/tokens.py: ``api_tokens`` (the SHA-256 of each token's secret, never the secret; a name; admin;
revoked). ``debates.owner`` repeats ``data["owner"]`` (a browser's token, or ``api-`` and an API token's id) so a
list asks for one owner's debates from an index; the debates saved before are given theirs from ``data``.
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_FILL = {
    "postgresql": "UPDATE debates SET owner = left(data->>'owner', 32) WHERE data ? 'owner' "
                  "AND jsonb_typeof(data->'owner') = 'string'",
    "sqlite": "UPDATE debates SET owner = substr(json_extract(data, '$.owner'), 1, 32) "
              "WHERE json_type(data, '$.owner') = 'text'",
}


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.String(length=16), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("secret_sha256", sa.String(length=64), nullable=False),
        sa.Column("admin", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("secret_sha256", name=op.f("uq_api_tokens_secret_sha256")),
    )
    with op.batch_alter_table("debates") as batch:
        batch.add_column(sa.Column("owner", sa.String(length=32), nullable=True))
        batch.create_index(batch.f("ix_debates_owner"), ["owner"], unique=False)
    fill = _FILL.get(op.get_bind().dialect.name)
    if fill:
        op.execute(fill)


def downgrade() -> None:
    with op.batch_alter_table("debates") as batch:
        batch.drop_index(batch.f("ix_debates_owner"))
        batch.drop_column("owner")
    op.drop_table("api_tokens")
