"""Check tokens: read-only tokens for the lag check routes, each scoped to a list of clusters

Revision ID: chk33b000001
Revises: own31a000001
Create Date: 2026-12-06 03:25:04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "chk33b000001"
down_revision: str | None = "own31a000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "check_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("last_used_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_check_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_check_tokens_token_hash")),
    )
    op.create_table(
        "check_token_clusters",
        sa.Column("token_id", sa.Integer(), nullable=False),
        sa.Column("cluster_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["cluster_id"],
            ["clusters.id"],
            name=op.f("fk_check_token_clusters_cluster_id_clusters"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["token_id"],
            ["check_tokens.id"],
            name=op.f("fk_check_token_clusters_token_id_check_tokens"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("token_id", "cluster_id", name=op.f("pk_check_token_clusters")),
    )
    with op.batch_alter_table("check_token_clusters") as batch:
        batch.create_index(
            batch.f("ix_check_token_clusters_cluster_id"), ["cluster_id"], unique=False
        )


def downgrade() -> None:
    # Indexes go with their tables: MySQL/MariaDB refuse to drop an index a foreign key needs.
    op.drop_table("check_token_clusters")
    op.drop_table("check_tokens")
