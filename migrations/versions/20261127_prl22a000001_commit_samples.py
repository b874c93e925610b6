"""windows of a source's binlog grouped by group commit (issue 22)

Revision ID: prl22a000001
Revises: own21a000001
Create Date: 2026-11-27 11:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "prl22a000001"
down_revision: str | None = "own21a000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "commit_samples",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("taken_at", sa.BigInteger(), nullable=False),
        sa.Column("transactions", sa.Integer(), nullable=False),
        sa.Column("groups", sa.JSON(), nullable=False),
        sa.Column("next_file", sa.String(length=255), nullable=True),
        sa.Column("next_pos", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_commit_samples_instance_id_instances"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_commit_samples")),
    )
    op.create_index(
        "ix_commit_samples_instance_taken", "commit_samples", ["instance_id", "taken_at"]
    )


def downgrade() -> None:
    # Dropping a table drops its indexes; MySQL refuses to drop an index a foreign key needs.
    op.drop_table("commit_samples")
