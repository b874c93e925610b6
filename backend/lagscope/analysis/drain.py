"""Was a replica already catching up when a step was taken? Backlog, drain and ETA.

A step taken while a replica drains a backlog (apply rate well above the source rate, lag
falling steadily) must not be credited with the drain: it would have finished at the same time
without the step. These pure helpers tell a drain from a steady state, predict when the drain
would have ended (the ETA just before the step) and find when it really did. analysis/impact/
judges the step with them.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Protocol

from lagscope.analysis.codes import Verdict
from lagscope.analysis.verdict import small_backlog

_BOUND = frozenset({Verdict.RECEIVE_BOUND, Verdict.APPLY_BOUND})
_RECENT = 10  # polls just before the step that describe "now" (≈ 10 s at 1 Hz)
# A drain: the lag falls by at least 0.2 s per second over the window's behind samples (a steady
# replica wanders by far less), or the applier outruns the source by 10 %+ with a backlog.
_DRAIN_SLOPE = -0.2
_DRAIN_RATE_MARGIN = 1.1
_MIN_TREND_POINTS = 5


class BacklogPoint(Protocol):
    """What these helpers read of a sample (analysis.impact.Point has it)."""

    @property
    def ts(self) -> float: ...
    @property
    def lag_s(self) -> float | None: ...
    @property
    def verdict(self) -> int: ...
    @property
    def apply_rate(self) -> float | None: ...
    @property
    def source_rate(self) -> float | None: ...
    @property
    def backlog(self) -> int | None: ...


def has_backlog(point: BacklogPoint) -> bool:
    """A backlog as the caught-up rule of verdict.py counts one: more than a handful of
    transactions *and* more than the source writes in a second. Without counts, a behind verdict.

    (It used to be "more than 10 transactions" alone: at the demo's ~1,000+ trx/s a replica 0.2 s
    behind still held a few hundred, so it never counted as caught up and a drain that finished
    in seconds was judged "not caught up within the window", i.e. worse.)
    """
    if point.backlog is not None:
        return not small_backlog(point.backlog, point.source_rate)
    return point.verdict in _BOUND


def _slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread


def draining(before: Sequence[BacklogPoint]) -> bool:
    """The replica was behind just before the step and already gaining on the source."""
    recent = before[-_RECENT:]
    if not recent or sum(has_backlog(p) for p in recent) * 2 <= len(recent):
        return False
    behind = [p for p in before if has_backlog(p) and p.lag_s is not None]
    if len(behind) >= _MIN_TREND_POINTS:
        lags = [p.lag_s for p in behind if p.lag_s is not None]
        if _slope([p.ts for p in behind], lags) <= _DRAIN_SLOPE:
            return True
    applied = [p.apply_rate for p in recent if p.apply_rate is not None]
    written = [p.source_rate for p in recent if p.source_rate is not None]
    if not applied or not written:
        return False
    return statistics.fmean(applied) > _DRAIN_RATE_MARGIN * statistics.fmean(written)


def eta_before(before: Sequence[BacklogPoint], step_at: float) -> float | None:
    """Seconds from the step until the drain would have ended at the rates just before it:
    backlog ÷ (apply rate − source rate) at the newest point, counted from ``step_at``."""
    recent = [p for p in before[-_RECENT:]]
    last = next((p for p in reversed(recent) if p.backlog is not None), None)
    applied = [p.apply_rate for p in recent if p.apply_rate is not None]
    written = [p.source_rate for p in recent if p.source_rate is not None]
    if last is None or last.backlog is None or not applied or not written:
        return None
    gain = statistics.fmean(applied) - statistics.fmean(written)
    if gain <= 0:
        return None
    return max(0.0, last.ts + last.backlog / gain - step_at)


def caught_up_at(after_step: Sequence[BacklogPoint], step_at: float) -> float | None:
    """Seconds from the step to the first point with no backlog (None: never, in these points)."""
    for point in after_step:
        if point.ts >= step_at and not has_backlog(point):
            return point.ts - step_at
    return None


def apply_rate_behind(points: Sequence[BacklogPoint]) -> list[float]:
    """Apply rates of the polls with a backlog: the replica's capacity, not the load's echo."""
    return [p.apply_rate for p in points if p.apply_rate is not None and has_backlog(p)]
