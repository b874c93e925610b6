"""Live views over the store: a cluster's status, its topology, the whole fleet's status at
once, and the feed of new samples.

Everything is read from what the workers recorded; nothing here talks to a monitored server.
The latest sample of each channel is found with ``ts = (SELECT max(ts) … WHERE channel_id =
channel.id)``: one query for all channels, each max a seek on the ``(channel_id, ts)`` key.
``Channel.last_sample_at`` is not used for that: the recorder keeps it at the last *reachable*
poll (it anchors the apply rate across a gap), so during an outage it lags the newest sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session, aliased, selectinload
from sqlalchemy.sql.selectable import ScalarSelect

from lagscope.analysis.codes import LagSource, Verdict, io_state_from_code
from lagscope.analysis.errant import errant_problem
from lagscope.analysis.eta import Eta, eta, eta_from_json
from lagscope.collectors.snapshot import IoState
from lagscope.history.catching_up import CatchingUp, catching_up
from lagscope.history.episodes import CurrentCause, current_causes
from lagscope.inventory.instances import get_cluster
from lagscope.inventory.server_logins import ACCESS_DENIED
from lagscope.metrics_catalog import STREAMED
from lagscope.models import Channel, Cluster, Instance, InstanceSample, ParamValue, Sample

# A reading older than this many poll intervals is stale: the worker or beat is not polling.
# Three, not one: a tick may expire under load and the next one still arrives in time.
STALE_POLLS = 3


@dataclass(frozen=True, slots=True)
class ChannelRow:
    """A current channel, its instance and cluster, and its newest sample (None before any)."""

    cluster: Cluster
    instance: Instance
    channel: Channel
    sample: Sample | None


def latest_channel_rows(session: Session, cluster_ids: Sequence[int]) -> list[ChannelRow]:
    """Every channel not gone, of the given clusters, with its newest sample: one query."""
    latest_ts = _newest_sample_ts()
    rows = session.execute(
        select(Cluster, Instance, Channel, Sample)
        .join(Instance, Instance.cluster_id == Cluster.id)
        .join(Channel, Channel.instance_id == Instance.id)
        .outerjoin(Sample, and_(Sample.channel_id == Channel.id, Sample.ts == latest_ts))
        .where(Cluster.id.in_(cluster_ids), Channel.gone_at.is_(None))
        .order_by(Cluster.id, Instance.id, Channel.name)
    )
    return [ChannelRow(*row) for row in rows]


def _newest_sample_ts() -> ScalarSelect[datetime]:
    """The newest sample time of the enclosing query's channel (a correlated subquery)."""
    newest = aliased(Sample)
    return (
        select(func.max(newest.ts))
        .where(newest.channel_id == Channel.id)
        .correlate(Channel)
        .scalar_subquery()
    )


def latest_samples(session: Session, channel_ids: Sequence[int]) -> dict[int, Sample]:
    """The newest sample of each channel (the alert evaluation has the channels already)."""
    newest = aliased(Sample)
    latest_ts = (
        select(func.max(newest.ts)).where(newest.channel_id == Sample.channel_id).scalar_subquery()
    )
    rows = session.scalars(
        select(Sample).where(Sample.channel_id.in_(channel_ids), Sample.ts == latest_ts)
    )
    return {row.channel_id: row for row in rows}


def latest_instance_samples(
    session: Session, instance_ids: Sequence[int]
) -> dict[int, InstanceSample]:
    """The newest per-instance reading (reachability, round trip) of each instance."""
    newest = aliased(InstanceSample)
    latest_ts = (
        select(func.max(newest.ts))
        .where(newest.instance_id == InstanceSample.instance_id)
        .scalar_subquery()
    )
    rows = session.scalars(
        select(InstanceSample).where(
            InstanceSample.instance_id.in_(instance_ids), InstanceSample.ts == latest_ts
        )
    )
    return {row.instance_id: row for row in rows}


def is_stale(at: datetime | None, poll_interval_s: float, now: datetime) -> bool:
    return at is None or now - at > timedelta(seconds=STALE_POLLS * poll_interval_s)


