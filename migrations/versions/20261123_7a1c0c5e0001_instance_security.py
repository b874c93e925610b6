"""instance TLS settings (issue 7 item 1): instances.tls and instances.tls_ca_path

Revision ID: 7a1c0c5e0001
Revises: fa57a97edb12
Create Date: 2026-11-23 06:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "7a1c0c5e0001"
down_revision: str | None = "fa57a97edb12"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Existing instances keep what they had: PyMySQL's opportunistic TLS, now named preferred.
    with op.batch_alter_table("instances", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("tls", sa.String(length=16), server_default="preferred", nullable=False)
        )
        batch_op.add_column(sa.Column("tls_ca_path", sa.String(length=1024), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("instances", schema=None) as batch_op:
        batch_op.drop_column("tls_ca_path")
        batch_op.drop_column("tls")
