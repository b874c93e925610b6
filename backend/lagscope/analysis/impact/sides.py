"""The two sides of a step: the windows before and after it (:func:`windows`), the samples each
holds (:class:`Point`), the figures an operator reads off each (:class:`WindowStats`), the
verdict shapes the journal shows, and the thresholds every vote is held to.
"""

from __future__ import annotations

import enum
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lagscope.analysis.codes import Verdict
from lagscope.analysis.drain import apply_rate_behind
from lagscope.analysis.stats import p95

# 10 blocks a side: a clean shift still reaches p ≈ 2e-4, and 1-minute blocks of 1 Hz polls are
# close to independent; 20 blocks called a lag wandering over ~1 min a change 3× as often.
_BLOCKS = 10
_ALPHA = 0.01  # stricter than 0.05: blocking removes only part of the polls' autocorrelation
_MIN_LAG_CHANGE_S = 0.5  # below this, a lag change is within a 1 s poll's own jitter
_MIN_RELATIVE_CHANGE = 0.2  # 41 s → 38 s is "significant" over 600 polls but nobody's win
_MIN_SHARE_CHANGE = 0.25  # points of time caught up (0.25 = 25 %)
_LOAD_TOLERANCE = 0.2  # ±20 %: day-to-day wobble of a steady workload
_BOUND = frozenset({Verdict.RECEIVE_BOUND, Verdict.APPLY_BOUND})
_MIN_BEHIND = 3  # polls with a backlog each window needs before its apply rate is a capacity
_MIN_RECEIVE_CHANGE = 10  # trx: a few in flight come and go with any load
# Catch-up against the ETA: sooner than 70 % or later than 150 % of it, and by 2 s or more
# (rates over ten 1 s polls are that noisy), says the step changed how fast the backlog drains.
_FASTER, _SLOWER, _ETA_SLACK_S = 0.7, 1.5, 2.0
# The trend: a lag growing or falling by 0.1 s per second (6 s a minute) while behind is a trend
# an operator sees on the chart; a steady or caught-up replica wanders by far less over a window.
_TREND_S = 0.1
_TREND_SIGMAS = 3.0  # a slope change must also be 3 standard errors of the two fits
_MIN_TREND_POINTS = 5  # behind samples a window needs before its slope means anything
_RECENT = 5  # the last polls before the step give the lag at the step (their median)


@dataclass(frozen=True, slots=True)
class Point:
    """One sample of a channel: lag None when unknown (e.g. unreachable), verdict a Verdict code."""

    ts: float  # epoch seconds
    lag_s: float | None
    verdict: int
    apply_rate: float | None
    source_rate: float | None
    backlog: int | None = None  # transactions behind: not received + received, not applied
    not_received: int | None = None


@dataclass(frozen=True, slots=True)
class Window:
    """The half-open interval [start, end); empty when start >= end."""

    start: float
    end: float

    @property
    def empty(self) -> bool:
        return self.start >= self.end

    def holds(self, ts: float) -> bool:
        return self.start <= ts < self.end


def windows(
    step_at: float,
    previous_step_at: float | None,
    next_step_at: float | None,
    width_s: float = 600,
    settle_s: float = 30,
) -> tuple[Window, Window]:
    """``(before, after)`` for a step, clipped at its neighbours; a window may come out empty.

    ``before`` starts no earlier than ``previous_step_at + settle_s``: the previous step's own
    settling time is its transient, not this step's baseline. ``after`` ends at the next step.
    """
    if width_s <= 0 or settle_s < 0:
        raise ValueError(f"need width_s > 0 and settle_s >= 0, got {width_s}, {settle_s}")
    if previous_step_at is not None and previous_step_at > step_at:
        raise ValueError("previous_step_at is after step_at")
    if next_step_at is not None and next_step_at < step_at:
        raise ValueError("next_step_at is before step_at")
    before_start = step_at - width_s
    if previous_step_at is not None:
        before_start = max(before_start, previous_step_at + settle_s)
    after_start = step_at + settle_s
    after_end = after_start + width_s
    if next_step_at is not None:
        after_end = min(after_end, next_step_at)
    return Window(before_start, step_at), Window(after_start, after_end)


