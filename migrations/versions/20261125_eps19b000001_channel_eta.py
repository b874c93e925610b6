"""a channel's ETA with its band, and the recent rates it is made of (issue 19 item 3)

Existing channels start with no ETA and an empty window: the next polls fill them.

Revision ID: eps19b000001
Revises: eps19a000001
Create Date: 2026-11-25 13:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "eps19b000001"
down_revision: str | None = "eps19a000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("channels") as batch:
        batch.add_column(sa.Column("eta", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("eta_memory", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("channels") as batch:
        batch.drop_column("eta_memory")
        batch.drop_column("eta")
