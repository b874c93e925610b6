"""The Prometheus exposition of ``/metrics``: the latest reading of every monitored channel and
instance, as gauges.

Rendered with prometheus_client's own exposition (a custom collector on a fresh registry per
scrape), so label values with quotes, backslashes or newlines are escaped as the format says.
The values are what the workers last stored; this module never talks to a monitored server.
A value the server did not report (``seconds_behind_source`` NULL, no GTID counts) is left out
rather than exposed as 0: a 0 would read as "caught up".
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from lagscope.analysis.causes.model import Cause
from lagscope.analysis.codes import LagSource, Verdict, io_state_from_code
from lagscope.collectors.snapshot import IoState
from lagscope.history.catching_up import CatchingUp, catching_up
from lagscope.history.episodes import current_causes
from lagscope.history.status import is_stale, latest_channel_rows, latest_instance_samples
from lagscope.metrics_catalog import GAUGES
from lagscope.models import Cluster, Instance, ParamValue, Sample

# "server", not "instance": Prometheus owns the `instance` label (the scrape target) and would
# rename ours to `exported_instance`.
CHANNEL_LABELS = ("cluster", "server", "channel", "region")
INSTANCE_LABELS = ("cluster", "server", "region")


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


def parameter_number(value: str | None) -> float | None:
    """A parameter's value as a gauge: a number as it is, ON/OFF as 1/0; None for text
    (``LOGICAL_CLOCK``, ``optimistic``), which goes to ``lagscope_parameter_info``."""
    if value is None:
        return None
    flag = _FLAGS.get(value.upper())
    if flag is not None:
        return flag
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


_FLAGS = {"ON": 1.0, "OFF": 0.0}
PARAMETER = "lagscope_parameter"
PARAMETER_HELP = (
    "A tracked server parameter's value as last read (ON/OFF as 1/0), under the server's own "
    "name in the parameter label."
)
PARAMETER_INFO = "lagscope_parameter_info"
PARAMETER_INFO_HELP = (
    "1 for a tracked parameter whose value is text (LOGICAL_CLOCK, optimistic, ROW …), the "
    "value in the value label."
)


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


# (name, help, attribute): per-channel gauges from the metric catalog; None is omitted.
_CHANNEL_GAUGES = tuple(
    (m.gauge.name, m.gauge.help, m.gauge.attribute or m.name) for m in GAUGES if m.gauge
)
# The gauges whose point value is the stored value itself (io_running is worked out).
_AS_STORED = tuple(m.name for m in GAUGES if m.gauge and m.gauge.attribute is None)


_CAUSE_LABELS = frozenset(c.label for c in Cause)


class LagscopeCollector(Collector):
    """Gauges over fixed points; one instance per scrape."""

    def __init__(self, channels: Sequence[ChannelPoint], instances: Sequence[InstancePoint]):
        self._channels = channels
        self._instances = instances

    def collect(self) -> Iterator[Metric]:
        yield from self._channel_families()
        yield from self._instance_families()

    def _channel_families(self) -> Iterator[Metric]:
        for name, help_text, attribute in _CHANNEL_GAUGES:
            family = GaugeMetricFamily(name, help_text, labels=CHANNEL_LABELS)
            for point in self._channels:
                value = getattr(point, attribute)
                if value is not None:
                    family.add_metric(point.labels, float(value))
            yield family
        sampled = GaugeMetricFamily(
            "lagscope_last_sample_timestamp_seconds",
            "When the newest stored sample of the channel was read (epoch s).",
            labels=CHANNEL_LABELS,
        )
        verdicts = GaugeMetricFamily(
            "lagscope_verdict",
            "1 for the channel's current verdict, 0 for the others.",
            labels=(*CHANNEL_LABELS, "verdict"),
        )
        sources = GaugeMetricFamily(
            "lagscope_lag_source",
            "1 for the measurement lagscope_lag_seconds comes from, 0 for the others.",
            labels=(*CHANNEL_LABELS, "source"),
        )
        causes = GaugeMetricFamily(
            "lagscope_channel_cause",
            "1 per cause the channel's newest poll names (why it is behind); no series when "
            f"none. cause is one of a fixed list: {', '.join(c.label for c in Cause)}.",
            labels=(*CHANNEL_LABELS, "cause"),
        )
        catching = GaugeMetricFamily(
            "lagscope_catching_up",
            "1 while the channel drains a backlog, or only keeps pace with the source, after what "
            'made it ended or after a tuning step (lagscope_channel_cause{cause="catching_up"}), '
            "0 otherwise.",
            labels=CHANNEL_LABELS,
        )
        drain = GaugeMetricFamily(
            "lagscope_catching_up_drain_seconds_per_second",
            "While catching up: seconds of lag worked off per second (no series otherwise, or "
            "when the drain is measured in transactions only).",
            labels=CHANNEL_LABELS,
        )
        eta = GaugeMetricFamily(
            "lagscope_catching_up_eta_seconds",
            "While catching up: seconds until caught up at this pace (no series when unknown).",
            labels=CHANNEL_LABELS,
        )
        for point in self._channels:
            sampled.add_metric(point.labels, point.ts.timestamp())
            state = point.catching_up
            catching.add_metric(point.labels, float(state is not None))
            if state is not None and state.drain_s_per_s is not None:
                drain.add_metric(point.labels, state.drain_s_per_s)
            if state is not None and state.eta_s is not None:
                eta.add_metric(point.labels, state.eta_s)
            # Only the fixed labels: a stored value this version does not know is not exposed,
            # so the label set stays bounded whatever the store holds.
            for cause in dict.fromkeys(c for c in point.causes if c in _CAUSE_LABELS):
                causes.add_metric([*point.labels, cause], 1.0)
            for verdict in Verdict:
                verdicts.add_metric([*point.labels, verdict.label], float(verdict is point.verdict))
            for source in LagSource:
                sources.add_metric([*point.labels, source.label], float(source is point.lag_source))
        yield from (sampled, verdicts, sources, causes, catching, drain, eta)

    def _instance_families(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "lagscope_up",
            "1 when the newest recent poll reached the server.",
            labels=INSTANCE_LABELS,
        )
        round_trip = GaugeMetricFamily(
            "lagscope_poll_round_trip_seconds",
            "Round trip of the newest successful poll's first query.",
            labels=INSTANCE_LABELS,
        )
        offset = GaugeMetricFamily(
            "lagscope_clock_offset_seconds",
            "Server clock minus poller clock, as last measured.",
            labels=INSTANCE_LABELS,
        )
        polled = GaugeMetricFamily(
            "lagscope_last_poll_timestamp_seconds",
            "When the server was last polled, successfully or not (epoch s).",
            labels=INSTANCE_LABELS,
        )
        failed = GaugeMetricFamily(
            "lagscope_poll_error",
            "1 when the newest recent poll failed, labelled with the kind of failure "
            f"(one of {', '.join(POLL_ERROR_KINDS)}, other); no series otherwise.",
            labels=(*INSTANCE_LABELS, "kind"),
        )
        parameter = GaugeMetricFamily(
            PARAMETER, PARAMETER_HELP, labels=(*INSTANCE_LABELS, "parameter")
        )
        parameter_info = GaugeMetricFamily(
            PARAMETER_INFO, PARAMETER_INFO_HELP, labels=(*INSTANCE_LABELS, "parameter", "value")
        )
        for point in self._instances:
            up.add_metric(point.labels, float(point.up))
            for name, value in sorted(point.params.items()):
                number = parameter_number(value)
                if number is not None:
                    parameter.add_metric([*point.labels, name], number)
                elif value is not None:
                    parameter_info.add_metric([*point.labels, name, value], 1.0)
            if point.round_trip_s is not None:
                round_trip.add_metric(point.labels, point.round_trip_s)
            if point.clock_offset_s is not None:
                offset.add_metric(point.labels, point.clock_offset_s)
            if point.last_polled_at is not None:
                polled.add_metric(point.labels, point.last_polled_at.timestamp())
            if point.error_kind is not None:
                failed.add_metric([*point.labels, point.error_kind], 1.0)
        yield from (up, round_trip, offset, polled, failed, parameter, parameter_info)


def exposition(channels: Sequence[ChannelPoint], instances: Sequence[InstancePoint]) -> bytes:
    """Text exposition format 0.0.4 of the given points."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LagscopeCollector(channels, instances))
    return generate_latest(registry)


def scrape(session: Session, now: datetime) -> bytes:
    return exposition(*read_points(session, now))
