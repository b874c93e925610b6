"""Rollups of raw channel samples into time buckets (1 minute, 1 hour): min/avg/max/last.

Samples are kept at poll resolution and rolled up at 1 minute and 1 hour (docs/architecture.md,
"Storage and time"); the
fields of :class:`Bucket` are the columns of ``samples_1m`` / ``samples_1h``. Averages are over
the samples where the metric was known (a NULL lag while a replica was unreachable is not 0);
``last`` is the newest known value. :func:`merge` re-buckets finer buckets into coarser ones
with sample-count weights. That equals rolling the raw samples directly whenever a metric was
known in all or none of each fine bucket's samples; when it was known in only part of a fine
bucket, the coarse average leans slightly towards that bucket, because per-metric counts are not
stored (min, max and last stay exact).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from lagscope.analysis.codes import Verdict

_MICROS_PER_S = 1_000_000
_N = TypeVar("_N", int, float)


@dataclass(frozen=True, slots=True)
class RawPoint:
    """The rollup-relevant part of one raw sample (``ts_us``: epoch microseconds, UTC)."""

    ts_us: int
    verdict: int
    lag_s: float | None
    trx_behind: int | None
    not_received: int | None
    received_not_applied: int | None
    apply_rate: float | None
    source_rate: float | None
    timeline_lag_s: float | None = None


@dataclass(frozen=True, slots=True)
class Bucket:
    """One time bucket of one channel; ``bucket_us`` is the bucket's start (epoch µs)."""

    bucket_us: int
    samples: int
    caught_up: int  # samples whose verdict was caught_up
    last_verdict: int
    lag_min: float | None
    lag_avg: float | None
    lag_max: float | None
    lag_last: float | None
    trx_behind_min: int | None
    trx_behind_avg: float | None
    trx_behind_max: int | None
    trx_behind_last: int | None
    not_received_avg: float | None
    not_received_max: int | None
    received_not_applied_avg: float | None
    received_not_applied_max: int | None
    apply_rate_avg: float | None
    source_rate_avg: float | None
    timeline_lag_avg: float | None = None
    timeline_lag_max: float | None = None


@dataclass(frozen=True, slots=True)
class _Summary(Generic[_N]):
    """One metric over one bucket; every statistic None when the metric was never known."""

    min: _N | None = None
    avg: float | None = None
    max: _N | None = None
    last: _N | None = None


def _avg_only(avg: float | None) -> _Summary[float]:
    # Not ``_Summary[float](avg=…)``: calling a subscripted generic sets ``__orig_class__`` on
    # the instance, which a frozen dataclass with slots refuses.
    return _Summary(avg=avg)


def _mean(values: Sequence[_N]) -> float:
    # Integers are summed exactly and divided once; floats with fsum so that the order of the
    # samples does not change the result (the direct and merged rollups must agree).
    if all(isinstance(v, int) for v in values):
        return sum(values) / len(values)
    return math.fsum(values) / len(values)


def _summarise(values: Sequence[_N | None]) -> _Summary[_N]:
    """Statistics over ``values`` in time order, skipping the unknown ones."""
    known = [v for v in values if v is not None]
    if not known:
        return _Summary()
    return _Summary(min(known), _mean(known), max(known), known[-1])


def _combine(parts: Sequence[tuple[int, _Summary[_N]]]) -> _Summary[_N]:
    """Merge ``(samples, summary)`` pairs in time order: averages weighted by sample count."""
    mins = [s.min for _, s in parts if s.min is not None]
    maxes = [s.max for _, s in parts if s.max is not None]
    lasts = [s.last for _, s in parts if s.last is not None]
    weighted = [(weight, s.avg) for weight, s in parts if s.avg is not None and weight > 0]
    total = sum(weight for weight, _ in weighted)
    avg = math.fsum(weight * a for weight, a in weighted) / total if total else None
    return _Summary(
        min(mins) if mins else None,
        avg,
        max(maxes) if maxes else None,
        lasts[-1] if lasts else None,
    )


def _width_us(bucket_s: int) -> int:
    if bucket_s <= 0:
        raise ValueError(f"bucket_s must be positive, got {bucket_s!r}")
    return bucket_s * _MICROS_PER_S


