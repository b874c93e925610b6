"""the demo's mark on a store it made (issue 17 item 3)

``lagscope demo`` writes the one row into the store it has just made; the API refuses demo
mode (every caller an admin) on a store without it. Every store upgraded to here is left
unmarked: none of them was made by this version of the demo.

Revision ID: app17de0001
Revises: 13d7b0a10008
Create Date: 2026-11-25 09:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "app17de0001"
down_revision: str | None = "acc17a000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "demo_store",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_demo_store")),
    )


def downgrade() -> None:
    op.drop_table("demo_store")
