"""reserved for the demo scenario / issue 12 (empty unless needed)

Revision ID: 13d7b0a10008
Revises: 12c6a0e70007
Create Date: 2026-11-23 09:00:01
"""

from collections.abc import Sequence

revision: str = "13d7b0a10008"
down_revision: str | None = "12c6a0e70007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
