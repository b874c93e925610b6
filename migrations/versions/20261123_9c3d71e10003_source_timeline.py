"""source progress history and timeline lag (issue 9)

Revision ID: 9c3d71e10003
Revises: 7b2a0a7e0002
Create Date: 2026-11-23 06:00:00
"""

from collections.abc import Sequence

revision: str = "9c3d71e10003"
down_revision: str | None = "7b2a0a7e0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
