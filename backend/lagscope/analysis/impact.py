"""Before/after impact of one tuning step on one replica channel (docs/lag.md, "How the journal
judges").

A step (a param change or an annotation) at T is judged on two windows of the channel's samples,
``before`` = [T − W, T) and ``after`` = [T + settle, T + settle + W), clipped at the neighbouring
steps (:func:`windows`).

Either window with fewer than ``min_samples`` known lags is ``insufficient_data``. Otherwise the
step is judged on what an operator reads off the chart, which depends on what the lag was doing
*before* the step:

- **Steady** (caught up, or behind on a plateau): the levels vote. Figures may each vote *better*
  or *worse*, and a vote counts only when the change is both real and large. Real: a two-sided
  Mann–Whitney rank test (normal approximation, p < 0.01) on the window cut into at most 10
  consecutive blocks (block medians of the lag, block means of the rest), because polls a second
  apart are not independent and a test over 600 correlated polls would call any drift
  significant. Large: lag p50 or p95 moved by ≥ 20 % of the larger value and ≥ 0.5 s; time
  caught up by ≥ 25 points. A backlog that drained away inside the before window and stayed
  gone is the previous step's drain: the levels' baseline starts after its last behind sample
  (the story on a fast day: flush relaxed, 15 s of lag gone 30 s before parallel apply, which
  then got "lag p95 fell from 15.6 s to 0.3 s").
- **Growing or draining**: the lag's least-squares slope over the window's behind samples is at
  least 0.1 s per second (6 s a minute) and 3 standard errors from 0. Here the levels after the
  step carry the trend from before it, so they do not vote: relaxing flush while the lag grew
  +0.3 s/s from 12 to 48 s stops it at ~48 s, and its p50 *rises* (30 → 48 s) although the step
  is what stopped it. The **trend** votes instead. With a backlog in the after window, the
  slopes are compared: a change of ≥ 0.1 s/s, ≥ 20 % of the larger pace and ≥ 3 standard errors
  of the two fits is *better* when the slope fell (+0.30 → +0.00 s/s "the lag stopped growing";
  +0.3 → −0.3 "turned from growing to falling"; −0.15 → −0.70 "drained faster than the pace
  before predicted") and *worse* when it rose. Slope ≈ −(apply − source) ÷ source, so the reason
  also gives the catch-up rate (apply − source, trx/s) on both sides. When the replica caught up
  before the after window had a trend to fit, the catch-up time counts: a growing backlog caught
  up is *better*; a drain is *better* when it caught up sooner than 70 % of lag ÷ pace − 2 s.
- **A drain already under way** (the slope above ≤ −0.1 s/s, drain.py's −0.2 s/s, or
  the applier outrunning the source by 10 %+) is never credited with the drain itself: a pace
  kept (−0.3 → −0.3 s/s) is ``no_clear_change``, "already catching up before the step"; only a
  drain that clearly sped up (the slope rule above, or catching up before 70 % of the ETA in trx
  − 2 s) is *better*, one that slowed (after 150 % of the ETA + 2 s) *worse*; with no backlog
  after it and no faster catch-up it is ``not_measurable``.

Always: the apply capacity (apply rate while a backlog existed: more than 10 trx *and* more than
the source writes in 1 s, verdict.py's caught-up rule — at 2,000 trx/s a replica 0.2 s behind
holds ~400 trx, and a "> 10 trx" rule read the echo of the load after a drain as a lower
capacity) votes by ≥ 20 % where it is the ceiling: *better* when it rose and the replica was
behind before the step, *worse* when it fell and it was behind after. Network steps vote on the
receive side (not received) instead. If the source rate (the load) moved by more than ±20 %,
the load-following votes it explains (better under a lighter load, worse under a heavier one)
are set aside; votes against the load stand. The verdict is ``improved`` or ``worse`` when the
standing votes agree, else ``no_clear_change``. An unknown load sets nothing aside.
"""

from __future__ import annotations

import enum
import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from lagscope.analysis.codes import Verdict
from lagscope.analysis.drain import (
    apply_rate_behind,
    caught_up_at,
    draining,
    eta_before,
    has_backlog,
)
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


