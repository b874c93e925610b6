"""A batch of ticks as remote-write samples: the figures each tick recorded, under the names
and labels ``/metrics`` gives them (history/prometheus.py), at the poll's own timestamp.

Only what a tick computed goes out, never a value read back from the store: per channel the
catalog's gauges (``lagscope_lag_seconds``, ``lagscope_trx_behind``…), ``lagscope_verdict``
and ``lagscope_lag_source`` (1 for the current one, 0 for the others, as in ``/metrics``); per
server ``lagscope_up``, ``lagscope_poll_round_trip_seconds``,
``lagscope_clock_offset_seconds`` and the parameters the poll read (``lagscope_parameter``,
``lagscope_parameter_info`` for text values). A value the tick did not have (a NULL) is no
sample, as ``/metrics`` leaves it out: a 0 would read as "caught up". Each value is the one the
store keeps (rounded as its column rounds), so both say the same.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lagscope.alerts.tick_figures import TickFigures, as_stored
from lagscope.analysis.codes import LagSource, Verdict, io_state_from_code
from lagscope.collectors.snapshot import IoState
from lagscope.history.prometheus import PARAMETER, PARAMETER_INFO, parameter_number
from lagscope.metrics_catalog import GAUGES
from lagscope.models import InstanceSample, Sample

Labels = tuple[tuple[str, str], ...]
# (labels with __name__, epoch ms, value)
Point = tuple[Labels, int, float]

# (gauge, samples column) of the catalog's per-channel gauges; io_state is exposed as
# lagscope_io_running, worked out below as /metrics does.
CHANNEL_GAUGE_COLUMNS = tuple((m.gauge.name, m.name) for m in GAUGES if m.gauge)
_SAMPLES = Sample.__table__
_INSTANCE_SAMPLES = InstanceSample.__table__


@dataclass(frozen=True, slots=True)
class NamedTick:
    """A tick's rows and the labels of their channels and servers, worked out where the cluster
    in memory is not being changed (the batch's own thread)."""

    channels: Mapping[int, Labels]
    instances: Mapping[int, Labels]
    samples: Mapping[int, Mapping[str, Any]]
    polled: Mapping[int, Mapping[str, Any]]
    params: Mapping[int, Mapping[str, str | None]]


def named_tick(tick: TickFigures) -> NamedTick:
    cluster = tick.cluster
    channels: dict[int, Labels] = {}
    instances: dict[int, Labels] = {}
    for instance in cluster.instances:
        instances[instance.id] = _labels(
            cluster=cluster.name, server=instance.name, region=instance.region
        )
        for channel in instance.channels:
            channels[channel.id] = _labels(
                cluster=cluster.name,
                server=instance.name,
                channel=channel.name,
                region=instance.region,
            )
    return NamedTick(channels, instances, tick.samples, tick.polled, tick.params)


def tick_points(tick: NamedTick) -> Iterator[Point]:
    for channel_id, row in tick.samples.items():
        labels = tick.channels.get(channel_id)
        if labels is not None:
            yield from _channel_points(labels, row)
    for instance_id, row in tick.polled.items():
        labels = tick.instances.get(instance_id)
        if labels is not None:
            yield from _instance_points(labels, row)
            params = tick.params.get(instance_id)
            if params:
                yield from _parameter_points(labels, _at_ms(row["ts"]), params)


def _labels(**values: str) -> Labels:
    # An empty label value is no label to Prometheus (and its receiver refuses some): the
    # default channel (named "") and a server without a region carry none.
    return tuple(sorted((k, v) for k, v in values.items() if v))


def _at_ms(ts: datetime) -> int:
    return round(ts.timestamp() * 1000)


@functools.lru_cache(maxsize=1 << 17)
def _named(name: str, labels: Labels) -> Labels:
    # "__name__" sorts before every lower-case label name.
    return (("__name__", name), *labels)


def _io_running(code: Any) -> float:
    return float(io_state_from_code(code) is IoState.YES)


def _as_stored(table: Any, column: str) -> Callable[[Any], float]:
    kind = table.c[column]
    return lambda value: float(as_stored(kind, value))


# (gauge, column, the value as a sample): built once, the columns looked up once.
_CHANNEL_GAUGES = tuple(
    (gauge, column, _io_running if column == "io_state" else _as_stored(_SAMPLES, column))
    for gauge, column in CHANNEL_GAUGE_COLUMNS
)
_INSTANCE_GAUGES = tuple(
    (gauge, column, _as_stored(_INSTANCE_SAMPLES, column))
    for gauge, column in (
        ("lagscope_poll_round_trip_seconds", "round_trip_s"),
        ("lagscope_clock_offset_seconds", "clock_offset_s"),
    )
)
_VERDICTS = tuple((int(v), v.label) for v in Verdict)
_LAG_SOURCES = tuple((int(s), s.label) for s in LagSource)


def _channel_points(labels: Labels, row: Mapping[str, Any]) -> Iterator[Point]:
    at = _at_ms(row["ts"])
    for gauge, column, as_sample in _CHANNEL_GAUGES:
        value = row.get(column)
        if value is not None:
            yield _named(gauge, labels), at, as_sample(value)
    verdict = row.get("verdict")
    if verdict is not None:
        for code, label in _VERDICTS:
            named = _labelled("lagscope_verdict", labels, "verdict", label)
            yield named, at, float(code == verdict)
    source = row.get("lag_source")
    for code, label in _LAG_SOURCES:
        yield _labelled("lagscope_lag_source", labels, "source", label), at, float(code == source)


@functools.lru_cache(maxsize=1 << 17)
def _labelled(name: str, labels: Labels, label: str, value: str) -> Labels:
    return _named(name, _with(labels, label, value))


@functools.lru_cache(maxsize=1 << 17)
def _with(labels: Labels, name: str, value: str) -> Labels:
    return tuple(sorted((*labels, (name, value))))


def _instance_points(labels: Labels, row: Mapping[str, Any]) -> Iterator[Point]:
    at = _at_ms(row["ts"])
    yield _named("lagscope_up", labels), at, float(bool(row["reachable"]))
    for gauge, column, as_sample in _INSTANCE_GAUGES:
        value = row.get(column)
        if value is not None:
            yield _named(gauge, labels), at, as_sample(value)


def _parameter_points(labels: Labels, at: int, params: Mapping[str, str | None]) -> Iterator[Point]:
    for name, value in params.items():
        number = parameter_number(value)
        if number is not None:
            yield _labelled(PARAMETER, labels, "parameter", name), at, number
        elif value is not None:
            yield _info(labels, name, value), at, 1.0


@functools.lru_cache(maxsize=1 << 16)
def _info(labels: Labels, name: str, value: str) -> Labels:
    return _named(PARAMETER_INFO, tuple(sorted((*labels, ("parameter", name), ("value", value)))))
