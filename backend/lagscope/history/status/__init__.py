"""Live views over the store: a cluster's status, its topology, the whole fleet's status at
once, and the feed of new samples.

Everything is read from what the workers recorded; nothing here talks to a monitored server.

One module per view (``cluster``, ``topology``, ``fleet``, ``feed``) over the newest readings
(``latest``); every name is re-exported here, as the API, the alerts and the tests use them.
"""

from __future__ import annotations

from lagscope.history.status.cluster import (
    ChannelState,
    ClusterStatus,
    EtaBand,
    InstanceState,
    cluster_status,
    current_param,
    eta_band,
    heartbeat_problem,
    lag_source_label,
    verdict_label,
)
from lagscope.history.status.feed import (
    FEED_BATCH,
    FEED_LOOKBACK,
    FeedSample,
    SampleFeed,
    open_feed,
)
from lagscope.history.status.fleet import FleetCluster, FleetEdge, fleet_status
from lagscope.history.status.latest import (
    STALE_POLLS,
    ChannelRow,
    is_stale,
    latest_channel_rows,
    latest_instance_samples,
    latest_samples,
)
from lagscope.history.status.topology import (
    Topology,
    TopologyEdge,
    TopologyNode,
    channel_source,
    cluster_topology,
)

__all__ = [
    "FEED_BATCH",
    "FEED_LOOKBACK",
    "STALE_POLLS",
    "ChannelRow",
    "ChannelState",
    "ClusterStatus",
    "EtaBand",
    "FeedSample",
    "FleetCluster",
    "FleetEdge",
    "InstanceState",
    "SampleFeed",
    "Topology",
    "TopologyEdge",
    "TopologyNode",
    "channel_source",
    "cluster_status",
    "cluster_topology",
    "current_param",
    "eta_band",
    "fleet_status",
    "heartbeat_problem",
    "is_stale",
    "lag_source_label",
    "latest_channel_rows",
    "latest_instance_samples",
    "latest_samples",
    "open_feed",
    "verdict_label",
]
