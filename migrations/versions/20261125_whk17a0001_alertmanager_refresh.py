"""alert_states.refreshed_at: when a firing alert was last sent to Alertmanager API targets
(issue 17 item 17)

Revision ID: whk17a0001
Revises: 13d7b0a10008
Create Date: 2026-11-25 09:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "whk17a0001"
down_revision: str | None = "sec17a000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Nullable, no default: an alert firing at upgrade time counts from its firing start.
    with op.batch_alter_table("alert_states") as batch:
        batch.add_column(sa.Column("refreshed_at", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alert_states") as batch:
        batch.drop_column("refreshed_at")
