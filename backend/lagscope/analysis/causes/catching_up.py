"""Catching up: a backlog draining after what made it has ended, or after a tuning step.

Once the receiver's fsyncs are relaxed or parallel apply is turned on, no rule names anything
while the replica works off the backlog the cause left: without this state every such poll would
say *behind, cause not identified*. A channel is **catching up** when, in this poll,

- it is behind with a backlog, inside a lag episode;
- the episode's main cause is no longer named, or a step (a tracked parameter changed on the
  replica or its source) was taken inside the episode;
- and the backlog drains, or only keeps pace.

**The pace** judges that when it is known: over the last ``PACE_POLLS`` polls (five at least),
the replica's mean apply rate minus the source's, and the fall of its transactions behind (their
least-squares slope). The two measure one drain with their own noise, so their mean is the drain;
further apart than ``AGREE_SHARE`` of the source's rate they contradict each other and the pace is
not used. It **drains** when the backlog falls, apply outruns the source and the drain is at least
``DRAIN_SHARE`` of the source's rate ("barely draining" under ``DRAIN_MIN_S_PER_S`` seconds of lag
a second), unless the lag rose by ``LAG_RISE_S_PER_S`` or more over the same polls; it **keeps
pace, not draining** within ``FALL_SHARE`` of it either way, or so draining with the lag rising.
Keeping pace begins only while the backlog is not growing; once a run is under way it lasts until
the backlog grows by more than that, or is gone. A lag falling 0.1 s/s is lost in the lag figure's
noise, and a replica applying 2,150 trx/s against the source's 1,930 flickered between this state
and *not identified* every few polls; the pace shows such a drain steadily.

**The lag** judges without a pace (no rates, an idle source, too few polls, contradicting
figures): its lag fell by at least ``DRAIN_MIN_S_PER_S`` over the last polls kept (a least-squares
slope over ``LAG_POLLS``, three polls at least), or since the previous poll with the transactions
behind falling too (a drain that just began), or, without a lag figure, its transactions behind
fell over the recent polls. With a pace that still holds the growth before a drain that just
began, the lag's verdict counts when the transactions behind fell poll after poll.

Its finding says since when, after what (the step, or the main cause that ended), how fast it
drains or that it only keeps pace, the two rates and the ETA, the cause that made the backlog, and
what limits the drain when a rule still names something (one applier thread, the link …). It
replaces *not identified*; live rules stay listed after it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from types import MappingProxyType

from lagscope.analysis.causes import words
from lagscope.analysis.causes.model import Cause, EpisodeContext, Finding, StepSeen
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
CONFIDENCE = 0.8
# A run of catching-up polls keeps its start across this many poll intervals without one.
RUN_GAP_INTERVALS = 3
# What shapes the figure or is this state itself is never what limits the drain.
_NOT_A_LIMIT = frozenset(
    {Cause.UNEXPLAINED, Cause.CATCHING_UP, Cause.DELAYED_BY_DESIGN, Cause.CLOCK_SKEW}
)
_NO_MAIN = frozenset({Cause.UNEXPLAINED, Cause.CATCHING_UP})


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


def note_main_named(seen: Seen, findings: Sequence[Finding]) -> None:
    """Remember this poll if it named the episode's main cause: a drain after that cause ends
    begins here."""
    episode = seen.inputs.episode
    if episode is not None and any(f.cause is episode.main_cause for f in findings):
        seen.main_named_at = seen.at


def _turn(seen: Seen) -> float | None:
    """The last poll of this episode that named its main cause (None: none remembered)."""
    episode, at = seen.inputs.episode, seen.main_named_at
    if episode is None or at is None or at < episode.started_at:
        return None
    return at


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


def catching_up(seen: Seen, findings: Sequence[Finding], backlog: bool) -> Finding | None:
    """This poll's catching-up finding (None: not catching up). ``findings``: what the rules
    named in this poll; ``backlog``: there is a backlog to drain now. Keeps ``seen.catching``
    (the run's start) for the next poll."""
    found = _decide(seen, findings, backlog)
    if found is None:
        if seen.catching is not None and not _run_goes_on(seen):
            seen.catching = None
        return None
    return found


def _run_goes_on(seen: Seen) -> bool:
    last = seen.catching.get("at") if seen.catching else None
    gap = RUN_GAP_INTERVALS * max(seen.inputs.interval_s, 0.001)
    return isinstance(last, int | float) and seen.at - last <= gap


def _decide(seen: Seen, findings: Sequence[Finding], backlog: bool) -> Finding | None:
    episode = seen.inputs.episode
    if episode is None or not backlog or not seen.behind:
        return None
    live = [f for f in findings if f.cause not in _NOT_A_LIMIT]
    main = episode.main_cause if episode.main_cause not in _NO_MAIN else None
    step = _step_in(episode)
    ended = main is not None and all(f.cause is not main for f in live)
    if not ended and step is None:
        return None
    going = seen.catching is not None and _run_goes_on(seen)
    # After a cause that ended, only the polls from its last one measure the drain.
    turn = _turn(seen) if ended else None
    judged = _how(seen, pace_of(seen, turn), going, turn)
    if judged is None:
        return None
    how, per_s, pace = judged
    since = seen.at
    if going and seen.catching is not None:
        since = float(seen.catching.get("since", seen.at))
    seen.catching = {"since": since, "at": seen.at}
    # The strongest rule still named (the first of equals, in the rules' order).
    limit = max(live, key=lambda f: f.confidence) if live else None
    return _finding(seen, episode, since, per_s, step, main, limit, how, pace, turn)


def _how(
    seen: Seen, pace: Pace | None, going: bool, turn: float | None
) -> tuple[str, float | None, Pace | None] | None:
    """How the backlog goes in this poll, its drain (s of lag per s) and the pace (None: not
    catching up). ``going``: a run is under way.

    A known pace decides: over ten polls it is steadier than the lag's slope, and a lag figure
    wandering by half a second made the one-poll rule below read "draining 0.9 s/s" out of a
    replica that only kept pace. The lag rules still catch a drain that just began while the
    pace's window holds the growth before it, when the backlog falls poll after poll."""
    if pace is not None:
        if pace.draining and lag_rise_s_per_s(seen, turn) is None:
            how = DRAINING if pace.drain_s_per_s >= BARELY_S_PER_S else BARELY_DRAINING
            return how, pace.drain_s_per_s, pace
        if pace.draining:
            return NOT_DRAINING, pace.drain_s_per_s, pace
        if pace.keeping_pace:
            # It begins only while the backlog is not growing; once under way it lasts until
            # the backlog clearly grows: a drain near the source's rate wanders across zero
            # from one window to the next.
            if going or pace.drain_per_s >= 0:
                return NOT_DRAINING, pace.drain_s_per_s, pace
            return None
        per_s = lag_drain_per_s(seen, turn)
        if per_s is not None and _falls_poll_after_poll(seen):
            return DRAINING, per_s, None
        return None
    per_s = lag_drain_per_s(seen, turn)
    if per_s is not None:
        return DRAINING, per_s, None
    if seen.inputs.metrics.lag_s is None and trx_draining(seen):
        return DRAINING, None, None
    return None


def lag_rise_s_per_s(seen: Seen, turn: float | None = None) -> float | None:
    """How fast the lag rises over the pace's polls from ``turn`` (s/s), when at least
    LAG_RISE_S_PER_S."""
    points = _from_turn(seen.lags, turn)
    if len(points) < PACE_MIN_POLLS or points[-1][0] != seen.at:
        return None
    slope = _slope([a for a, _ in points], [v for _, v in points])
    return slope if slope >= LAG_RISE_S_PER_S else None


def _falls_poll_after_poll(seen: Seen) -> bool:
    recent = [trx for _, trx, _, _ in seen.pace[-RECENT:]]
    return len(recent) == RECENT and all(b < a for a, b in pairwise(recent))


def _step_in(episode: EpisodeContext) -> StepSeen | None:
    step = episode.step
    return step if step is not None and step.at >= episode.started_at else None


def _slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread


def clock(epoch_s: float) -> str:
    """``04:44:03 UTC``: a time inside a sentence."""
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%H:%M:%S UTC")


def iso(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _eta_s(seen: Seen, per_s: float | None) -> float | None:
    """The status's ETA while it says the replica gains; else the lag over its drain rate."""
    metrics = seen.inputs.metrics
    eta = metrics.eta
    if eta is not None and eta.catching_up and eta.seconds is not None:
        return eta.seconds
    if per_s and metrics.lag_s is not None:
        return metrics.lag_s / per_s
    return None


def _s_per_s(value: float) -> str:
    """``1.4 s/s``; under BARELY_S_PER_S two decimals, so "barely draining 0.19 s/s" does not
    read as the 0.2 s/s of a drain."""
    return f"{value:.1f} s/s" if value >= BARELY_S_PER_S else f"{value:.2f} s/s"


_HEADS = {
    DRAINING: "is catching up",
    BARELY_DRAINING: "is keeping pace but barely draining",
    NOT_DRAINING: "is keeping pace, not draining,",
}


def _finding(
    seen: Seen,
    episode: EpisodeContext,
    since: float,
    per_s: float | None,
    step: StepSeen | None,
    main: Cause | None,
    limit: Finding | None,
    how: str,
    pace: Pace | None,
    turn: float | None,
) -> Finding:
    metrics = seen.inputs.metrics
    after = (
        f"after {step.what} on {step.instance} ({clock(step.at)})"
        if step is not None
        else f"after {main.words if main else 'its cause'} ended"
    )
    rates = (
        f"apply {words.per_s(pace.apply_rate)} vs source {words.per_s(pace.source_rate)}"
        if pace is not None
        else None
    )
    figures = []
    if metrics.lag_s is not None:
        figures.append(f"{words.seconds(metrics.lag_s)} behind")
    rising = lag_rise_s_per_s(seen, turn) if how == NOT_DRAINING else None
    if rising is not None:
        figures.append(f"its lag still growing {_s_per_s(rising)}")
    if how == NOT_DRAINING:
        if rates is not None:
            figures.append(rates)
    elif per_s is not None:
        figures.append(f"draining {_s_per_s(per_s)}" + (f" ({rates})" if rates else ""))
    elif metrics.trx_behind is not None:
        figures.append(f"{words.count(metrics.trx_behind)} transactions to apply, falling")
    eta_s = None if how == NOT_DRAINING else _eta_s(seen, per_s)
    if eta_s is not None:
        figures.append(f"ETA {words.seconds(eta_s)}")
    elif how == NOT_DRAINING:
        figures.append("no ETA at this pace")
    made = (
        f"the backlog was made by {main.words}"
        if main is not None
        else "what made the backlog was not identified"
    )
    limited = f"; what limits the drain: {limit.cause.words}" if limit is not None else ""
    sentence = (
        f"{seen.name} {_HEADS[how]} since {clock(since)} {after}: {', '.join(figures)}; "
        f"{made}{limited}."
    )
    if limit is not None:
        action = limit.action
    elif how == DRAINING:
        action = (
            "Nothing to do while it drains; the episode shows what made the backlog. If it "
            "stops gaining, look at the replica's thread states and the source's write rate."
        )
    else:
        action = (
            "At this pace the backlog drains slowly or not at all: raise the replica's apply "
            "capacity (parallel apply, lighter durability) or let the source write less, and "
            "record the change as a journal step; the episode shows what made the backlog."
        )
    return Finding(
        Cause.CATCHING_UP,
        CONFIDENCE,
        sentence,
        action,
        MappingProxyType(
            {
                "since": iso(since),
                "after": "step" if step is not None else "cause_ended",
                "step": step.what if step is not None else None,
                "step_instance": step.instance if step is not None else None,
                "step_at": iso(step.at) if step is not None else None,
                "main_cause": main.label if main is not None else None,
                "main_cause_words": main.words if main is not None else None,
                "limit": limit.cause.label if limit is not None else None,
                "limit_words": limit.cause.words if limit is not None else None,
                "pace": how,
                "drain_s_per_s": round(per_s, 3) if per_s is not None else None,
                "eta_s": round(eta_s, 1) if eta_s is not None else None,
                "lag_s": metrics.lag_s,
                "trx_behind": metrics.trx_behind,
                "apply_rate": round(pace.apply_rate, 1) if pace is not None else None,
                "source_rate": round(pace.source_rate, 1) if pace is not None else None,
                "trx_drain_per_s": round(-pace.trx_per_s, 1) if pace is not None else None,
                "pace_polls": pace.polls if pace is not None else None,
                "lag_rise_s_per_s": round(rising, 3) if rising is not None else None,
                "episode_started_at": iso(episode.started_at),
            }
        ),
    )
