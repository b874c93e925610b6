"""the heartbeat writer's last beat once it has stopped (issue 17 item 20)

Revision ID: lag17hb00001
Revises: 13d7b0a10008
Create Date: 2026-11-25 09:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "lag17hb00001"
down_revision: str | None = "plg17a0c0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("clusters", schema=None) as batch_op:
        batch_op.add_column(sa.Column("heartbeat_stopped_at", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("clusters", schema=None) as batch_op:
        batch_op.drop_column("heartbeat_stopped_at")
