"""applier worker samples (issue 11)

Revision ID: 11b5e0c50005
Revises: 10a4a1e70004
Create Date: 2026-11-23 06:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "11b5e0c50005"
down_revision: str | None = "10a4a1e70004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "applier_worker_samples",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("ts", sa.BigInteger(), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("workers", sa.SmallInteger(), nullable=False),
        sa.Column("busy", sa.SmallInteger(), nullable=True),
        sa.Column("busy_mask", sa.LargeBinary(), nullable=True),
        sa.Column("active", sa.SmallInteger(), nullable=False),
        sa.Column("active_mask", sa.LargeBinary(), nullable=False),
        sa.Column("errors", sa.SmallInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_applier_worker_samples_instance_id_instances"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "instance_id", "ts", "channel", name=op.f("pk_applier_worker_samples")
        ),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "applier_workers",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("read_at", sa.BigInteger(), nullable=False),
        sa.Column("problem", sa.Text(), nullable=True),
        sa.Column("workers", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_applier_workers_instance_id_instances"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("instance_id", name=op.f("pk_applier_workers")),
    )


def downgrade() -> None:
    op.drop_table("applier_workers")
    op.drop_table("applier_worker_samples")
