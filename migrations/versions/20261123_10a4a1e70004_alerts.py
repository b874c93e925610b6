"""alert rules, states, silences, webhook targets, deliveries (issue 10)

Revision ID: 10a4a1e70004
Revises: 9c3d71e10003
Create Date: 2026-11-23 06:00:00
"""

from collections.abc import Sequence

revision: str = "10a4a1e70004"
down_revision: str | None = "9c3d71e10003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