@dataclass(frozen=True, slots=True)
class InstanceState:
    id: int
    name: str
    role: str
    region: str
    enabled: bool
    flavor: str | None
    version: str | None
    reachable: bool | None  # None: never polled
    stale: bool
    last_polled_at: datetime | None
    last_ok_at: datetime | None
    last_error: str | None
    round_trip_s: float | None
    clock_offset_s: float | None
    clock_resolution_s: float | None
    # Durability shortcuts worth a warning: Innodb_redo_log_enabled (MySQL 8.0.21+; None where
    # the server has no such switch) and innodb_doublewrite's current value.
    redo_log_enabled: bool | None = None
    doublewrite: str | None = None
    login_state: str | None = None
    next_attempt_at: datetime | None = None
    # On the cluster's source only: the heartbeat writer has stopped (its last beat), in words.
    heartbeat_stopped_at: datetime | None = None
    heartbeat_problem: str | None = None


@dataclass(frozen=True, slots=True)
class ChannelState:
    id: int
    instance_id: int
    instance: str
    name: str
    sample_at: datetime | None
    stale: bool
    verdict: str | None
    lag_s: float | None
    lag_source: str | None
    seconds_behind_source: int | None
    heartbeat_lag_s: float | None
    applier_lag_s: float | None
    timeline_lag_s: float | None
    timeline_resolution_s: float | None
    io_state: str | None
    io_running: bool | None
    sql_running: bool | None
    # Not recorded per channel yet (the Channel model has no error columns): always None.
    last_io_error: str | None
    last_sql_error: str | None
    relay_log_space: int | None
    trx_behind: int | None
    not_received: int | None
    received_not_applied: int | None
    apply_rate: float | None
    source_rate: float | None
    eta: EtaBand | None
    disagreement: bool
    # Why it is behind: the newest poll's causes, strongest first, and the ongoing episode.
    causes: list[CurrentCause] = field(default_factory=list)
    episode_id: int | None = None
    # Draining a backlog after what made it ended (or a step): None when not catching up.
    catching_up: CatchingUp | None = None
    # GTIDs executed on the replica that its source never wrote: how many (newest sample), which
    # (newest poll) and, when there are some, what to do about them in words.
    errant_trx: int | None = None
    errant_gtids: str | None = None
    errant_problem: str | None = None


@dataclass(frozen=True, slots=True)
class EtaBand:
    """The ETA as served: ``seconds`` with a band (``low_s``–``high_s``), ``never`` when apply
    does not outrun arrival, and what the figure rests on (``basis``)."""

    seconds: float | None
    catching_up: bool
    falling_behind_per_s: float | None
    low_s: float | None = None
    high_s: float | None = None
    never: bool = False
    basis: str | None = None


def eta_band(found: Eta) -> EtaBand:
    """The ETA as served; ``basis`` only from the two names the API documents."""
    return EtaBand(
        seconds=found.seconds,
        catching_up=found.catching_up,
        falling_behind_per_s=found.falling_behind_per_s,
        low_s=found.low_s,
        high_s=found.high_s,
        never=found.never,
        basis=found.basis if found.basis in ("rates", "transaction_progress") else None,
    )


def _channel_eta(channel: Channel, s: Sample | None) -> EtaBand | None:
    """The ETA the newest poll worked out (with its band over recent intervals), or, for a
    channel polled before ETAs were stored, the plain one from the newest sample."""
    stored = eta_from_json(channel.eta)
    if stored is not None:
        return eta_band(stored)
    return eta_band(eta(s.trx_behind, s.apply_rate, s.source_rate)) if s else None


@dataclass(frozen=True, slots=True)
class ClusterStatus:
    id: int
    name: str
    poll_interval_s: float
    stale_after_s: float
    generated_at: datetime
    instances: list[InstanceState] = field(default_factory=list)
    channels: list[ChannelState] = field(default_factory=list)