def _rank_test(before: Sequence[float], after: Sequence[float]) -> tuple[float, int]:
    """Two-sided Mann–Whitney p-value (normal approximation, tie-corrected) and direction.

    The direction is +1 when ``after`` tends to be larger, −1 when smaller, 0 when balanced.
    """
    n1, n2 = len(before), len(after)
    if n1 == 0 or n2 == 0:
        return 1.0, 0
    pooled = sorted([(v, 0) for v in before] + [(v, 1) for v in after])
    n = n1 + n2
    after_rank_sum = tie_term = 0.0
    i = 0
    while i < n:
        j = i
        while j < n and pooled[j][0] == pooled[i][0]:
            j += 1
        # Tied values share the mean of ranks i+1 … j.
        after_rank_sum += (i + 1 + j) / 2 * sum(side for _, side in pooled[i:j])
        tie_term += (j - i) ** 3 - (j - i)
        i = j
    u = after_rank_sum - n2 * (n2 + 1) / 2
    mean = n1 * n2 / 2
    variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0:  # every value equal: nothing to tell apart
        return 1.0, 0
    z = max(abs(u - mean) - 0.5, 0.0) / math.sqrt(variance)  # − 0.5: continuity correction
    return math.erfc(z / math.sqrt(2)), (u > mean) - (u < mean)


