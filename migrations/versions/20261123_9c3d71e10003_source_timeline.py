"""source progress history and timeline lag (issue 9)

Revision ID: 9c3d71e10003
Revises: 7b2a0a7e0002
Create Date: 2026-11-23 06:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "9c3d71e10003"
down_revision: str | None = "7b2a0a7e0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "source_progress",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("stream", sa.String(length=16), nullable=False),
        sa.Column("ts", sa.BigInteger(), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_source_progress_instance_id_instances"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("instance_id", "stream", "ts", name=op.f("pk_source_progress")),
        sqlite_with_rowid=False,
    )
    # Adding nullable columns: SQLite does it in place (batch mode only recreates when needed),
    # so the WITHOUT ROWID table stays as it is.
    with op.batch_alter_table("samples", schema=None) as batch_op:
        batch_op.add_column(sa.Column("timeline_lag_s", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("timeline_resolution_s", sa.Integer(), nullable=True))
    for rollup in ("samples_1m", "samples_1h"):
        with op.batch_alter_table(rollup, schema=None) as batch_op:
            batch_op.add_column(sa.Column("timeline_lag_avg", sa.BigInteger(), nullable=True))
            batch_op.add_column(sa.Column("timeline_lag_max", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    for rollup in ("samples_1h", "samples_1m"):
        with op.batch_alter_table(rollup, schema=None) as batch_op:
            batch_op.drop_column("timeline_lag_max")
            batch_op.drop_column("timeline_lag_avg")
    with op.batch_alter_table("samples", schema=None) as batch_op:
        batch_op.drop_column("timeline_resolution_s")
        batch_op.drop_column("timeline_lag_s")
    op.drop_table("source_progress")
