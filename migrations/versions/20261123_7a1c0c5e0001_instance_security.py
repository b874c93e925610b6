"""instance TLS settings, credential state, login back-off (issue 7)

Revision ID: 7a1c0c5e0001
Revises: fa57a97edb12
Create Date: 2026-11-23 06:00:00
"""

from collections.abc import Sequence

revision: str = "7a1c0c5e0001"
down_revision: str | None = "fa57a97edb12"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