def cluster_status(session: Session, cluster_id: int, now: datetime) -> ClusterStatus:
    cluster = get_cluster(session, cluster_id)
    interval = cluster.poll_interval_s
    polled = latest_instance_samples(session, [i.id for i in cluster.instances])
    doublewrite = current_param(session, [i.id for i in cluster.instances], "innodb_doublewrite")
    return ClusterStatus(
        id=cluster.id,
        name=cluster.name,
        poll_interval_s=interval,
        stale_after_s=STALE_POLLS * interval,
        generated_at=now,
        instances=[
            _instance_state(
                i,
                polled.get(i.id),
                interval,
                now,
                doublewrite.get(i.id),
                cluster.heartbeat_stopped_at if i.role == "source" else None,
            )
            for i in cluster.instances
        ],
        channels=[
            _channel_state(row, interval, now) for row in latest_channel_rows(session, [cluster_id])
        ],
    )


def current_param(
    session: Session, instance_ids: Sequence[int], name: str
) -> dict[int, str | None]:
    """One tracked parameter's current value per instance (instances never read: absent)."""
    rows = session.execute(
        select(ParamValue.instance_id, ParamValue.value).where(
            ParamValue.instance_id.in_(instance_ids), ParamValue.name == name
        )
    )
    return {instance_id: value for instance_id, value in rows}


def _instance_state(
    instance: Instance,
    polled: InstanceSample | None,
    interval_s: float,
    now: datetime,
    doublewrite: str | None = None,
    heartbeat_stopped_at: datetime | None = None,
) -> InstanceState:
    return InstanceState(
        id=instance.id,
        name=instance.name,
        role=instance.role,
        region=instance.region,
        enabled=instance.enabled,
        flavor=instance.flavor,
        version=instance.version,
        reachable=polled.reachable if polled else None,
        stale=is_stale(instance.last_polled_at, interval_s, now),
        last_polled_at=instance.last_polled_at,
        last_ok_at=instance.last_ok_at,
        last_error=instance.last_error,
        round_trip_s=polled.round_trip_s if polled else None,
        clock_offset_s=instance.clock_offset_s,
        clock_resolution_s=instance.clock_resolution_s,
        redo_log_enabled=polled.redo_log_enabled if polled else None,
        doublewrite=doublewrite,
        login_state=instance.login_state,
        next_attempt_at=instance.next_attempt_at if instance.login_state == ACCESS_DENIED else None,
        heartbeat_stopped_at=heartbeat_stopped_at,
        heartbeat_problem=heartbeat_problem(heartbeat_stopped_at),
    )


def heartbeat_problem(stopped_at: datetime | None) -> str | None:
    """The reason, in words, that the heartbeat lag is not shown as the lag."""
    if stopped_at is None:
        return None
    since = stopped_at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return (
        f"heartbeat writer stopped since {since}: its row on the source no longer advances, "
        "so the heartbeat lag is ignored"
    )


def _channel_state(row: ChannelRow, interval_s: float, now: datetime) -> ChannelState:
    s, channel = row.sample, row.channel
    io_state = io_state_from_code(s.io_state) if s and s.io_state is not None else None
    verdict = s.verdict if s else channel.verdict
    causes = current_causes(channel.current_causes)
    return ChannelState(
        id=channel.id,
        instance_id=row.instance.id,
        instance=row.instance.name,
        name=channel.name,
        sample_at=s.ts if s else None,
        stale=is_stale(s.ts if s else None, interval_s, now),
        verdict=verdict_label(verdict),
        lag_source=lag_source_label(s.lag_source) if s else None,
        io_state=io_state.value if io_state else None,
        io_running=io_state is IoState.YES if io_state else None,
        last_io_error=channel.last_io_error,
        last_sql_error=channel.last_sql_error,
        eta=_channel_eta(channel, s),
        causes=causes,
        episode_id=channel.episode_id,
        catching_up=catching_up(causes),
        errant_gtids=channel.errant_gtids,
        errant_problem=errant_problem(
            row.instance.name,
            row.instance.flavor,
            (s.errant_trx if s else None) or 0,
            channel.errant_gtids or "",
        ),
        **_streamed(s),
    )


# The channel values the live status shows as stored, from the metric catalog.
_STREAMED = tuple(m.name for m in STREAMED if m.per == "channel")


