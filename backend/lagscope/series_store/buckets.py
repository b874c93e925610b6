"""Raw samples into a plan's buckets, with the figures the SQL bucket query gives for the same
rows (history/series_sql.py ``_bucket_query``): min, mean, max, the newest value, how many.

Pure. The store keeps a value as the integer ``round(value * scale)``; the sum for the mean is
taken over those integers, as the SQL sums the column, so both give the same float to the last
bit. Samples are (epoch ms, value) in time order; one repeated at the same millisecond (a
request sent again after a timeout the store had in fact taken) counts once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from lagscope.analysis.buckets import BucketPlan
from lagscope.history.series import Point


def bucketed(
    samples: Iterable[tuple[int, float]], scale: int, plan: BucketPlan, lo_us: int
) -> Iterator[tuple[Point, int]]:
    """(bucket, its newest sample's time in µs) in time order, over the samples in
    [lo_us, plan.hi_us)."""
    origin, width, hi = plan.origin_us, plan.width_us, plan.hi_us
    k: int | None = None
    low = high = total = n = last = 0
    newest = previous = -1
    for at_ms, value in samples:
        at = at_ms * 1000
        if at < lo_us or at >= hi or at == previous:
            continue
        previous = at
        stored = round(value * scale)
        here = (at - origin) // width
        if here != k:
            if k is not None:
                yield _point(origin + k * width, low, total, high, n, last, scale), newest
            k, low, high, total, n = here, stored, stored, 0, 0
        low, high = min(low, stored), max(high, stored)
        total += stored
        n += 1
        newest, last = at, stored
    if k is not None:
        yield _point(origin + k * width, low, total, high, n, last, scale), newest


def _point(start_us: int, low: int, total: int, high: int, n: int, last: int, scale: int) -> Point:
    return {
        "t": start_us // 1000,
        "min": low / scale,
        "avg": float(total) / scale / float(n),
        "max": high / scale,
        "last": last / scale,
        "n": n,
    }
