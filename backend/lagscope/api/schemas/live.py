"""Live views: a cluster's status and topology, and the SSE sample event.

Labels are the snake_case names of DESIGN.md §4 (verdicts, lag sources, IO thread states);
seconds are floats, times ISO-8601 with offset except the stream's epoch milliseconds.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from lagscope.api.schemas.common import Schema

VerdictLabel = Literal[
    "caught_up",
    "receive_bound",
    "apply_bound",
    "delayed_by_design",
    "stopped",
    "broken",
    "unreachable",
]
LagSourceLabel = Literal["heartbeat", "applier", "source_timeline", "seconds_behind_source"]
IoStateLabel = Literal["yes", "connecting", "preparing", "no"]
Role = Literal["source", "replica"]


class EtaOut(Schema):
    """Time to catch up: ``seconds`` when the replica gains on the source (0 when caught up);
    otherwise ``catching_up`` is false and ``falling_behind_per_s`` says how fast it loses."""

    seconds: float | None
    catching_up: bool
    falling_behind_per_s: float | None


class InstanceStatusOut(Schema):
    id: int
    name: str
    role: Role
    region: str
    enabled: bool
    flavor: str | None
    version: str | None
    reachable: bool | None = Field(description="The newest poll reached it; null: never polled")
    stale: bool = Field(description="Not polled within 3 poll intervals")
    last_polled_at: datetime | None
    last_ok_at: datetime | None
    last_error: str | None
    round_trip_s: float | None
    clock_offset_s: float | None = Field(description="Server clock minus poller clock")
    clock_resolution_s: float | None = Field(description="The true offset is within ± this")


class ChannelStatusOut(Schema):
    id: int
    instance_id: int
    instance: str
    name: str = Field(description="Channel / connection name; '' is the default channel")
    sample_at: datetime | None = Field(description="When the newest sample was read")
    stale: bool = Field(description="The newest sample is older than 3 poll intervals")
    verdict: VerdictLabel | None
    lag_s: float | None = Field(description="Best available lag; see lag_source")
    lag_source: LagSourceLabel | None
    seconds_behind_source: int | None = Field(description="The server's own figure; null = NULL")
    heartbeat_lag_s: float | None
    applier_lag_s: float | None
    timeline_lag_s: float | None = Field(
        description="Poll time minus when the source first reached the replica's applied "
        "progress (no heartbeat needed); null = unknown (e.g. older than the source history kept)"
    )
    timeline_resolution_s: float | None = Field(
        description="Width of the two source polls bracketing timeline_lag_s: its uncertainty"
    )
    io_state: IoStateLabel | None
    io_running: bool | None
    sql_running: bool | None
    last_io_error: str | None = Field(description="Not recorded per channel yet: null")
    last_sql_error: str | None = Field(description="Not recorded per channel yet: null")
    relay_log_space: int | None
    trx_behind: int | None = Field(description="= not_received + received_not_applied")
    not_received: int | None
    received_not_applied: int | None
    apply_rate: float | None = Field(description="Transactions applied per second")
    source_rate: float | None = Field(description="Transactions per second on the source")
    eta: EtaOut | None
    disagreement: bool


class ClusterStatusOut(Schema):
    id: int
    name: str
    poll_interval_s: float
    stale_after_s: float
    generated_at: datetime
    instances: list[InstanceStatusOut]
    channels: list[ChannelStatusOut]


class TopologyNodeOut(Schema):
    id: int
    name: str
    role: Role
    region: str
    flavor: str | None
    version: str | None
    reachable: bool | None


class TopologyEdgeOut(Schema):
    channel_id: int
    channel: str
    source_id: int | None = Field(description="null when the cluster has no source instance")
    replica_id: int
    source_matched: bool = Field(
        description="false: the edge assumes the cluster's source (the channel's source "
        "address did not name an instance)"
    )
    stale: bool
    verdict: VerdictLabel | None
    lag_s: float | None
    lag_source: LagSourceLabel | None
    trx_behind: int | None
    not_received: int | None
    received_not_applied: int | None


class TopologyOut(Schema):
    cluster_id: int
    nodes: list[TopologyNodeOut]
    edges: list[TopologyEdgeOut]


class SampleEventOut(Schema):
    """The data of an SSE ``sample`` event (documented here; the stream is not JSON)."""

    channel_id: int
    ts: int = Field(description="Epoch milliseconds")
    lag_s: float | None
    lag_source: LagSourceLabel | None
    verdict: VerdictLabel | None
    not_received: int | None
    received_not_applied: int | None
