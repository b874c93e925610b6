"""The votes on what the lag's levels, the time caught up, the apply capacity, the receive side and
the catch-up time against the ETA did across a step; each counts only when the change is real
(a block rank test) and large enough for an operator to care.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence

from lagscope.analysis.drain import caught_up_at, eta_before
from lagscope.analysis.impact.sides import (
    _ALPHA,
    _BLOCKS,
    _ETA_SLACK_S,
    _FASTER,
    _MIN_BEHIND,
    _MIN_LAG_CHANGE_S,
    _MIN_RECEIVE_CHANGE,
    _MIN_RELATIVE_CHANGE,
    _MIN_SHARE_CHANGE,
    _SLOWER,
    Point,
    WindowStats,
    _Side,
    _Vote,
)


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
