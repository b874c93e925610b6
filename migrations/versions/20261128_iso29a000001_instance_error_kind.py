"""instances.last_error_kind: what kind of failure the last poll's error was (UnexpectedAnswer,
ServerUnreachable, …), for the kind label of /metrics' lagscope_poll_error

Revision ID: iso29a000001
Revises: prv29b000001
Create Date: 2026-11-28 15:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "iso29a000001"
down_revision: str | None = "prv29b000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("instances") as batch:
        batch.add_column(sa.Column("last_error_kind", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("instances") as batch:
        batch.drop_column("last_error_kind")
