"""A batch of ticks as the raw-series store's lines: every series metric of the catalog (the
ones the explorer charts), per channel and per server, keyed by id.

Not the names of ``/metrics`` (remote_write/points.py gives those, for the user's own TSDB):
this store is read back by Lagscope by channel and instance id, which a rename does not change.
One InfluxDB line protocol line per channel-poll and per server-poll,
``lagscope_raw,channel_id=12 lag_s=3.25,trx_behind=80.0 1796514718066``, which VictoriaMetrics
keeps as the series ``lagscope_raw_lag_s{channel_id="12"}``… at the poll's time in
milliseconds (floored, so a sample stays in the millisecond bucket its row is in), with the
value the store keeps (rounded as its column rounds). A NULL is no field, as the SQL bucket
query skips it. A channel's line also carries its ``verdict`` and ``ts_micros``, the poll's
microseconds within its millisecond, so that the journal's windows and the comparisons read
back the polls the SQL gives, to the microsecond (victoria.py ``rows``).
One line carries a poll's ~20 values: a remote-write sample each cost the
owner three times the CPU (bench/series_ingest.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lagscope.alerts.tick_figures import as_stored
from lagscope.metrics_catalog import SERIES
from lagscope.models import InstanceSample, Sample
from lagscope.models.types import Scaled, to_micros
from lagscope.remote_write.points import NamedTick

MEASUREMENT = "lagscope_raw"
CHANNEL_LABEL = "channel_id"
INSTANCE_LABEL = "instance_id"
# VictoriaMetrics names a field's series <measurement>_<field>.
HEADERS = {"Content-Type": "text/plain; charset=utf-8"}


def metric_name(metric: str) -> str:
    return f"{MEASUREMENT}_{metric}"


def _as_stored(table: Any, column: str) -> Callable[[Any], float]:
    """The value as its column gives it back: Scaled's rounding inlined (as_stored through the
    type's two calls cost more than the rest of the line), anything else as as_stored does."""
    kind = table.c[column]
    if isinstance(kind.type, Scaled):
        scale = kind.type.scale
        return lambda value: round(value * scale) / scale
    return lambda value: float(as_stored(kind, value))


# The journal's windows read a poll's verdict too, and its time to the microsecond: the store
# keeps milliseconds, so a line carries the microseconds within its millisecond as a field.
VERDICT = "verdict"
MICROS = "ts_micros"
# (column, the value as stored), looked up once.
_CHANNEL = (
    *((m.name, _as_stored(Sample.__table__, m.name)) for m in SERIES if m.per == "channel"),
    (VERDICT, float),
)
_INSTANCE = tuple(
    (m.name, _as_stored(InstanceSample.__table__, m.name)) for m in SERIES if m.per == "instance"
)


_CHANNEL_HEAD = f"{MEASUREMENT},{CHANNEL_LABEL}="


def series_lines(tick: NamedTick) -> Iterator[str]:
    for channel_id, row in tick.samples.items():
        line = _line(_CHANNEL, f"{_CHANNEL_HEAD}{channel_id:d} ", row, micros=True)
        if line:
            yield line
    for instance_id, row in tick.polled.items():
        line = _line(_INSTANCE, f"{MEASUREMENT},{INSTANCE_LABEL}={instance_id:d} ", row, False)
        if line:
            yield line


def _line(
    metrics: tuple[tuple[str, Callable[[Any], float]], ...],
    head: str,
    row: Mapping[str, Any],
    micros: bool,
) -> str | None:
    fields = ",".join(
        f"{column}={as_sample(value)!r}"
        for column, as_sample in metrics
        if (value := row.get(column)) is not None
    )
    if not fields:
        return None  # a line needs a field: a poll with no figure at all makes none
    at_ms, within = divmod(to_micros(row["ts"]), 1000)
    if micros:
        fields += f",{MICROS}={within}"
    return f"{head}{fields} {at_ms}"


def encode(lines: list[str]) -> bytes:
    """A request's body: the lines, one per line."""
    return ("\n".join(lines) + "\n").encode()
