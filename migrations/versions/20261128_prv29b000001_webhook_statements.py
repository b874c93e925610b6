"""webhook_targets.include_statements: whether a target's bodies quote the servers' text in
the causes' sentences (off by default, existing targets included)

Revision ID: prv29b000001
Revises: dur22a000001
Create Date: 2026-11-28 15:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "prv29b000001"
down_revision: str | None = "dur22a000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("webhook_targets") as batch:
        batch.add_column(
            sa.Column("include_statements", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("webhook_targets") as batch:
        batch.drop_column("include_statements")
