"""Poll owners and shard leases: each shard of clusters polled by one owner, fenced by a token;
clusters.revision, bumped by every edit, for an owner that keeps clusters in memory

Revision ID: own31a000001
Revises: err30d000001
Create Date: 2026-12-01 19:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "own31a000001"
down_revision: str | None = "err30d000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("clusters") as batch:
        batch.add_column(sa.Column("revision", sa.Integer(), nullable=False, server_default="0"))
    op.create_table(
        "shard_leases",
        sa.Column("shard", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("owner", sa.String(length=255), nullable=True),
        sa.Column("token", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.Column("renewed_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("shard"),
    )
    op.create_table(
        "poll_owners",
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("seen_at", sa.Float(), nullable=False),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )


def downgrade() -> None:
    op.drop_table("poll_owners")
    op.drop_table("shard_leases")
    with op.batch_alter_table("clusters") as batch:
        batch.drop_column("revision")
