"""secret-key salt, unreadable credentials, monitored-server login back-off (issue 7)

The salt row is made here with a fresh random salt, so every process of a deployment derives
the same credential key from LAGSCOPE_SECRET_KEY. Values written before this revision stay
readable (the old SHA-256 derivation is kept for decrypting); ``lagscope secrets rotate``
re-encrypts them under the new key.

Downgrading drops the salt: credentials stored after the upgrade become unreadable.

Revision ID: 7a2e0c5e0006
Revises: 7a1c0c5e0001
Create Date: 2026-11-23 06:00:00
"""

import base64
import os
import time
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "7a2e0c5e0006"
down_revision: str | None = "7a1c0c5e0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copy of lagscope.security.secret_box.KDF at this revision (a migration must not change
# when the code does).
KDF = "scrypt:n=16384,r=8,p=1"


def upgrade() -> None:
    salt_table = op.create_table(
        "secret_key_salt",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kdf", sa.String(length=64), nullable=False),
        sa.Column("salt", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_secret_key_salt")),
    )
    op.bulk_insert(
        salt_table,
        [
            {
                "id": 1,
                "kdf": KDF,
                "salt": base64.urlsafe_b64encode(os.urandom(16)).decode(),
                "created_at": time.time_ns() // 1000,
            }
        ],
    )
    with op.batch_alter_table("instances", schema=None) as batch_op:
        batch_op.add_column(sa.Column("login_state", sa.String(length=32), nullable=True))
        batch_op.add_column(
            sa.Column("login_failures", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(sa.Column("next_attempt_at", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("instances", schema=None) as batch_op:
        batch_op.drop_column("next_attempt_at")
        batch_op.drop_column("login_failures")
        batch_op.drop_column("login_state")
    op.drop_table("secret_key_salt")
