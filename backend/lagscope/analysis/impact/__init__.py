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

The package: ``sides`` (the two windows, what each shows, the figures and shapes the journal
reads), ``votes`` (the level, caught-up, apply and receive votes and the tests behind them),
``trends`` (the lag's slope before and after, and its vote) and ``judge`` (the votes weighed
against the load into one :class:`Impact`). Every public name is re-exported here.
"""

from __future__ import annotations

from lagscope.analysis.impact.judge import impact
from lagscope.analysis.impact.sides import (
    Impact,
    ImpactVerdict,
    Point,
    Window,
    WindowStats,
    window_stats,
    windows,
)
from lagscope.analysis.impact.trends import trend

__all__ = [
    "Impact",
    "ImpactVerdict",
    "Point",
    "Window",
    "WindowStats",
    "impact",
    "trend",
    "window_stats",
    "windows",
]
