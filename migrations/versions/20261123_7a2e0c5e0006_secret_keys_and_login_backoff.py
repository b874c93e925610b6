"""secret-key salt, unreadable credentials, monitored-server login back-off (issue 7)

Revision ID: 7a2e0c5e0006
Revises: 7a1c0c5e0001
Create Date: 2026-11-23 06:00:00
"""

from collections.abc import Sequence

revision: str = "7a2e0c5e0006"
down_revision: str | None = "7a1c0c5e0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
