"""What ``/metrics`` exposes, read from the store: every polled channel's newest sample and
every polled instance's newest poll, parameters and failure, flattened into points.

The values are what the workers last stored; a point is never read from a monitored server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from lagscope.analysis.codes import LagSource, Verdict, io_state_from_code
from lagscope.collectors.snapshot import IoState
from lagscope.history.catching_up import CatchingUp, catching_up
from lagscope.history.cause_views import current_causes
from lagscope.history.status import is_stale, latest_channel_rows, latest_instance_samples
from lagscope.metrics_catalog import GAUGES
from lagscope.models import Cluster, Instance, ParamValue, Sample


@dataclass(frozen=True, slots=True)
class ChannelPoint:
    """One channel's latest sample, flattened for the exposition."""

    cluster: str
    server: str
    channel: str
    region: str
    ts: datetime
    verdict: Verdict
    lag_s: float | None = None
    lag_source: LagSource | None = None
    seconds_behind_source: int | None = None
    timeline_lag_s: float | None = None
    trx_behind: int | None = None
    not_received: int | None = None
    received_not_applied: int | None = None
    apply_rate: float | None = None
    io_running: bool | None = None
    sql_running: bool | None = None
    errant_trx: int | None = None
    # The newest poll's causes (Cause labels, strongest first): one series each.
    causes: tuple[str, ...] = ()
    catching_up: CatchingUp | None = None

    @property
    def labels(self) -> list[str]:
        return [self.cluster, self.server, self.channel, self.region]


@dataclass(frozen=True, slots=True)
class InstancePoint:
    cluster: str
    server: str
    region: str
    up: bool
    round_trip_s: float | None = None
    clock_offset_s: float | None = None
    last_polled_at: datetime | None = None
    # The newest recent poll's error kind when it failed (POLL_ERROR_KINDS, or "other").
    error_kind: str | None = None
    # The tracked parameters as last read, under the server's own names.
    params: Mapping[str, str | None] = field(default_factory=dict)

    @property
    def labels(self) -> list[str]:
        return [self.cluster, self.server, self.region]


def read_points(session: Session, now: datetime) -> tuple[list[ChannelPoint], list[InstancePoint]]:
    """The latest readings of enabled clusters' enabled instances (what is being polled)."""
    clusters = list(
        session.scalars(
            select(Cluster)
            .where(Cluster.enabled.is_(True))
            .options(selectinload(Cluster.instances))
            .order_by(Cluster.id)
        )
    )
    instances = [i for c in clusters for i in c.instances if i.enabled]
    polled = latest_instance_samples(session, [i.id for i in instances])
    channels = []
    for row in latest_channel_rows(session, [c.id for c in clusters]):
        if not row.instance.enabled or row.sample is None:
            continue
        causes = current_causes(row.channel.current_causes)
        point = _channel_point(
            row.cluster.name,
            row.instance,
            row.channel.name,
            row.sample,
            tuple(c.cause for c in causes),
        )
        channels.append(replace(point, catching_up=catching_up(causes)))
    params = _params(session, [i.id for i in instances])
    points = []
    for instance in instances:
        sample = polled.get(instance.id)
        fresh = sample is not None and not is_stale(
            sample.ts, instance.cluster.poll_interval_s, now
        )
        points.append(
            InstancePoint(
                cluster=instance.cluster.name,
                server=instance.name,
                region=instance.region,
                # Up: the newest poll reached it, and that poll is recent (a stopped worker
                # must not leave every server "up" forever).
                up=bool(fresh and sample is not None and sample.reachable),
                round_trip_s=sample.round_trip_s if sample else None,
                clock_offset_s=instance.clock_offset_s,
                last_polled_at=instance.last_polled_at,
                error_kind=(
                    _error_kind(instance.last_error_kind)
                    if fresh and sample is not None and not sample.reachable
                    else None
                ),
                params=params.get(instance.id, {}),
            )
        )
    return channels, points


def _params(session: Session, instance_ids: list[int]) -> dict[int, dict[str, str | None]]:
    found: dict[int, dict[str, str | None]] = {}
    if instance_ids:
        rows = session.execute(
            select(ParamValue.instance_id, ParamValue.name, ParamValue.value).where(
                ParamValue.instance_id.in_(instance_ids)
            )
        )
        for instance_id, name, value in rows:
            found.setdefault(instance_id, {})[name] = value
    return found


# The kinds a failed poll is recorded with (ingest/reader.py, ingest/login_backoff.py): a
# fixed list keeps the label's values bounded whatever the store holds.
POLL_ERROR_KINDS = (
    "ServerUnreachable",
    "UnexpectedAnswer",
    "AccessDenied",
    "LoginRefused",
    "LoginBackoff",
    "CredentialsUnreadable",
    "ClearTextAuthRefused",
    "Sha2AuthRefused",
    "TlsFailed",
    "TargetNotAllowed",
    "UnsupportedServer",
    "ReplicationNotConfigured",
    "QueryFailed",
    "PollFailed",
)


def _error_kind(kind: str | None) -> str:
    return kind if kind in POLL_ERROR_KINDS else "other"


def _channel_point(
    cluster: str, instance: Instance, channel: str, s: Sample, causes: tuple[str, ...] = ()
) -> ChannelPoint:
    io_state = io_state_from_code(s.io_state) if s.io_state is not None else None
    return ChannelPoint(
        cluster=cluster,
        server=instance.name,
        channel=channel,
        region=instance.region,
        ts=s.ts,
        verdict=Verdict(s.verdict),
        lag_source=LagSource(s.lag_source) if s.lag_source is not None else None,
        io_running=io_state is IoState.YES if io_state is not None else None,
        causes=causes,
        **{name: getattr(s, name) for name in _AS_STORED},
    )


# The gauges whose point value is the stored value itself (io_running is worked out).
_AS_STORED = tuple(m.name for m in GAUGES if m.gauge and m.gauge.attribute is None)
