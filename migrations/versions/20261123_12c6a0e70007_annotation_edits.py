"""annotation edits: updated_by / updated_at (issue 7 item 8)

Revision ID: 12c6a0e70007
Revises: 11b5e0c50005
Create Date: 2026-11-23 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "12c6a0e70007"
down_revision: str | None = "11b5e0c50005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Nullable, no default: notes written before this revision were never edited.
    with op.batch_alter_table("annotations") as batch:
        batch.add_column(sa.Column("updated_by", sa.String(length=128), nullable=True))
        batch.add_column(sa.Column("updated_at", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    # batch mode: SQLite before 3.35 cannot drop a column in place.
    with op.batch_alter_table("annotations") as batch:
        batch.drop_column("updated_at")
        batch.drop_column("updated_by")
