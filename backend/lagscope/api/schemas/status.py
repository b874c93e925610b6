"""Live views: a cluster's status and topology, the fleet's, and the SSE sample event (status
over a range of time is api/schemas/status_history.py).

Labels are the snake_case names of docs/lag.md (verdicts, lag sources, IO thread states);
seconds are floats, times ISO-8601 with offset except the stream's epoch milliseconds.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from lagscope.api.schemas.common import Schema
from lagscope.api.schemas.episodes import CauseRefOut, CurrentCauseOut

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
LoginState = Literal["ok", "access_denied", "credentials_unreadable"]


class EtaOut(Schema):
    """Time to catch up: ``seconds`` when the replica gains on the source (0 when caught up);
    otherwise ``catching_up`` is false and ``falling_behind_per_s`` says how fast it loses."""

    seconds: float | None
    catching_up: bool
    falling_behind_per_s: float | None
    low_s: float | None = Field(description="The band's low end (null: no band)")
    high_s: float | None = Field(description="The band's high end (null: no band)")
    never: bool = Field(
        description="Not catching up at the current rates: apply is no faster than arrival",
    )
    basis: Literal["rates", "transaction_progress"] | None = Field(
        description="What the figure rests on: the apply and arrival rates, or the progress of "
        "one large transaction being applied",
    )


class CatchingUpOut(Schema):
    """The channel drains a backlog after what made it ended, or after a tuning step."""

    since: datetime | None = Field(description="When this run of catching-up polls began")
    after: Literal["step", "cause_ended"] = Field(
        description="step: after a tuning step (step, step_instance, step_at); cause_ended: "
        "after the episode's main cause stopped being seen"
    )
    step: str | None = Field(description="The step's changes: 'sync_relay_log 1→0, …'")
    step_instance: str | None = Field(description="The server the step changed")
    step_at: datetime | None = Field(description="When the step's new values were first seen")
    main_cause: CauseRefOut | None = Field(
        description="The episode's main cause: what made the backlog (null: not identified)"
    )
    limit: CauseRefOut | None = Field(
        description="A cause still named while it drains: what limits the drain (null: none)"
    )
    drain_s_per_s: float | None = Field(
        description="Seconds of lag worked off per second (null: measured in transactions only)"
    )
    eta_s: float | None = Field(description="Seconds until caught up at this pace (null: unknown)")
    sentence: str = Field(description="The same in words")


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
    redo_log_enabled: bool | None = Field(
        default=None,
        description="false: the InnoDB redo log is disabled (a crash can lose or corrupt data); "
        "null: unknown, or the server has no such switch",
    )
    doublewrite: str | None = Field(
        default=None, description="innodb_doublewrite's current value (null: not read yet)"
    )
    login_state: LoginState | None = Field(
        description="null: not tried yet; access_denied: the server refused the login (wrong "
        "password, locked account), retried with back-off at next_attempt_at, and after 10 "
        "refusals in a row no more (next_attempt_at null) until the instance's password is "
        "edited, it is disabled and enabled, or POST /instances/{id}/retry-login; "
        "credentials_unreadable: the stored password decrypts with no secret key (see "
        "last_error), enter it again"
    )
    next_attempt_at: datetime | None = Field(
        description="With access_denied: when the login is tried next (no try before); "
        "null: not tried again until someone acts (see login_state)"
    )
    heartbeat_stopped_at: datetime | None = Field(
        default=None,
        description="The source only: the heartbeat writer's last beat, once its row on the "
        "source has stopped advancing (null: it writes, or no heartbeat); the heartbeat lag is "
        "then not used as the lag",
    )
    heartbeat_problem: str | None = Field(
        default=None,
        description="The same in words: 'heartbeat writer stopped since <time>: …' (null: none)",
    )


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
    causes: list[CurrentCauseOut] = Field(
        description="Why it is behind, strongest first (the newest poll's findings; [] when none)",
    )
    episode_id: int | None = Field(description="The lag episode in progress (null: none)")
    catching_up: CatchingUpOut | None = Field(
        default=None,
        description="Catching up: draining the backlog after its cause ended or after a step, "
        "with the cause that made it (null: not catching up)",
    )
    errant_trx: int | None = Field(
        default=None,
        description="Transactions executed on this replica that its source never wrote "
        "(errant GTIDs) at the newest poll; null = unknown",
    )
    errant_gtids: str | None = Field(
        default=None,
        description="Which: MySQL the GTID set; MariaDB the newest errant GTID per domain. "
        "'' = none, null = unknown",
    )
    errant_problem: str | None = Field(
        default=None,
        description="When there are errant transactions: what they are and what to do, in words",
    )


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


class FleetEdgeOut(Schema):
    channel_id: int
    source_id: int | None = Field(description="The instance it replicates from (null: none)")
    replica_id: int


class FleetClusterOut(Schema):
    """One cluster as the overview draws it: what ``/clusters/{id}/status`` says, with the
    edges of ``/clusters/{id}/topology`` (their lag is the channels')."""

    id: int
    name: str
    enabled: bool
    poll_interval_s: float
    stale_after_s: float
    instances: list[InstanceStatusOut]
    channels: list[ChannelStatusOut]
    edges: list[FleetEdgeOut]


class FleetStatusOut(Schema):
    """Every cluster's status in one answer: the overview of a fleet in one request."""

    generated_at: datetime
    clusters: list[FleetClusterOut] = Field(description="by cluster id")


class SampleEventOut(Schema):
    """The data of an SSE ``sample`` event (documented here; the stream is not JSON)."""

    channel_id: int
    ts: int = Field(description="Epoch milliseconds")
    lag_s: float | None
    lag_source: LagSourceLabel | None
    verdict: VerdictLabel | None
    not_received: int | None
    received_not_applied: int | None
