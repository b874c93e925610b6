"""Audit trail: who changed what, when and from where, through the API or the CLI

Revision ID: aud33c000001
Revises: chk33b000001
Create Date: 2026-12-06 03:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "aud33c000001"
down_revision: str | None = "chk33b000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(length=128), nullable=False),
        sa.Column("source", sa.String(length=255), nullable=False),
        sa.Column("via", sa.String(length=255), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("object_id", sa.Integer(), nullable=True),
        sa.Column("object_name", sa.String(length=255), nullable=False),
        sa.Column("changes", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_events")),
    )
    with op.batch_alter_table("audit_events") as batch:
        batch.create_index("ix_audit_events_at", ["at"], unique=False)
        batch.create_index("ix_audit_events_object", ["kind", "object_id"], unique=False)


def downgrade() -> None:
    op.drop_table("audit_events")
