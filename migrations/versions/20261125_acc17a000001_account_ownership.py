"""annotations belong to a user id; login throttling per (username, client) (issue 17)

Annotations gain ``author_id`` (the author's account, null once it is deleted), backfilled
from ``author`` where a user of exactly that name exists: compared in Python, not in SQL,
because MySQL's default collation would match a new ``ALICE`` to a deleted ``alice``'s notes.
Login throttle rows keyed by username alone (``user:<name>``) are dropped: the keys are now
``user:<name>|<client>`` and ``addr:<client>``, and an old row would be dead weight.

Revision ID: acc17a000001
Revises: 13d7b0a10008
Create Date: 2026-11-25 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "acc17a000001"
down_revision: str | None = "lag17hb00001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_users = sa.table("users", sa.column("id", sa.Integer), sa.column("username", sa.String))
_annotations = sa.table(
    "annotations",
    sa.column("id", sa.Integer),
    sa.column("author", sa.String),
    sa.column("author_id", sa.Integer),
)
_throttles = sa.table("login_throttles", sa.column("key", sa.String))


def upgrade() -> None:
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("author_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_annotations_author_id"), ["author_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_annotations_author_id_users"),
            "users",
            ["author_id"],
            ["id"],
            ondelete="SET NULL",
        )
    bind = op.get_bind()
    ids = {name: uid for uid, name in bind.execute(sa.select(_users.c.id, _users.c.username))}
    notes = bind.execute(sa.select(_annotations.c.id, _annotations.c.author)).all()
    for note_id, author in notes:
        if author in ids:  # exactly: a name differing only in case is another person
            bind.execute(
                _annotations.update()
                .where(_annotations.c.id == note_id)
                .values(author_id=ids[author])
            )

    with op.batch_alter_table("login_throttles", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_login_throttles_updated_at"), ["updated_at"], unique=False
        )
    bind.execute(
        _throttles.delete().where(
            _throttles.c.key.like("user:%"), sa.not_(_throttles.c.key.like("%|%"))
        )
    )


def downgrade() -> None:
    with op.batch_alter_table("login_throttles", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_login_throttles_updated_at"))
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_annotations_author_id_users"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_annotations_author_id"))
        batch_op.drop_column("author_id")