@dataclass(frozen=True, slots=True)
class WindowStats:
    """A window's figures. ``samples`` counts known lags: the lag figures rest on them.

    ``caught_up_share`` is over the reachable samples (unreachable ones say nothing either way);
    the rates are means of the known values; every poll weighs the same, as polls are evenly
    spaced. None = nothing to compute from.
    """

    samples: int
    lag_p50: float | None
    lag_p95: float | None
    lag_max: float | None
    caught_up_share: float | None
    apply_rate: float | None
    source_rate: float | None
    # The mean apply rate while a backlog existed (at least _MIN_BEHIND polls): what the
    # replica could apply, rather than what the source happened to send.
    capacity: float | None = None


class ImpactVerdict(enum.StrEnum):
    """What the step did to the channel; the values are what the API and the UI say."""

    IMPROVED = "improved"
    WORSE = "worse"
    NO_CLEAR_CHANGE = "no_clear_change"
    INSUFFICIENT_DATA = "insufficient_data"
    # Already draining before the step and caught up after it: the after window has no backlog,
    # so the capacity the step might have changed cannot be seen: not "improved".
    NOT_MEASURABLE = "not_measurable"


@dataclass(frozen=True, slots=True)
class Impact:
    """The step's effect: ``lag_change_p50`` = after − before, ``load_change`` = after ÷ before."""

    before: WindowStats
    after: WindowStats
    verdict: ImpactVerdict
    lag_change_p50: float | None
    load_change: float | None
    reason: str


@dataclass(frozen=True, slots=True)
class _Side:
    """A window's series in time order, as the rank tests need them."""

    lags: list[float]
    caught_up: list[float]  # 1.0 / 0.0 per reachable sample
    apply_rates: list[float]
    source_rates: list[float]
    points: list[Point]  # in time order
    capacity: list[float]  # apply rates while a backlog existed
    not_received: list[float]


@dataclass(frozen=True, slots=True)
class _Vote:
    direction: int  # +1 better, −1 worse
    phrase: str
    load_sensitive: bool  # lag and caught-up share follow the load; the apply ceiling does not


def _known(values: Iterable[float | None]) -> list[float]:
    # NaN as well as None: one NaN would turn a whole window's mean or quantile into NaN.
    return [v for v in values if v is not None and not math.isnan(v)]


def _side(points: Sequence[Point], window: Window) -> _Side:
    inside = sorted((p for p in points if window.holds(p.ts)), key=lambda p: p.ts)
    reachable = [p for p in inside if p.verdict != Verdict.UNREACHABLE]
    return _Side(
        lags=_known(p.lag_s for p in inside),
        caught_up=[1.0 if p.verdict == Verdict.CAUGHT_UP else 0.0 for p in reachable],
        apply_rates=_known(p.apply_rate for p in inside),
        source_rates=_known(p.source_rate for p in inside),
        points=inside,
        capacity=apply_rate_behind(inside),
        not_received=_known(p.not_received for p in inside),
    )


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _stats(side: _Side) -> WindowStats:
    lags = sorted(side.lags)
    return WindowStats(
        samples=len(lags),
        lag_p50=statistics.median(lags) if lags else None,
        lag_p95=p95(lags),
        lag_max=lags[-1] if lags else None,
        caught_up_share=_mean(side.caught_up),
        apply_rate=_mean(side.apply_rates),
        source_rate=_mean(side.source_rates),
        capacity=_mean(side.capacity) if len(side.capacity) >= _MIN_BEHIND else None,
    )


def window_stats(points: Sequence[Point], window: Window) -> WindowStats:
    """Figures of the points inside ``window`` (points may come in any order)."""
    return _stats(_side(points, window))
