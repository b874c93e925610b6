"""One bucket of a chart's series, and the merging of buckets read from two tables.

A bucket read partly from a rollup and partly from the finer table's newer tail is one bucket
in the answer: its figures are combined here, weighted by how many samples each side summarised.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypedDict


class Point(TypedDict):
    """One bucket as the API gives it: a plain dict of numbers, which the garbage collector
    does not track. Thousands of tracked objects per answer (rows, named tuples) survived into
    its oldest generation and set off a full collection of the whole heap every third 30-day
    query: 45–65 ms each on this box, the whole gap between p50 and p95."""

    t: int  # the bucket's start, epoch milliseconds
    min: float | None
    avg: float | None
    max: float | None
    last: float | None  # the newest value in the bucket
    n: int  # samples summarised (for rollups, those of rows where the metric was known)


# (key, bucket, the newest row's time in µs): one bucket of one channel's or instance's series.
Bucket = tuple[int, Point, int]


def merge_points(a: Point, b: Point) -> Point:
    """One bucket read partly from a table (``a``) and partly from a finer one's newer tail."""
    n = a["n"] + b["n"]
    avg = None
    if a["avg"] is not None and b["avg"] is not None:
        avg = (a["avg"] * a["n"] + b["avg"] * b["n"]) / n
    return {
        "t": a["t"],
        "min": _pick(min, a["min"], b["min"]),
        "avg": avg,
        "max": _pick(max, a["max"], b["max"]),
        "last": a["last"] if b["last"] is None else b["last"],
        "n": n,
    }


def _pick(
    choose: Callable[[float, float], float], a: float | None, b: float | None
) -> float | None:
    # A rollup that keeps no min or max (rates) leaves the tail's.
    return b if a is None else a if b is None else choose(a, b)


def _merge_buckets(buckets: Iterable[Bucket], into: dict[int, list[Point]]) -> int | None:
    """Append buckets to ``into`` (per key, in time order), merging the one a coarser table
    already began; returns the newest row's time, if any."""
    newest_seen = None
    for key, point, newest in buckets:
        points = into.setdefault(key, [])
        if points and points[-1]["t"] == point["t"]:
            points[-1] = merge_points(points[-1], point)
        else:
            points.append(point)
        if newest_seen is None or newest > newest_seen:
            newest_seen = newest
    return newest_seen
