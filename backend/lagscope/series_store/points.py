"""A batch of ticks as raw-series samples: every series metric of the catalog (the ones the
explorer charts), per channel and per server, keyed by id.

Not the names of ``/metrics`` (remote_write/points.py gives those, for the user's own TSDB):
this store is read back by Lagscope by channel and instance id, which a rename does not change.
``lagscope_raw_<metric>{channel_id="12"}`` or ``{instance_id="3"}``, at the poll's time in
milliseconds (floored, so a sample stays in the millisecond bucket its row is in), with the
value the store keeps (rounded as its column rounds). A NULL is no sample, as the SQL bucket
query skips it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lagscope.alerts.tick_figures import as_stored
from lagscope.metrics_catalog import SERIES
from lagscope.models import InstanceSample, Sample
from lagscope.models.types import Scaled, to_micros
from lagscope.remote_write.points import Labels, NamedTick, Point

PREFIX = "lagscope_raw_"
CHANNEL_LABEL = "channel_id"
INSTANCE_LABEL = "instance_id"


def metric_name(metric: str) -> str:
    return PREFIX + metric


def _as_stored(table: Any, column: str) -> Callable[[Any], float]:
    """The value as its column gives it back: Scaled's rounding inlined (as_stored through the
    type's two calls cost more than the rest of the sample), anything else as as_stored does."""
    kind = table.c[column]
    if isinstance(kind.type, Scaled):
        scale = kind.type.scale
        return lambda value: round(value * scale) / scale
    return lambda value: float(as_stored(kind, value))


# (series name, column, the value as a sample), looked up once.
_CHANNEL = tuple(
    (metric_name(m.name), m.name, _as_stored(Sample.__table__, m.name))
    for m in SERIES
    if m.per == "channel"
)
_INSTANCE = tuple(
    (metric_name(m.name), m.name, _as_stored(InstanceSample.__table__, m.name))
    for m in SERIES
    if m.per == "instance"
)


def series_points(tick: NamedTick) -> Iterator[Point]:
    for channel_id, row in tick.samples.items():
        yield from _points(_CHANNEL, CHANNEL_LABEL, channel_id, row)
    for instance_id, row in tick.polled.items():
        yield from _points(_INSTANCE, INSTANCE_LABEL, instance_id, row)


def _points(
    metrics: tuple[tuple[str, str, Callable[[Any], float]], ...],
    label: str,
    key: int,
    row: Mapping[str, Any],
) -> Iterator[Point]:
    at_ms = to_micros(row["ts"]) // 1000
    for name, column, as_sample in metrics:
        value = row.get(column)
        if value is not None:
            yield _labels(name, label, key), at_ms, as_sample(value)


@functools.lru_cache(maxsize=1 << 19)
def _labels(name: str, label: str, key: int) -> Labels:
    return (("__name__", name), (label, str(key)))
