"""The fleet overview: every cluster's status and replication edges in a handful of queries,
whatever the number of clusters, instead of one status request per card.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from lagscope.history.status.cluster import (
    ChannelState,
    InstanceState,
    _channel_state,
    _instance_state,
    current_param,
)
from lagscope.history.status.latest import (
    STALE_POLLS,
    ChannelRow,
    latest_channel_rows,
    latest_instance_samples,
)
from lagscope.history.status.topology import channel_source
from lagscope.models import Cluster


@dataclass(frozen=True, slots=True)
class FleetEdge:
    """Which instance a channel replicates from (as in :class:`TopologyEdge`, without the lag
    the channel's status already has)."""

    channel_id: int
    source_id: int | None
    replica_id: int


@dataclass(frozen=True, slots=True)
class FleetCluster:
    """One cluster of the fleet overview: its status and its replication edges."""

    id: int
    name: str
    enabled: bool
    poll_interval_s: float
    stale_after_s: float
    instances: list[InstanceState]
    channels: list[ChannelState]
    edges: list[FleetEdge]


def fleet_status(session: Session, now: datetime) -> list[FleetCluster]:
    """Every cluster's status and edges, for the overview of a whole fleet: five queries
    whatever the number of clusters (clusters, instances, their newest readings, one tracked
    parameter, every channel with its newest sample), not one status request per card."""
    clusters = session.scalars(
        select(Cluster).options(selectinload(Cluster.instances)).order_by(Cluster.id)
    ).all()
    instance_ids = [i.id for c in clusters for i in c.instances]
    polled = latest_instance_samples(session, instance_ids)
    doublewrite = current_param(session, instance_ids, "innodb_doublewrite")
    rows: dict[int, list[ChannelRow]] = {c.id: [] for c in clusters}
    for row in latest_channel_rows(session, [c.id for c in clusters]):
        rows[row.cluster.id].append(row)
    out = []
    for cluster in clusters:
        interval = cluster.poll_interval_s
        source = next((i for i in cluster.instances if i.role == "source"), None)
        instances = [
            _instance_state(
                i, polled.get(i.id), interval, now, doublewrite.get(i.id),
                cluster.heartbeat_stopped_at if i.role == "source" else None,
            )
            for i in cluster.instances
        ]  # fmt: skip
        edges = []
        for row in rows[cluster.id]:
            upstream = channel_source(cluster.instances, row.channel) or source
            edges.append(
                FleetEdge(row.channel.id, upstream.id if upstream else None, row.instance.id)
            )
        channels = [_channel_state(row, interval, now) for row in rows[cluster.id]]
        out.append(
            FleetCluster(cluster.id, cluster.name, cluster.enabled, interval,
                         STALE_POLLS * interval, instances, channels, edges)
        )  # fmt: skip
    return out
