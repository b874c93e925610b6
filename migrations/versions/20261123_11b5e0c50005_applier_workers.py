"""applier worker samples (issue 11)

Revision ID: 11b5e0c50005
Revises: 10a4a1e70004
Create Date: 2026-11-23 06:00:00
"""

from collections.abc import Sequence

revision: str = "11b5e0c50005"
down_revision: str | None = "10a4a1e70004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