def _streamed(s: Sample | None) -> dict[str, Any]:
    values = {name: getattr(s, name) if s else None for name in _STREAMED}
    values["disagreement"] = bool(values["disagreement"])  # no sample: no disagreement
    return values


def verdict_label(code: int | None) -> str | None:
    return Verdict(code).label if code is not None else None


def lag_source_label(code: int | None) -> str | None:
    return LagSource(code).label if code is not None else None


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


@dataclass(frozen=True, slots=True)
class FeedSample:
    """One new sample for a live chart (the SSE ``sample`` event)."""

    channel_id: int
    ts: datetime
    lag_s: float | None
    lag_source: str | None
    verdict: str | None
    not_received: int | None
    received_not_applied: int | None


# A tick's rows carry its read time but become visible at commit, up to a poll deadline later,
# and two workers may commit neighbouring ticks out of order: each poll looks back this far and
# skips what it already sent, so a late commit is still delivered, once.
FEED_LOOKBACK = timedelta(seconds=5)
# New rows per poll; a resume after a long gap is caught up over a few polls, not one huge read.
FEED_BATCH = 2000


@dataclass(slots=True)
class SampleFeed:
    """The samples of a cluster not yet sent, oldest first; ``cursor`` is the newest sent.

    Everything at or before ``floor`` counts as sent: at start, what the client already has
    (its ``Last-Event-ID``, or the newest stored sample), later the end of the look-back.
    ``more`` says the last poll stopped at :data:`FEED_BATCH` with newer rows waiting.
    """

    cluster_id: int
    floor: datetime
    cursor: datetime
    sent: set[tuple[int, datetime]] = field(default_factory=set)
    more: bool = False

    def poll(self, session: Session) -> list[FeedSample]:
        channel_ids = (
            select(Channel.id)
            .join(Instance, Instance.id == Channel.instance_id)
            .where(Instance.cluster_id == self.cluster_id)
        )
        in_cluster = Sample.channel_id.in_(channel_ids)
        since = max(self.floor, self.cursor - FEED_LOOKBACK)
        # Two reads: the look-back window is re-read whole (it is small and mostly sent), and
        # only the rows past the cursor are limited, so a busy window cannot stall the feed.
        late = []
        if since < self.cursor:
            window = (Sample.ts > since, Sample.ts <= self.cursor)
            late = [
                r
                for r in session.scalars(select(Sample).where(in_cluster, *window))
                if (r.channel_id, r.ts) not in self.sent
            ]
        ahead = session.scalars(
            select(Sample)
            .where(in_cluster, Sample.ts > self.cursor)
            .order_by(Sample.ts, Sample.channel_id)
            .limit(FEED_BATCH)
        ).all()
        self.more = len(ahead) == FEED_BATCH
        new = sorted([*late, *ahead], key=lambda r: (r.ts, r.channel_id))
        for row in new:
            self.sent.add((row.channel_id, row.ts))
            self.cursor = max(self.cursor, row.ts)
        self.floor = max(self.floor, self.cursor - FEED_LOOKBACK)
        self.sent = {key for key in self.sent if key[1] > self.floor}
        return [_feed_sample(r) for r in new]


def _feed_sample(r: Sample) -> FeedSample:
    return FeedSample(
        r.channel_id,
        r.ts,
        r.lag_s,
        lag_source_label(r.lag_source),
        verdict_label(r.verdict),
        r.not_received,
        r.received_not_applied,
    )


def open_feed(session: Session, cluster_id: int, after: datetime | None) -> SampleFeed:
    """A feed from ``after`` (a resumed stream), else from the newest sample stored now."""
    get_cluster(session, cluster_id)
    if after is None:
        # The max of per-channel maxima: each is a key seek, where one max over the cluster's
        # samples would read every stored row of its channels.
        after = session.scalar(
            select(func.max(_newest_sample_ts()))
            .select_from(Channel)
            .join(Instance, Instance.id == Channel.instance_id)
            .where(Instance.cluster_id == cluster_id)
        )
    start = after or datetime.fromtimestamp(0, UTC)
    return SampleFeed(cluster_id, floor=start, cursor=start)
