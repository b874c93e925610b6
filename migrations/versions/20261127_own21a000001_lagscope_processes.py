"""Lagscope's own processes, as each last reported itself (issue 21)

Revision ID: own21a000001
Revises: flt20b000001
Create Date: 2026-11-27 10:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "own21a000001"
down_revision: str | None = "flt20b000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "lagscope_processes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("seen_at", sa.BigInteger(), nullable=False),
        sa.Column("last_dispatch_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lagscope_processes")),
        sa.UniqueConstraint("kind", "name", name=op.f("uq_lagscope_processes_kind_name")),
    )


def downgrade() -> None:
    op.drop_table("lagscope_processes")