def _bucket(
    bucket_us: int,
    counts: tuple[int, int, int],
    metrics: tuple[_Summary[float], _Summary[int], _Summary[int], _Summary[int]],
    rates: tuple[_Summary[float], _Summary[float]],
    timeline: _Summary[float] | None = None,
) -> Bucket:
    """Assemble a Bucket: ``counts`` = (samples, caught_up, last_verdict)."""
    lag, trx, not_received, received_not_applied = metrics
    return Bucket(
        bucket_us=bucket_us,
        samples=counts[0],
        caught_up=counts[1],
        last_verdict=counts[2],
        lag_min=lag.min,
        lag_avg=lag.avg,
        lag_max=lag.max,
        lag_last=lag.last,
        trx_behind_min=trx.min,
        trx_behind_avg=trx.avg,
        trx_behind_max=trx.max,
        trx_behind_last=trx.last,
        not_received_avg=not_received.avg,
        not_received_max=not_received.max,
        received_not_applied_avg=received_not_applied.avg,
        received_not_applied_max=received_not_applied.max,
        apply_rate_avg=rates[0].avg,
        source_rate_avg=rates[1].avg,
        timeline_lag_avg=timeline.avg if timeline else None,
        timeline_lag_max=timeline.max if timeline else None,
    )


_T = TypeVar("_T")


def _group(items: Iterable[_T], key: Callable[[_T], int], width_us: int) -> dict[int, list[_T]]:
    """Items by bucket start, each bucket's items in time order (stable for equal times)."""
    groups: dict[int, list[_T]] = {}
    for item in sorted(items, key=key):
        groups.setdefault(key(item) // width_us * width_us, []).append(item)
    return groups


def _roll_points(start_us: int, points: Sequence[RawPoint]) -> Bucket:
    caught_up = sum(1 for p in points if p.verdict == Verdict.CAUGHT_UP)
    return _bucket(
        start_us,
        (len(points), caught_up, points[-1].verdict),
        (
            _summarise([p.lag_s for p in points]),
            _summarise([p.trx_behind for p in points]),
            _summarise([p.not_received for p in points]),
            _summarise([p.received_not_applied for p in points]),
        ),
        (_summarise([p.apply_rate for p in points]), _summarise([p.source_rate for p in points])),
        _summarise([p.timeline_lag_s for p in points]),
    )


def rollup(points: Iterable[RawPoint], bucket_s: int) -> list[Bucket]:
    """Raw samples → buckets of ``bucket_s`` seconds, aligned on the epoch, oldest first."""
    groups = _group(points, lambda p: p.ts_us, _width_us(bucket_s))
    return [_roll_points(start, groups[start]) for start in sorted(groups)]


def _merge_buckets(start_us: int, fine: Sequence[Bucket]) -> Bucket:
    weights = [b.samples for b in fine]

    def merged(summaries: Iterable[_Summary[_N]]) -> _Summary[_N]:
        return _combine(list(zip(weights, summaries, strict=True)))

    return _bucket(
        start_us,
        (sum(weights), sum(b.caught_up for b in fine), fine[-1].last_verdict),
        (
            merged(_Summary(b.lag_min, b.lag_avg, b.lag_max, b.lag_last) for b in fine),
            merged(
                _Summary(b.trx_behind_min, b.trx_behind_avg, b.trx_behind_max, b.trx_behind_last)
                for b in fine
            ),
            merged(_Summary(None, b.not_received_avg, b.not_received_max) for b in fine),
            merged(
                _Summary(None, b.received_not_applied_avg, b.received_not_applied_max) for b in fine
            ),
        ),
        (
            merged(_avg_only(b.apply_rate_avg) for b in fine),
            merged(_avg_only(b.source_rate_avg) for b in fine),
        ),
        merged(_Summary(None, b.timeline_lag_avg, b.timeline_lag_max) for b in fine),
    )


def merge(buckets: Iterable[Bucket], bucket_s: int) -> list[Bucket]:
    """Finer buckets → coarser ones of ``bucket_s`` seconds (e.g. 1-minute → 1-hour)."""
    groups = _group(buckets, lambda b: b.bucket_us, _width_us(bucket_s))
    return [_merge_buckets(start, groups[start]) for start in sorted(groups)]
