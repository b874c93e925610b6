"""The lag's trend while behind: its slope before and after a step, and the vote it casts when the
backlog was growing or draining (levels alone would read the trend from before as the step's).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from lagscope.analysis.drain import caught_up_at, has_backlog
from lagscope.analysis.impact.sides import (
    _ETA_SLACK_S,
    _FASTER,
    _MIN_RELATIVE_CHANGE,
    _MIN_TREND_POINTS,
    _RECENT,
    _TREND_S,
    _TREND_SIGMAS,
    Point,
    Window,
    _Side,
    _side,
    _Vote,
)


@dataclass(frozen=True, slots=True)
class _Trend:
    """Least-squares slope of the lag (s per s) over a window's behind samples, its standard
    error, and the catch-up rate (apply − source, trx/s) over the same samples, if known."""

    slope: float
    se: float
    catch_up: float | None


def _trend(points: Sequence[Point]) -> _Trend | None:
    """The lag's trend while behind; None with fewer than ``_MIN_TREND_POINTS`` such samples."""
    behind = [p for p in points if p.lag_s is not None and has_backlog(p)]
    if len(behind) < _MIN_TREND_POINTS:
        return None
    xs = [p.ts for p in behind]
    ys = [p.lag_s for p in behind if p.lag_s is not None]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return None
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
    residual = sum((y - mean_y - slope * (x - mean_x)) ** 2 for x, y in zip(xs, ys, strict=True))
    se = math.sqrt(residual / (len(xs) - 2) / spread)
    gains = [
        p.apply_rate - p.source_rate
        for p in behind
        if p.apply_rate is not None and p.source_rate is not None
    ]
    return _Trend(slope, se, statistics.fmean(gains) if gains else None)


def _before_trend(side: _Side) -> _Trend | None:
    """The trend before the step, or None when the replica was not behind for most of it (it was
    caught up: steady at ~0, which the levels judge)."""
    known = [p for p in side.points if p.lag_s is not None]
    behind = [p for p in known if has_backlog(p)]
    if len(behind) * 2 <= len(known):
        return None
    return _trend(side.points)


def _moving(trend: _Trend | None) -> int:
    """+1 growing, −1 falling, 0 steady: a slope of 0.1 s/s or more, 3 standard errors clear."""
    if trend is None or abs(trend.slope) < max(_TREND_S, _TREND_SIGMAS * trend.se):
        return 0
    return 1 if trend.slope > 0 else -1


def trend(points: Sequence[Point]) -> int:
    """What the lag did over ``points`` (a window before a step): +1 growing, −1 falling, 0
    steady or caught up, by the rule the verdict uses (module doc)."""
    inside = sorted(points, key=lambda p: p.ts)
    return _moving(_before_trend(_side(inside, Window(-math.inf, math.inf))))


def _pace(slope: float) -> str:
    return f"{slope:+.2f} s/s"


def _gain(before: _Trend, after: _Trend | None) -> str:
    if before.catch_up is None or after is None or after.catch_up is None:
        return ""
    return f" (catch-up rate {before.catch_up:+.0f} → {after.catch_up:+.0f} trx/s)"


def _pace_change(moving: int, better: bool, after: _Trend) -> str:
    """How the step changed a growing (``moving`` > 0) or draining backlog's pace, in words."""
    if moving > 0:
        if better and _moving(after) >= 0 and after.slope < _TREND_S:
            return "the lag stopped growing"
        if better and after.slope < 0:
            return "the lag turned from growing to falling"
        return "the lag grew faster" if not better else "the lag grew more slowly"
    if better:
        return "the backlog drained faster than the pace before predicted"
    return (
        "the lag turned from falling to growing"
        if after.slope > 0
        else ("the backlog drained more slowly than the pace before predicted")
    )


def _trend_vote(
    b: _Side, a: _Side, after_step: Sequence[Point], lag_at_step: float | None, drain: bool
) -> _Vote | None:
    """A backlog growing or draining before the step: judge how the step changed its pace.

    With a backlog in the after window, compare the slopes; a change counts when it is at least
    0.1 s/s, 20 % of the larger pace and 3 standard errors of the two fits. When the replica
    caught up before the after window had a trend to fit, compare when it caught up (from the
    step, ``after_step`` re-timed to it) with when the pace before predicted: never, for a
    growing backlog; lag ÷ pace for a drain."""
    before = _before_trend(b)
    moving = _moving(before)
    if before is None or (moving == 0 and not drain):
        return None
    # A drain told by its rates (the applier 10 %+ ahead of the source) whose lag slope is still
    # within the noise: only a clearly steeper fall after the step can speak for the step.
    moving = moving or -1
    after = _trend(a.points)
    if after is not None:
        change = after.slope - before.slope
        larger = max(abs(before.slope), abs(after.slope))
        noise = _TREND_SIGMAS * math.hypot(before.se, after.se)
        if abs(change) < max(_TREND_S, _MIN_RELATIVE_CHANGE * larger, noise):
            return None
        better = change < 0
        paces = f"{_pace(before.slope)} before the step, {_pace(after.slope)} after"
        what = _pace_change(moving, better, after)
        return _Vote(1 if better else -1, f"{what}: {paces}{_gain(before, after)}", True)
    took = caught_up_at(after_step, 0.0)
    if took is None or lag_at_step is None or any(has_backlog(p) for p in a.points[-_RECENT:]):
        return None
    if _moving(before) == 0:  # no pace to predict from: the ETA in trx judges the catch-up
        return None
    if moving > 0:
        phrase = (
            f"the lag stopped growing ({_pace(before.slope)} before the step) and the replica "
            f"caught up {lag_at_step:.0f} s of lag {took:.0f} s after it"
        )
        return _Vote(1, phrase, True)
    predicted = lag_at_step / -before.slope
    if took < _FASTER * predicted - _ETA_SLACK_S:
        phrase = (
            f"caught up {lag_at_step:.0f} s of lag {took:.0f} s after the step where the pace "
            f"before ({_pace(before.slope)}) predicted {predicted:.0f} s"
        )
        return _Vote(1, phrase, True)
    return None
