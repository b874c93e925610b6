"""pinned server public keys (issue 17 item 2): instances.server_public_key_path

Revision ID: plg17a0c0001
Revises: 13d7b0a10008
Create Date: 2026-11-25 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "plg17a0c0001"
down_revision: str | None = "whk17a0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # NULL for existing instances: no pinned key, so a sha256_password or caching_sha2 full
    # login without verified TLS is refused rather than sent to the server's own key.
    with op.batch_alter_table("instances", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("server_public_key_path", sa.String(length=1024), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("instances", schema=None) as batch_op:
        batch_op.drop_column("server_public_key_path")
