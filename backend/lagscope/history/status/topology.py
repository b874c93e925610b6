"""A cluster's topology: its instances as nodes and its channels as edges from the instance each
replicates from, with the lag each edge carries now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from lagscope.history.status.cluster import lag_source_label, verdict_label
from lagscope.history.status.latest import is_stale, latest_channel_rows, latest_instance_samples
from lagscope.inventory.instances import get_cluster
from lagscope.models import Channel, Instance


@dataclass(frozen=True, slots=True)
class TopologyNode:
    id: int
    name: str
    role: str
    region: str
    flavor: str | None
    version: str | None
    reachable: bool | None


@dataclass(frozen=True, slots=True)
class TopologyEdge:
    channel_id: int
    channel: str
    source_id: int | None  # None: the cluster has no source instance to draw from
    replica_id: int
    # True when the channel's own source address named the instance; False when the edge
    # falls back to the cluster's source (the store keeps no per-channel source address yet).
    source_matched: bool
    stale: bool
    verdict: str | None
    lag_s: float | None
    lag_source: str | None
    trx_behind: int | None
    not_received: int | None
    received_not_applied: int | None


@dataclass(frozen=True, slots=True)
class Topology:
    cluster_id: int
    nodes: list[TopologyNode]
    edges: list[TopologyEdge]


def channel_source(instances: Sequence[Instance], channel: Channel) -> Instance | None:
    """The instance this channel replicates from: by server_id (works through proxies and NAT),
    else by the host and port the replica connects to."""
    if channel.source_server_id is not None:
        by_id = [i for i in instances if i.server_id == channel.source_server_id]
        if len(by_id) == 1:
            return by_id[0]
    address = (channel.source_host, channel.source_port)
    by_address = [i for i in instances if (i.host, i.port) == address]
    return by_address[0] if len(by_address) == 1 else None


def cluster_topology(session: Session, cluster_id: int, now: datetime) -> Topology:
    cluster = get_cluster(session, cluster_id)
    polled = latest_instance_samples(session, [i.id for i in cluster.instances])
    source = next((i for i in cluster.instances if i.role == "source"), None)
    nodes = [
        TopologyNode(
            i.id,
            i.name,
            i.role,
            i.region,
            i.flavor,
            i.version,
            polled[i.id].reachable if i.id in polled else None,
        )
        for i in cluster.instances
    ]
    edges = []
    for row in latest_channel_rows(session, [cluster_id]):
        s = row.sample
        upstream = channel_source(cluster.instances, row.channel)
        edges.append(
            TopologyEdge(
                channel_id=row.channel.id,
                channel=row.channel.name,
                source_id=upstream.id if upstream else (source.id if source else None),
                replica_id=row.instance.id,
                source_matched=upstream is not None,
                stale=is_stale(s.ts if s else None, cluster.poll_interval_s, now),
                verdict=verdict_label(s.verdict if s else row.channel.verdict),
                lag_s=s.lag_s if s else None,
                lag_source=lag_source_label(s.lag_source) if s else None,
                trx_behind=s.trx_behind if s else None,
                not_received=s.not_received if s else None,
                received_not_applied=s.received_not_applied if s else None,
            )
        )
    return Topology(cluster.id, nodes, edges)
