"""Every ORM change of a cluster, its instances or their channels bumps ``clusters.revision``.

A poll owner keeps its clusters in memory between ticks (ingest/tick_cache.py) and must notice
an edit made elsewhere — a new password, an instance disabled, a login reset, a cluster's
interval — without reloading every cluster every second. Edits are made through the ORM (the
API, the inventory, the CLI, the heartbeat writer's back-off); the tick itself writes its own
columns with Core statements (ingest/tick_rows.py), which do not pass through here, so a tick
does not invalidate its own cache.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, update
from sqlalchemy.orm import Session, UOWTransaction

from lagscope.models.inventory import Channel, Cluster, Instance


def _cluster_of(obj: object) -> int | None:
    if isinstance(obj, Cluster):
        return obj.id
    if isinstance(obj, Instance):
        return obj.cluster_id if obj.cluster_id is not None else getattr(obj.cluster, "id", None)
    if isinstance(obj, Channel):
        instance = obj.instance if "instance" in obj.__dict__ else None
        if instance is not None:
            return _cluster_of(instance)
        return None
    return None


@event.listens_for(Session, "before_flush")
def _bump_revisions(session: Session, _flush: UOWTransaction, _instances: Any) -> None:
    touched = [*session.new, *session.dirty, *session.deleted]
    ids = {cid for obj in touched if (cid := _cluster_of(obj)) is not None}
    if not ids:
        return
    loaded = {
        obj.id: obj
        for obj in session.identity_map.values()
        if isinstance(obj, Cluster) and obj.id in ids and obj not in session.deleted
    }
    for obj in loaded.values():
        obj.revision = (obj.revision or 0) + 1  # written with its row in this flush
    others = sorted(ids - set(loaded))
    if others:
        session.execute(
            update(Cluster)
            .where(Cluster.id.in_(others))
            .values(revision=Cluster.revision + 1)
            .execution_options(synchronize_session=False)
        )
