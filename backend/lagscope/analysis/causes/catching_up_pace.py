"""How a backlog goes while a replica catches up: the replica's pace against the source's, the
lag's slope, the transactions behind, and what each threshold reads as draining, barely
draining or only keeping pace (the rules are told in :mod:`.catching_up`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from lagscope.analysis.causes.seen import LAG_POLLS, RECENT, Seen

# A lag falling at least this fast (s of lag per s) drains; a steady replica wanders far less.
DRAIN_MIN_S_PER_S = 0.2
DRAIN_MIN_POINTS = 3
# Transactions behind must fall by at least this share over the recent polls to count.
TRX_DRAIN_SHARE = 0.05
# By pace, over PACE_POLLS: the replica's mean apply rate minus the source's, and the fall of
# the transactions behind (their least-squares slope), measure the same drain with their own
# noise (the two servers are read a moment apart); their mean is the drain. At least this share
# of the source's rate (0.03 s of lag worked off per s), with the backlog falling and apply above
# the source's rate, is a drain: caught up on the demo's loaded 2-core box, ten polls' drain
# wandered by 0.5 % of the source's rate (up to 3 % as a drain settled), hence not finer.
DRAIN_SHARE = 0.03
# A drain within this share of the source's rate either way keeps pace; a run of polls goes on
# until the backlog grows by more (the drain has clearly stopped).
FALL_SHARE = 0.05
# The two measures further apart than this share of the source's rate contradict each other: the
# pace says nothing then (the lag decides alone). In the tuning story they kept within 2 % in
# phase A and within 15 % in phase B, the most where the window holds the turn after the step (a
# slope and a mean of rates follow a turn differently).
AGREE_SHARE = 0.2
PACE_MIN_POLLS = 5
# Under this source rate (trx/s) the pace says nothing: an applier that applies nothing would
# "keep pace" with an idle source. The lag decides alone.
PACE_MIN_SOURCE_TRX_S = 1.0
# Under this drain (s of lag per s) a drain is "barely draining": at 50 s behind, over 4 min.
BARELY_S_PER_S = DRAIN_MIN_S_PER_S
# A lag rising at least this fast over the pace's polls (s/s) is not draining, whatever the
# backlog: what the replica applies was written faster than it applies it (a source whose rate
# swings, on a starved box), so the transactions behind barely fall while the lag grows; saying
# "draining" there contradicts the lag chart.
LAG_RISE_S_PER_S = 0.1
# How the backlog goes, in the evidence's ``pace``.
DRAINING = "draining"
BARELY_DRAINING = "barely_draining"
NOT_DRAINING = "not_draining"
# A run of catching-up polls keeps its start across this many poll intervals without one.
RUN_GAP_INTERVALS = 3


@dataclass(frozen=True, slots=True)
class Pace:
    """The replica's pace against the source's over the recent polls: the mean apply and source
    rates (trx/s) and the least-squares slope of the transactions behind (trx/s; negative: the
    backlog falls)."""

    apply_rate: float
    source_rate: float
    trx_per_s: float
    polls: int

    @property
    def gain(self) -> float:
        return self.apply_rate - self.source_rate

    @property
    def drain_per_s(self) -> float:
        """Transactions worked off per second (negative: the backlog grows): the mean of the two
        measures."""
        return (self.gain - self.trx_per_s) / 2

    @property
    def drain_s_per_s(self) -> float:
        """Seconds of lag worked off per second: the drain counted in seconds of the source's
        writes (0 when it does not drain)."""
        return max(0.0, self.drain_per_s) / self.source_rate

    @property
    def draining(self) -> bool:
        """The transactions behind fall, apply outruns the source, by DRAIN_SHARE at least."""
        return (
            self.trx_per_s < 0
            and self.gain > 0
            and self.drain_per_s >= DRAIN_SHARE * self.source_rate
        )

    @property
    def keeping_pace(self) -> bool:
        return abs(self.drain_per_s) < FALL_SHARE * self.source_rate


def _from_turn(
    points: Sequence[tuple[float, float]], turn: float | None
) -> list[tuple[float, float]]:
    """The lags from the turn on, the turn's own poll included (its lag is the drain's top)."""
    return [p for p in points if turn is None or p[0] >= turn]


def pace_of(seen: Seen, turn: float | None = None) -> Pace | None:
    """The pace over the kept polls after ``turn``, this one included (None: too few polls, an
    idle source, or the rates and the backlog contradicting each other). The turn's own poll is
    left out: its rates were measured while the cause still held."""
    points = [p for p in seen.pace if turn is None or p[0] > turn]
    if len(points) < PACE_MIN_POLLS or points[-1][0] != seen.at:
        return None
    source = statistics.fmean(p[3] for p in points)
    if source < PACE_MIN_SOURCE_TRX_S:
        return None
    slope = _slope([p[0] for p in points], [float(p[1]) for p in points])
    pace = Pace(statistics.fmean(p[2] for p in points), source, slope, len(points))
    if abs(pace.gain + pace.trx_per_s) > AGREE_SHARE * source:
        return None
    return pace


def lag_drain_per_s(seen: Seen, turn: float | None = None) -> float | None:
    """Seconds of lag worked off per second (positive), None when the lag is not draining: over
    the kept polls from ``turn`` (their slope), or since the previous poll with the transactions
    behind falling too."""
    points = _from_turn(seen.lags, turn)[-LAG_POLLS:]
    if len(points) >= DRAIN_MIN_POINTS and points[-1][1] < points[0][1]:
        slope = _slope([a for a, _ in points], [v for _, v in points])
        if slope <= -DRAIN_MIN_S_PER_S:
            return -slope
    if len(points) >= 2 and _trx_fell(seen):
        (a0, v0), (a1, v1) = points[-2], points[-1]
        if a1 > a0 and a1 - a0 <= 2 * RUN_GAP_INTERVALS * seen.inputs.interval_s:
            per_s = (v0 - v1) / (a1 - a0)
            if per_s >= DRAIN_MIN_S_PER_S:
                return per_s
    return None


def _trx_fell(seen: Seen) -> bool:
    """The transactions behind fell since the previous poll (unknown counts: no say)."""
    recent = seen.trx_behind[-2:]
    if len(recent) < 2 or recent[-1][0] != seen.at:
        return seen.inputs.metrics.trx_behind is None
    return recent[-1][1] < recent[0][1]


def trx_draining(seen: Seen) -> bool:
    """Without a lag figure: the transactions behind fell over the recent polls (the newest at
    least 5 % under the oldest, not up since the previous)."""
    recent = seen.trx_behind[-RECENT:]
    if len(recent) < DRAIN_MIN_POINTS:
        return False
    first, before, now = recent[0][1], recent[-2][1], recent[-1][1]
    return now <= before and now <= (1 - TRX_DRAIN_SHARE) * first


def lag_rise_s_per_s(seen: Seen, turn: float | None = None) -> float | None:
    """How fast the lag rises over the pace's polls from ``turn`` (s/s), when at least
    LAG_RISE_S_PER_S."""
    points = _from_turn(seen.lags, turn)
    if len(points) < PACE_MIN_POLLS or points[-1][0] != seen.at:
        return None
    slope = _slope([a for a, _ in points], [v for _, v in points])
    return slope if slope >= LAG_RISE_S_PER_S else None


def falls_poll_after_poll(seen: Seen) -> bool:
    recent = [trx for _, trx, _, _ in seen.pace[-RECENT:]]
    return len(recent) == RECENT and all(b < a for a, b in pairwise(recent))


def _slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
