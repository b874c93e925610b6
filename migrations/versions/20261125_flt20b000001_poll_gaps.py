"""ticks that did not happen: the cluster's last tick and poll_gaps (issue 20)

Revision ID: flt20b000001
Revises: prt20a000001
Create Date: 2026-11-25 19:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "flt20b000001"
down_revision: str | None = "prt20a000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("clusters", schema=None) as batch_op:
        batch_op.add_column(sa.Column("last_tick_at", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("last_tick_s", sa.Double(), nullable=True))
        batch_op.add_column(sa.Column("last_tick_by", sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column("tick_expired_at", sa.BigInteger(), nullable=True))
    op.create_table(
        "poll_gaps",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cluster_id", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=False),
        sa.Column("missed", sa.Integer(), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["cluster_id"], ["clusters.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_poll_gaps_cluster_ended", "poll_gaps", ["cluster_id", "ended_at"])


def downgrade() -> None:
    # Dropping a table drops its indexes; MySQL refuses to drop an index a foreign key needs.
    op.drop_table("poll_gaps")
    with op.batch_alter_table("clusters", schema=None) as batch_op:
        batch_op.drop_column("tick_expired_at")
        batch_op.drop_column("last_tick_by")
        batch_op.drop_column("last_tick_s")
        batch_op.drop_column("last_tick_at")
