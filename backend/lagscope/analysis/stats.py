"""Small statistics shared by the analyses, so two reports never disagree on a figure."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-quantile (0 < q < 1) with linear interpolation between closest ranks (numpy's
    default), so 1 … 10 has p95 = 9.55; None for no values. ``values`` need not be sorted."""
    if not 0 < q < 1:
        raise ValueError(f"q must be in (0, 1), got {q}")
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def p95(values: Sequence[float]) -> float | None:
    return percentile(values, 0.95)


def mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None
