"""Where each charted metric is kept: its column in ``samples`` or ``instance_samples`` at poll
resolution, and in the ``samples_1m`` / ``samples_1h`` rollups when it is rolled up.

Built from the metrics catalog, so the series service reads only what is stored, and a metric
whose rollups lack a statistic says so in the answer's note rather than inventing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy.orm import InstrumentedAttribute

from lagscope.analysis.buckets import Resolution
from lagscope.metrics_catalog import SERIES, StoredMetric
from lagscope.models import InstanceSample, Sample, SampleRollup1h, SampleRollup1m

Column = InstrumentedAttribute[Any]


@dataclass(frozen=True, slots=True)
class Source:
    """Where one metric is kept at one resolution: None for a statistic the table lacks."""

    resolution: Resolution
    key: Column  # channel_id or instance_id
    time: Column
    min: Column | None
    avg: Column
    max: Column | None
    last: Column | None
    weight: Column | None  # rollups: how many samples the row summarises


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    per: Literal["channel", "instance"]
    sources: tuple[Source, ...]  # finest first
    note: str | None = None


def _raw(name: str, model: type[Sample] | type[InstanceSample], key: Column) -> Source:
    column = getattr(model, name)
    return Source("raw", key, model.ts, column, column, column, column, None)


def _rolled(prefix: str, has: str) -> tuple[Source, ...]:
    """The 1m and 1h sources of a rolled-up metric; ``has``: which of min/max/last it keeps."""
    rollups: tuple[tuple[Resolution, type[SampleRollup1m] | type[SampleRollup1h]], ...] = (
        ("1m", SampleRollup1m),
        ("1h", SampleRollup1h),
    )
    sources = []
    for res, model in rollups:
        stats: dict[str, Column | None] = {
            name: getattr(model, f"{prefix}_{name}") if name in has else None
            for name in ("min", "max", "last")
        }
        avg = getattr(model, f"{prefix}_avg")
        sources.append(
            Source(res, model.channel_id, model.bucket, stats["min"], avg, stats["max"],
                   stats["last"], model.samples)
        )  # fmt: skip
    return tuple(sources)


def _channel(name: str, rollup: str | None = None, has: str = "min avg max last") -> Metric:
    raw = _raw(name, Sample, Sample.channel_id)
    if rollup is None:
        note = "kept at poll resolution only (no rollups): points only within raw retention"
        return Metric(name, "channel", (raw,), note)
    missing = "/".join(s for s in ("min", "max", "last") if s not in has)
    partial = f"rollups keep no {missing}: null in rolled-up buckets" if missing else None
    return Metric(name, "channel", (raw, *_rolled(rollup, has)), partial)


def _instance(name: str) -> Metric:
    note = "instance metrics are kept at poll resolution only: points only within raw retention"
    return Metric(name, "instance", (_raw(name, InstanceSample, InstanceSample.instance_id),), note)


def _metric(stored: StoredMetric) -> Metric:
    if stored.per == "instance":
        return _instance(stored.name)
    return _channel(stored.name, stored.rollup, stored.rollup_stats)


_METRICS = tuple(_metric(m) for m in SERIES)
METRICS: dict[str, Metric] = {m.name: m for m in _METRICS}
