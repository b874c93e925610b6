"""Series bucket planning: which table (raw, 1 m, 1 h) and which buckets answer a series query.

Pure; history/series.py runs the SQL the plan describes (docs/architecture.md, "Storage and time":
the coarsest table that still gives the requested number of points, at most ``points`` buckets).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Resolution = Literal["raw", "1m", "1h"]

# Raw buckets are whole milliseconds because the API speaks epoch milliseconds.
RESOLUTION_US: dict[Resolution, int] = {"raw": 1_000, "1m": 60_000_000, "1h": 3_600_000_000}


@dataclass(frozen=True, slots=True)
class BucketPlan:
    """Bucket ``k`` covers [origin + k·width, origin + (k+1)·width); rows read: [lo, hi)."""

    resolution: Resolution
    width_us: int
    origin_us: int
    lo_us: int
    hi_us: int

    @property
    def max_buckets(self) -> int:
        return _ceil_div(self.hi_us - self.origin_us, self.width_us)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _target_width_us(start_us: int, end_us: int, points: int) -> int:
    # points − 1: epoch-aligned buckets can cut one extra bucket at the edges.
    return _ceil_div(end_us - start_us, max(points - 1, 1))


def choose_resolution(
    start_us: int,
    end_us: int,
    points: int,
    available: Sequence[Resolution],
    oldest_us: Mapping[Resolution, int] | None = None,
) -> Resolution:
    """The coarsest table whose resolution ≤ the bucket width the points ask for.

    ``available`` is finest first. A table whose retention (``oldest_us``: its oldest kept
    time) does not reach back to ``start_us`` is passed over for a coarser one that does, so a
    70-day chart does not start with ten empty days; when none does, the coarsest is used.
    """
    oldest = oldest_us or {}
    kept = [r for r in available if oldest.get(r, start_us) <= start_us] or [available[-1]]
    target = _target_width_us(start_us, end_us, points)
    fine_enough = [r for r in kept if RESOLUTION_US[r] <= target]
    return fine_enough[-1] if fine_enough else kept[0]


def plan_buckets(start_us: int, end_us: int, points: int, resolution: Resolution) -> BucketPlan:
    """At most ``points`` buckets over [start, end), each a whole number of table rows.

    Buckets are aligned on the epoch, so they stay put as a live window slides and a refresh
    does not redraw every bucket; a single point is one bucket from the range's start instead.
    A rollup row that began before ``start`` overlaps the range and is included.
    """
    res = RESOLUTION_US[resolution]
    lo = start_us if resolution == "raw" else start_us // res * res
    width = _ceil_div(_target_width_us(lo, end_us, points), res) * res
    origin = lo // width * width if points > 1 else lo
    return BucketPlan(resolution, width, origin, lo, end_us)
