"""Clusters and instances: create, edit and delete them, and turn a stored instance into a
connection spec. Where an edit may send a stored password is inventory/password_targets.py."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.collectors.connection import (
    ConnectionSpec,
    check_public_key_setting,
    check_tls_setting,
)
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.targets import AllowList
from lagscope.errors import Conflict, InvalidInput, NotFound
from lagscope.inventory import heartbeat_login
from lagscope.inventory import server_logins as logins
from lagscope.inventory.password_targets import apply_tls, check_move
from lagscope.models import Cluster, Instance
from lagscope.security.secret_box import SecretBox

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
    allowed: AllowList | None = None,
    tls: str = "preferred",
    tls_ca_path: str | None = None,
    ca_dir: str | None = None,
    enabled: bool = True,
    server_public_key_path: str | None = None,
) -> Instance:
    tls_ca_path = tls_ca_path or None
    server_public_key_path = server_public_key_path or None
    check_tls_setting(tls, tls_ca_path, ca_dir)
    check_public_key_setting(tls, server_public_key_path, ca_dir)
    if role not in ROLES:
        raise InvalidInput(f"role must be one of {', '.join(ROLES)}")
    if allowed is not None:
        allowed.check(host, port)  # early and clear; polling checks again at each connection
    if role == "source" and any(i.role == "source" for i in cluster.instances):
        raise Conflict(f"cluster {cluster.name!r} already has a source")
    if any(i.name == name for i in cluster.instances):
        raise Conflict(f"cluster {cluster.name!r} already has an instance named {name!r}")
    instance = Instance(
        name=name,
        host=host,
        port=port,
        user=user,
        password_enc=box.encrypt(password),
        role=role,
        region=region,
        tls=tls,
        tls_ca_path=tls_ca_path,
        server_public_key_path=server_public_key_path,
        enabled=enabled,
    )
    cluster.instances.append(instance)
    session.flush()
    heartbeat_login.follow_source(cluster)  # a first source binds a waiting heartbeat password
    session.flush()
    return instance


def set_heartbeat_writer(
    session: Session, box: SecretBox, cluster: Cluster, user: str, password: str
) -> None:
    cluster.heartbeat_user = user
    heartbeat_login.enter(box, cluster, password)
    session.flush()


def get_cluster(session: Session, cluster_id: int) -> Cluster:
    cluster = session.get(Cluster, cluster_id)
    if cluster is None:
        raise NotFound(f"cluster {cluster_id} does not exist")
    return cluster


def cluster_by_name_or_id(session: Session, ref: str) -> Cluster:
    """The cluster named ``ref``, else the one whose id it is (a name wins over an id)."""
    found = session.scalar(select(Cluster).where(Cluster.name == ref))
    if found is None and ref.isdigit():
        found = session.get(Cluster, int(ref))
    if found is None:
        raise NotFound(f"cluster {ref!r} does not exist")
    return found


def instance_named(session: Session, cluster: Cluster, name: str) -> Instance:
    found = session.scalar(
        select(Instance).where(Instance.cluster_id == cluster.id, Instance.name == name)
    )
    if found is None:
        raise InvalidInput(f"cluster {cluster.name!r} has no instance {name!r}")
    return found


def connection_spec(
    box: SecretBox,
    instance: Instance,
    connect_timeout_s: float = 2.0,
    read_timeout_s: float = 2.0,
    allowed: AllowList | None = None,
) -> ConnectionSpec:
    return ConnectionSpec(
        allowed=allowed,
        host=instance.host,
        port=instance.port,
        user=instance.user,
        password=box.decrypt(instance.password_enc),
        connect_timeout_s=connect_timeout_s,
        read_timeout_s=read_timeout_s,
        **tls_of(instance),
    )


def tls_of(instance: Instance) -> dict[str, Any]:
    """The instance's TLS setting as ConnectionSpec arguments: every connection to it (polls,
    the heartbeat writer's login to a source) is protected alike."""
    return {
        "tls": instance.tls,
        "tls_ca_path": instance.tls_ca_path,
        "server_public_key_path": instance.server_public_key_path,
    }


def heartbeat_table(cluster: Cluster) -> HeartbeatTable | None:
    if cluster.heartbeat_mode == "off":
        return None
    kind: Literal["lagscope", "pt-heartbeat"] = (
        "lagscope" if cluster.heartbeat_mode == "lagscope" else "pt-heartbeat"
    )
    return HeartbeatTable(kind=kind, schema=cluster.heartbeat_schema, table=cluster.heartbeat_table)


def list_clusters(session: Session) -> list[Cluster]:
    return list(session.scalars(select(Cluster).order_by(Cluster.id)))


