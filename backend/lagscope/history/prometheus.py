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
from collections.abc import Iterator, Sequence
from datetime import datetime

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy.orm import Session

from lagscope.analysis.causes.model import Cause
from lagscope.analysis.codes import LagSource, Verdict
from lagscope.history.prometheus_points import POLL_ERROR_KINDS
from lagscope.history.prometheus_points import ChannelPoint as ChannelPoint
from lagscope.history.prometheus_points import InstancePoint as InstancePoint
from lagscope.history.prometheus_points import read_points as read_points
from lagscope.metrics_catalog import GAUGES

# "server", not "instance": Prometheus owns the `instance` label (the scrape target) and would
# rename ours to `exported_instance`.
CHANNEL_LABELS = ("cluster", "server", "channel", "region")
INSTANCE_LABELS = ("cluster", "server", "region")


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


# (name, help, attribute): per-channel gauges from the metric catalog; None is omitted.
_CHANNEL_GAUGES = tuple(
    (m.gauge.name, m.gauge.help, m.gauge.attribute or m.name) for m in GAUGES if m.gauge
)

_CAUSE_LABELS = frozenset(c.label for c in Cause)


def _channel_state_families() -> tuple[GaugeMetricFamily, ...]:
    """The per-channel families besides the catalog's gauges, empty, in the order they are
    exposed: the sample's time, the verdict, the lag's source, the causes, catching up."""
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
    return sampled, verdicts, sources, causes, catching, drain, eta


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
        sampled, verdicts, sources, causes, catching, drain, eta = _channel_state_families()
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
