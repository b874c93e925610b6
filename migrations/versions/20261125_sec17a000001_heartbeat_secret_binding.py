"""heartbeat password bound to its source; heartbeat login back-off in the store (issue 17)

``heartbeat_password_target`` records the source (instance id, host, port, TLS) the heartbeat
writer's password was entered for; the writer never sends it anywhere else. Existing passwords
are bound to their cluster's current source; one on a cluster with no source (the state an
editor reached by deleting the source, to add their own) is dropped, with the reason kept in
``heartbeat_password_cleared``. ``heartbeat_login_*`` hold the writer's back-off after refused
logins, as ``instances.login_*`` hold the pollers'.

Revision ID: sec17a000001
Revises: 13d7b0a10008
Create Date: 2026-11-25 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "sec17a000001"
down_revision: str | None = "13d7b0a10008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_clusters = sa.table(
    "clusters",
    sa.column("id", sa.Integer()),
    sa.column("heartbeat_password_enc", sa.Text()),
    sa.column("heartbeat_password_target", sa.JSON()),
    sa.column("heartbeat_password_cleared", sa.Text()),
)
_instances = sa.table(
    "instances",
    sa.column("id", sa.Integer()),
    sa.column("cluster_id", sa.Integer()),
    sa.column("host", sa.String()),
    sa.column("port", sa.Integer()),
    sa.column("role", sa.String()),
    sa.column("tls", sa.String()),
    sa.column("tls_ca_path", sa.String()),
)


def upgrade() -> None:
    with op.batch_alter_table("clusters", schema=None) as batch_op:
        batch_op.add_column(sa.Column("heartbeat_password_target", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("heartbeat_password_cleared", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("heartbeat_login_state", sa.String(length=32), nullable=True))
        batch_op.add_column(
            sa.Column("heartbeat_login_failures", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(sa.Column("heartbeat_next_attempt_at", sa.BigInteger(), nullable=True))
    bind = op.get_bind()
    stored = bind.execute(
        sa.select(_clusters.c.id).where(_clusters.c.heartbeat_password_enc.is_not(None))
    ).all()
    for (cluster_id,) in stored:
        sources = bind.execute(
            sa.select(
                _instances.c.id,
                _instances.c.host,
                _instances.c.port,
                _instances.c.tls,
                _instances.c.tls_ca_path,
            ).where(_instances.c.cluster_id == cluster_id, _instances.c.role == "source")
        ).all()
        if len(sources) == 1:
            iid, host, port, tls, ca = sources[0]
            target = {
                "instance_id": iid,
                "host": host,
                "port": port,
                "tls": tls or "preferred",
                "tls_ca_path": ca,
            }
            values: dict[str, object] = {"heartbeat_password_target": target}
        else:
            values = {
                "heartbeat_password_enc": None,
                "heartbeat_password_cleared": "the cluster had no source when Lagscope was "
                "upgraded, so the address the password was entered for is unknown",
            }
        bind.execute(_clusters.update().where(_clusters.c.id == cluster_id).values(**values))


def downgrade() -> None:
    with op.batch_alter_table("clusters", schema=None) as batch_op:
        batch_op.drop_column("heartbeat_next_attempt_at")
        batch_op.drop_column("heartbeat_login_failures")
        batch_op.drop_column("heartbeat_login_state")
        batch_op.drop_column("heartbeat_password_cleared")
        batch_op.drop_column("heartbeat_password_target")
