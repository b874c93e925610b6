"""users made by single sign-on: the provider's issuer and the person's subject there (issue 33)

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


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("oidc_issuer", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("oidc_subject", sa.String(length=255), nullable=True))
        batch_op.create_unique_constraint(
            batch_op.f("uq_users_oidc_issuer_oidc_subject"), ["oidc_issuer", "oidc_subject"]
        )


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_users_oidc_issuer_oidc_subject"), type_="unique")
        batch_op.drop_column("oidc_subject")
        batch_op.drop_column("oidc_issuer")