def _real_change(
    before: Sequence[float], after: Sequence[float], reduce: Callable[[Sequence[float]], float]
) -> int:
    """+1 / −1 if ``after`` is clearly above / below ``before`` by the block rank test, else 0."""

    def blocks(values: Sequence[float]) -> list[float]:
        n, k = len(values), min(len(values), _BLOCKS)
        return [reduce(values[i * n // k : (i + 1) * n // k]) for i in range(k)]

    p_value, direction = _rank_test(blocks(before), blocks(after))
    return direction if p_value < _ALPHA else 0


def _large(old: float, new: float, floor: float) -> bool:
    # Relative to the larger value so that a → b and b → a are judged alike.
    change = abs(new - old)
    return change > 0 and change >= max(floor, _MIN_RELATIVE_CHANGE * max(abs(old), abs(new)))


def _verb(direction: int) -> str:
    return "rose" if direction > 0 else "fell"


def _lag_vote(b: _Side, a: _Side, bs: WindowStats, as_: WindowStats) -> _Vote | None:
    rose = _real_change(b.lags, a.lags, statistics.median)
    if rose == 0:
        return None
    for name, old, new in (("p50", bs.lag_p50, as_.lag_p50), ("p95", bs.lag_p95, as_.lag_p95)):
        if (
            old is not None
            and new is not None
            and (new - old) * rose > 0
            and _large(old, new, _MIN_LAG_CHANGE_S)
        ):
            return _Vote(-rose, f"lag {name} {_verb(rose)} from {old:.1f} s to {new:.1f} s", True)
    return None


def _caught_up_vote(b: _Side, a: _Side, bs: WindowStats, as_: WindowStats) -> _Vote | None:
    rose = _real_change(b.caught_up, a.caught_up, statistics.fmean)
    old, new = bs.caught_up_share, as_.caught_up_share
    if rose == 0 or old is None or new is None or (new - old) * rose <= 0:
        return None
    if abs(new - old) < _MIN_SHARE_CHANGE:
        return None
    phrase = f"time caught up {_verb(rose)} from {old * 100:.0f} % to {new * 100:.0f} %"
    return _Vote(rose, phrase, True)


def _apply_vote(b: _Side, a: _Side, bs: WindowStats, as_: WindowStats) -> _Vote | None:
    """The apply capacity, i.e. the apply rate while a backlog existed (without one the rate
    only echoes the load, so it is a lower bound of the capacity). A rise counts against the
    capacity before (behind before); a fall against the capacity after (behind after)."""
    old_all = b.capacity if len(b.capacity) >= _MIN_BEHIND else b.apply_rates
    new_all = a.capacity if len(a.capacity) >= _MIN_BEHIND else a.apply_rates
    for rose, old_rates, new_rates in ((1, b.capacity, new_all), (-1, old_all, a.capacity)):
        ceiling = old_rates if rose > 0 else new_rates
        if len(ceiling) < _MIN_BEHIND or not old_rates or not new_rates:
            continue
        old, new = statistics.fmean(old_rates), statistics.fmean(new_rates)
        if _real_change(old_rates, new_rates, statistics.fmean) != rose:
            continue
        if (new - old) * rose <= 0 or not _large(old, new, 0.0):
            continue
        when = "before" if rose > 0 else "after"
        phrase = (
            f"the apply rate {_verb(rose)} from {old:.0f} to {new:.0f} trx/s, "
            f"behind {when} the step"
        )
        return _Vote(rose, phrase, False)
    return None


def _receive_vote(b: _Side, a: _Side, bs: WindowStats, as_: WindowStats) -> _Vote | None:
    """Network steps: the receive side, transactions on the source not yet received."""
    if not b.not_received or not a.not_received:
        return None
    rose = _real_change(b.not_received, a.not_received, statistics.median)
    old, new = statistics.median(b.not_received), statistics.median(a.not_received)
    if rose == 0 or (new - old) * rose <= 0 or not _large(old, new, _MIN_RECEIVE_CHANGE):
        return None
    return _Vote(-rose, f"not received {_verb(rose)} from {old:.0f} to {new:.0f} trx", True)


def _catch_up_vote(
    before: Sequence[Point], after_step: Sequence[Point], end: float
) -> _Vote | None:
    """A drain under way: did the replica catch up sooner or later than the ETA just before
    the step predicted? (The step is at time 0.)"""
    eta = eta_before(before, 0.0)
    if eta is None:
        return None
    took = caught_up_at(after_step, 0.0)
    if took is not None and took < _FASTER * eta - _ETA_SLACK_S:
        return _Vote(1, f"caught up after {took:.0f} s where {eta:.0f} s was predicted", True)
    late = took if took is not None else end
    if late > _SLOWER * eta + _ETA_SLACK_S:
        said = f"after {took:.0f} s" if took is not None else f"not within {end:.0f} s"
        return _Vote(-1, f"caught up {said} where {eta:.0f} s was predicted", True)
    return None


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
        if moving > 0:
            if better and _moving(after) >= 0 and after.slope < _TREND_S:
                what = "the lag stopped growing"
            elif better and after.slope < 0:
                what = "the lag turned from growing to falling"
            else:
                what = "the lag grew faster" if not better else "the lag grew more slowly"
        elif better:
            what = "the backlog drained faster than the pace before predicted"
        else:
            what = (
                "the lag turned from falling to growing"
                if after.slope > 0
                else ("the backlog drained more slowly than the pace before predicted")
            )
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


def _load(before: float | None, after: float | None) -> tuple[int | None, float | None, str]:
    """Load direction (+1 heavier, −1 lighter, 0 steady, None unknown), ratio, and its phrase."""
    if before is None or after is None:
        return None, None, "the load was unknown"
    if before == 0:
        # An idle source has no ratio; any load after it is heavier.
        return (
            (1, None, "the source was idle before")
            if after > 0
            else (0, 1.0, "the source was idle")
        )
    ratio = after / before
    percent = abs(ratio - 1) * 100
    if ratio > 1 + _LOAD_TOLERANCE:
        return 1, ratio, f"the load rose by {percent:.0f} %"
    if ratio < 1 - _LOAD_TOLERANCE:
        return -1, ratio, f"the load fell by {percent:.0f} %"
    return 0, ratio, f"the load was unchanged (±{percent:.0f} %)"


def _judge(votes: list[_Vote], load: int | None) -> tuple[ImpactVerdict, list[_Vote], list[_Vote]]:
    """The verdict, the votes that stand and those the load change explains away."""
    explained = [v for v in votes if load and v.load_sensitive and v.direction == -load]
    standing = [v for v in votes if v not in explained]
    directions = {v.direction for v in standing}
    verdict = ImpactVerdict.NO_CLEAR_CHANGE
    if len(directions) == 1:  # no votes, or votes that disagree, make no clear change
        verdict = ImpactVerdict.IMPROVED if directions == {1} else ImpactVerdict.WORSE
    return verdict, standing, explained


def _reason(
    verdict: ImpactVerdict,
    standing: list[_Vote],
    explained: list[_Vote],
    load: str,
    stats: tuple[WindowStats, WindowStats],
) -> str:
    """One sentence: the votes that decided, or why nothing did."""
    bs, as_ = stats
    if verdict is not ImpactVerdict.NO_CLEAR_CHANGE:
        return f"{' and '.join(v.phrase for v in standing)} while {load}"
    if standing:
        return f"mixed evidence: {' but '.join(v.phrase for v in standing)} while {load}"
    if explained:
        rates = "unknown"
        if bs.apply_rate is not None and as_.apply_rate is not None:
            rates = f"{bs.apply_rate:.0f} → {as_.apply_rate:.0f} trx/s"
        capacity = "more" if explained[0].direction > 0 else "less"
        return (
            f"{' and '.join(v.phrase for v in explained)}, but {load}, which can explain it, "
            f"and the apply rate ({rates}) shows no {capacity} capacity than before"
        )
    return (
        f"lag p50 went from {bs.lag_p50:.1f} s to {as_.lag_p50:.1f} s, "
        f"no clear change beyond the noise, while {load}"
    )


def impact(
    points: Sequence[Point],
    step_at: float,
    previous_step_at: float | None = None,
    next_step_at: float | None = None,
    width_s: float = 600,
    settle_s: float = 30,
    min_samples: int = 10,
    network: bool = False,
) -> Impact:
    """Compare a channel's ``before`` and ``after`` windows around a step (see the module doc).

    ``network``: the step can only change the receive side (a link, compression, a proxy), so
    it is judged there and not on the apply capacity."""
    if min_samples < 1:
        raise ValueError(f"min_samples must be >= 1, got {min_samples}")
    before, after = windows(step_at, previous_step_at, next_step_at, width_s, settle_s)
    b, a = _side(points, before), _side(points, after)
    bs, as_ = _stats(b), _stats(a)
    load, ratio, load_phrase = _load(bs.source_rate, as_.source_rate)
    change = None if bs.lag_p50 is None or as_.lag_p50 is None else as_.lag_p50 - bs.lag_p50
    if bs.samples < min_samples or as_.samples < min_samples:
        reason = (
            f"too few lag samples to judge: {bs.samples} before and {as_.samples} after the step "
            f"(at least {min_samples} needed on each side)"
        )
        return Impact(bs, as_, ImpactVerdict.INSUFFICIENT_DATA, change, ratio, reason)
    drain = draining(_shift(b.points, step_at)) or _moving(_before_trend(b)) < 0
    votes = _votes(points, step_at, after.end, (b, a, bs, as_), drain=drain, network=network)
    verdict, standing, explained = _judge([v for v in votes if v is not None], load)
    if drain and not standing and not any(has_backlog(p) for p in a.points):
        reason = (
            "caught up; capacity after the step not measurable: the replica was already "
            f"catching up before it (lag p50 {bs.lag_p50:.1f} s → {as_.lag_p50:.1f} s)"
        )
        return Impact(bs, as_, ImpactVerdict.NOT_MEASURABLE, change, ratio, reason)
    reason = _reason(verdict, standing, explained, load_phrase, (bs, as_))
    before_trend, after_trend = _before_trend(b), _trend(a.points)
    if not standing and not explained and _moving(before_trend) > 0 and after_trend is not None:
        assert before_trend is not None
        reason = (
            "the lag kept growing at the pace it had before the step: "
            f"{_pace(before_trend.slope)} before, {_pace(after_trend.slope)} after "
            f"(lag p50 {bs.lag_p50:.1f} s → {as_.lag_p50:.1f} s), while {load_phrase}"
        )
    if drain and verdict is ImpactVerdict.NO_CLEAR_CHANGE and not standing:
        reason = f"already catching up before the step, and no faster after it: {reason}"
    return Impact(bs, as_, verdict, change, ratio, reason)


def _shift(points: Sequence[Point], step_at: float) -> list[Point]:
    return [replace(p, ts=p.ts - step_at) for p in points]


def _settled(side: _Side) -> _Side:
    """The levels' baseline: a backlog that drained away inside the before window and stayed
    gone is the previous step's drain, not this step's "before". Its samples up to the last
    one with a backlog are left out (the window's figures keep them), so a step taken after
    the replica caught up is not credited with the lag p95 of the drain that preceded it."""
    points = side.points
    if not points or any(has_backlog(p) for p in points[-_RECENT:]):
        return side
    last = max((i for i, p in enumerate(points) if has_backlog(p)), default=None)
    if last is None:
        return side
    return _side(points[last + 1 :], Window(points[last + 1].ts, math.inf))


def _votes(
    points: Sequence[Point],
    step_at: float,
    after_end: float,
    sides: tuple[_Side, _Side, WindowStats, WindowStats],
    drain: bool,
    network: bool,
) -> list[_Vote | None]:
    """Lag levels only when the replica was steady before (caught up, or behind on a plateau):
    while the backlog grows or drains, the levels after the step carry the trend from before it
    (a lag that stops growing at 48 s has a higher p50 after than the 20 → 45 s before), so the
    step is judged on the trend and, in a drain, on the catch-up time against the ETA."""
    b, a, bs, as_ = sides
    votes: list[_Vote | None] = []
    after_step = _shift(sorted((p for p in points if p.ts >= step_at), key=lambda p: p.ts), step_at)
    eta_vote = None
    if drain:
        eta_vote = _catch_up_vote(_shift(b.points, step_at), after_step, after_end - step_at)
        votes.append(eta_vote)
    if not drain and _moving(_before_trend(b)) == 0:
        base = _settled(b)
        votes += [
            _lag_vote(base, a, _stats(base), as_),
            _caught_up_vote(base, a, _stats(base), as_),
        ]
    # A drain that ended before the after window: the ETA in trx already judged its catch-up
    # time; the same in seconds of lag would only repeat it.
    elif not (eta_vote is not None and _trend(a.points) is None):
        recent = [p.lag_s for p in b.points[-_RECENT:] if p.lag_s is not None]
        lag_at_step = statistics.median(recent) if recent else None
        votes.append(_trend_vote(b, a, after_step, lag_at_step, drain))
    side = _receive_vote if network else _apply_vote
    votes.append(side(b, a, bs, as_))
    return votes