def update_cluster(
    session: Session, box: SecretBox, cluster: Cluster, changes: dict[str, Any]
) -> Cluster:
    """Apply a partial update; ``changes`` holds only the fields the caller sent."""
    if "name" in changes and changes["name"] != cluster.name:
        if session.scalar(select(Cluster.id).where(Cluster.name == changes["name"])) is not None:
            raise Conflict(f"a cluster named {changes['name']!r} exists")
        cluster.name = changes["name"]
    if "enabled" in changes and changes["enabled"] != cluster.enabled:
        # A pause someone chose is not a hole in polling: the next tick starts afresh.
        cluster.last_tick_at = None
    for field in ("poll_interval_s", "extra_params", "enabled"):
        if field in changes:
            setattr(cluster, field, changes[field])
    if heartbeat := changes.get("heartbeat"):
        apply_heartbeat(box, cluster, heartbeat)
    session.flush()
    return cluster


def apply_heartbeat(box: SecretBox, cluster: Cluster, heartbeat: dict[str, Any]) -> None:
    cluster.heartbeat_mode = heartbeat.get("mode", cluster.heartbeat_mode)
    cluster.heartbeat_schema = heartbeat.get("schema_name", cluster.heartbeat_schema)
    cluster.heartbeat_table = heartbeat.get("table", cluster.heartbeat_table)
    cluster.heartbeat_interval_s = heartbeat.get("interval_s", cluster.heartbeat_interval_s)
    user, password = heartbeat.get("user"), heartbeat.get("password")
    if (
        user is not None
        and user != cluster.heartbeat_user
        and password is None
        and cluster.heartbeat_password_enc is not None
    ):
        # As for instances: the stored password goes with the user it was entered for.
        raise InvalidInput(
            "changing the heartbeat user needs the heartbeat password again in the same "
            "request (the stored one is only sent as the user it was entered for)"
        )
    if user is not None:
        cluster.heartbeat_user = user
    if password is not None:
        heartbeat_login.enter(box, cluster, password)


def get_instance(session: Session, instance_id: int) -> Instance:
    instance = session.get(Instance, instance_id)
    if instance is None:
        raise NotFound(f"instance {instance_id} does not exist")
    return instance


def instance_in_cluster(session: Session, cluster: Cluster, instance_id: int) -> Instance:
    instance = get_instance(session, instance_id)
    if instance.cluster_id != cluster.id:
        raise InvalidInput(f"instance_id: instance {instance_id} is not in cluster {cluster.id}")
    return instance


def update_instance(
    session: Session,
    box: SecretBox,
    instance: Instance,
    changes: dict[str, Any],
    allowed: AllowList | None = None,
    ca_dir: str | None = None,
) -> Instance:
    if "name" in changes and changes["name"] != instance.name:
        taken = session.scalar(
            select(Instance.id).where(
                Instance.cluster_id == instance.cluster_id, Instance.name == changes["name"]
            )
        )
        if taken is not None:
            raise Conflict(f"the cluster already has an instance named {changes['name']!r}")
    moved = check_move(instance, changes)
    if allowed is not None and {"host", "port"} & set(moved):
        # Only a move is checked: an instance the list has since excluded can still be
        # renamed or disabled (polling leaves it alone meanwhile).
        allowed.check(changes.get("host", instance.host), changes.get("port", instance.port))
    protection_changed = apply_tls(instance, changes, ca_dir)
    was_enabled = instance.enabled
    for field in ("name", "host", "port", "user", "region", "enabled"):
        if field in changes:
            setattr(instance, field, changes[field])
    if "password" in changes or protection_changed or (changes.get("enabled") and not was_enabled):
        # New credentials, TLS or a pin that may now let the password go, or re-enabled by
        # someone who fixed the account: the back-off after refused logins (or an unreadable
        # password) was about before; try at the next tick.
        logins.reset(instance)
    if "password" in changes:
        instance.password_enc = box.encrypt(changes["password"]) if changes["password"] else ""
    # The heartbeat writer logs in to the source: its password must not follow a move (or
    # weaker TLS) either.
    heartbeat_login.follow_source(instance.cluster)
    session.flush()
    return instance


def retry_login(session: Session, instance: Instance) -> Instance:
    """Someone says the account is fixed on the server: try the stored password at the next
    tick, even after polling gave up (inventory/server_logins.py)."""
    logins.reset(instance)
    session.flush()
    return instance


def delete(session: Session, row: Cluster | Instance) -> None:
    if isinstance(row, Instance):
        cluster = row.cluster
        cluster.instances.remove(row)  # delete-orphan: deleted at the flush
        # A deleted source takes the heartbeat password with it: never to its successor.
        heartbeat_login.follow_source(cluster)
    else:
        session.delete(row)
    session.flush()
