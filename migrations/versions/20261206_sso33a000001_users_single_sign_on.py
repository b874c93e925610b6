"""users made by single sign-on: the provider's issuer and the person's subject there

A user with both set was made by an OpenID Connect sign-in (security/sso.py) and is found by
them, never by username; (issuer, subject) is unique. Local users keep both null.

Revision ID: sso33a000001
Revises: aud33c000001
Create Date: 2026-12-06 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "sso33a000001"
down_revision: str | None = "aud33c000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Plain ADD COLUMN and a unique index, not a batch operation: on SQLite a batch rebuilds the
# users table, and dropping the old one (foreign keys on) would null every annotation's author
# and delete every API token that points at it.
_INDEX = "uq_users_oidc_issuer_oidc_subject"


def upgrade() -> None:
    op.add_column("users", sa.Column("oidc_issuer", sa.String(length=255), nullable=True))
    op.add_column("users", sa.Column("oidc_subject", sa.String(length=255), nullable=True))
    op.create_index(_INDEX, "users", ["oidc_issuer", "oidc_subject"], unique=True)


def downgrade() -> None:
    op.drop_index(_INDEX, table_name="users")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("oidc_subject")
        batch_op.drop_column("oidc_issuer")
