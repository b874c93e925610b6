"""Clusters and instances: create them, and turn a stored instance into a connection spec."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.collectors.executor import ConnectionSpec
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.errors import Conflict, InvalidInput, NotFound
from lagscope.models import Cluster, Instance
from lagscope.services.secrets import SecretBox

ROLES = ("source", "replica")
HEARTBEAT_MODES = ("off", "lagscope", "pt-heartbeat")


def create_cluster(
    session: Session,
    name: str,
    poll_interval_s: float = 1.0,
    extra_params: Sequence[str] = (),
    heartbeat_mode: str = "off",
    heartbeat_interval_s: float = 0.25,
) -> Cluster:
    if session.scalar(select(Cluster.id).where(Cluster.name == name)) is not None:
        raise Conflict(f"a cluster named {name!r} exists")
    if not 0.2 <= poll_interval_s <= 3600:
        raise InvalidInput("poll_interval_s must be between 0.2 and 3600")
    if heartbeat_mode not in HEARTBEAT_MODES:
        raise InvalidInput(f"heartbeat_mode must be one of {', '.join(HEARTBEAT_MODES)}")
    cluster = Cluster(
        name=name,
        poll_interval_s=poll_interval_s,
        extra_params=list(extra_params),
        heartbeat_mode=heartbeat_mode,
        heartbeat_interval_s=heartbeat_interval_s,
        created_at=datetime.now(UTC),
    )
    session.add(cluster)
    session.flush()
    return cluster


def add_instance(
    session: Session,
    box: SecretBox,
    cluster: Cluster,
    name: str,
    host: str,
    port: int,
    user: str,
    password: str,
    role: str = "replica",
    region: str = "",
) -> Instance:
    if role not in ROLES:
        raise InvalidInput(f"role must be one of {', '.join(ROLES)}")
    if role == "source" and any(i.role == "source" for i in cluster.instances):
        raise Conflict(f"cluster {cluster.name!r} already has a source")
    instance = Instance(
        name=name,
        host=host,
        port=port,
        user=user,
        password_enc=box.encrypt(password),
        role=role,
        region=region,
    )
    cluster.instances.append(instance)
    session.flush()
    return instance


def set_heartbeat_writer(
    session: Session, box: SecretBox, cluster: Cluster, user: str, password: str
) -> None:
    cluster.heartbeat_user = user
    cluster.heartbeat_password_enc = box.encrypt(password)
    session.flush()


def get_cluster(session: Session, cluster_id: int) -> Cluster:
    cluster = session.get(Cluster, cluster_id)
    if cluster is None:
        raise NotFound(f"cluster {cluster_id} does not exist")
    return cluster


def connection_spec(
    box: SecretBox, instance: Instance, connect_timeout_s: float = 2.0, read_timeout_s: float = 2.0
) -> ConnectionSpec:
    return ConnectionSpec(
        host=instance.host,
        port=instance.port,
        user=instance.user,
        password=box.decrypt(instance.password_enc),
        connect_timeout_s=connect_timeout_s,
        read_timeout_s=read_timeout_s,
    )


def heartbeat_table(cluster: Cluster) -> HeartbeatTable | None:
    if cluster.heartbeat_mode == "off":
        return None
    kind: Literal["lagscope", "pt-heartbeat"] = (
        "lagscope" if cluster.heartbeat_mode == "lagscope" else "pt-heartbeat"
    )
    return HeartbeatTable(kind=kind, schema=cluster.heartbeat_schema, table=cluster.heartbeat_table)
