"""Errant transactions: samples.errant_trx (how many, per poll) and channels.errant_gtids (the
newest poll's set, overwritten rather than repeated per poll)

Revision ID: err30d000001
Revises: iso29a000001
Create Date: 2026-11-28 15:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "err30d000001"
down_revision: str | None = "iso29a000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Nullable columns: SQLite adds them in place, so the WITHOUT ROWID table stays as it is; on
    # PostgreSQL a column added to the partitioned samples reaches every partition.
    with op.batch_alter_table("samples") as batch:
        batch.add_column(sa.Column("errant_trx", sa.BigInteger(), nullable=True))
    with op.batch_alter_table("channels") as batch:
        batch.add_column(sa.Column("errant_gtids", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("channels") as batch:
        batch.drop_column("errant_gtids")
    with op.batch_alter_table("samples") as batch:
        batch.drop_column("errant_trx")
