"""The step judged: which votes are cast given what the lag was doing, those a change of load
explains set aside, and the standing votes folded into one :class:`Impact` with its reason.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import replace

from lagscope.analysis.drain import draining, has_backlog
from lagscope.analysis.impact.sides import (
    _LOAD_TOLERANCE,
    _RECENT,
    Impact,
    ImpactVerdict,
    Point,
    Window,
    WindowStats,
    _Side,
    _side,
    _stats,
    _Vote,
    windows,
)
from lagscope.analysis.impact.trends import _before_trend, _moving, _pace, _trend, _trend_vote
from lagscope.analysis.impact.votes import (
    _apply_vote,
    _catch_up_vote,
    _caught_up_vote,
    _lag_vote,
    _receive_vote,
)


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
