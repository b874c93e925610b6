"""token expiry and revocation, user lifecycle, annotation editors (issue 7)

Revision ID: 7b2a0a7e0002
Revises: 7a2e0c5e0006
Create Date: 2026-11-23 06:00:00
"""

from collections.abc import Sequence

revision: str = "7b2a0a7e0002"
down_revision: str | None = "7a2e0c5e0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
