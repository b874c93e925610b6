"""the fsync cost per file class, the applier waiting on the relay log, MySQL's commit
parents (issue 22)

Revision ID: dur22a000001
Revises: prl22a000001
Create Date: 2026-11-27 15:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "dur22a000001"
down_revision: str | None = "prl22a000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_INSTANCE_COLUMNS = (
    ("binlog_fsync_s_per_s", sa.Integer()),
    ("relay_log_fsync_s_per_s", sa.Integer()),
    ("redo_fsync_s_per_s", sa.Integer()),
    ("fsync_latency_s", sa.BigInteger()),
)


def upgrade() -> None:
    for name, kind in _INSTANCE_COLUMNS:
        op.add_column("instance_samples", sa.Column(name, kind, nullable=True))
    op.add_column(
        "applier_worker_samples", sa.Column("relay_waiting", sa.SmallInteger(), nullable=True)
    )
    op.add_column("commit_samples", sa.Column("parents", sa.JSON(), nullable=True))
    op.add_column("commit_samples", sa.Column("problem", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("commit_samples") as batch:
        batch.drop_column("problem")
        batch.drop_column("parents")
    with op.batch_alter_table("applier_worker_samples") as batch:
        batch.drop_column("relay_waiting")
    with op.batch_alter_table("instance_samples") as batch:
        for name, _ in reversed(_INSTANCE_COLUMNS):
            batch.drop_column(name)
