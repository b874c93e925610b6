"""Catching up: a backlog draining after what made it has ended, or after a tuning step.

Once the receiver's fsyncs are relaxed or parallel apply is turned on, no rule names anything
while the replica works off the backlog the cause left: without this state every such poll would
say *behind, cause not identified*. A channel is **catching up** when, in this poll,

- it is behind with a backlog, inside a lag episode;
- the backlog drains: its lag fell by at least ``DRAIN_MIN_S_PER_S`` over the last polls kept
  (a least-squares slope over ``LAG_POLLS``, three polls at least), or since the previous poll
  with the transactions behind falling too (a drain that just began: the slope still holds the
  polls before it), or, without a lag figure, its transactions behind fell over the recent polls;
- and the episode's main cause is no longer named, or a step (a tracked parameter changed on the
  replica or its source) was taken inside the episode.

Its finding says since when, after what (the step, or the main cause that ended), how fast it
drains and the ETA, the cause that made the backlog, and what limits the drain when a rule still
names something (one applier thread, the link …). It replaces *not identified*; live rules stay
listed after it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from datetime import UTC, datetime
from types import MappingProxyType

from lagscope.analysis.causes import words
from lagscope.analysis.causes.history import RECENT, Seen
from lagscope.analysis.causes.model import Cause, EpisodeContext, Finding, StepSeen

# A lag falling at least this fast (s of lag per s) drains; a steady replica wanders far less.
DRAIN_MIN_S_PER_S = 0.2
DRAIN_MIN_POINTS = 3
# Transactions behind must fall by at least this share over the recent polls to count.
TRX_DRAIN_SHARE = 0.05
CONFIDENCE = 0.8
# A run of catching-up polls keeps its start across this many poll intervals without one.
RUN_GAP_INTERVALS = 3
# What shapes the figure or is this state itself is never what limits the drain.
_NOT_A_LIMIT = frozenset(
    {Cause.UNEXPLAINED, Cause.CATCHING_UP, Cause.DELAYED_BY_DESIGN, Cause.CLOCK_SKEW}
)
_NO_MAIN = frozenset({Cause.UNEXPLAINED, Cause.CATCHING_UP})


def lag_drain_per_s(seen: Seen) -> float | None:
    """Seconds of lag worked off per second (positive), None when the lag is not draining: over
    the kept polls (their slope), or since the previous poll with the transactions behind
    falling too."""
    points = seen.lags
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
    per_s = lag_drain_per_s(seen)
    if per_s is None and (seen.inputs.metrics.lag_s is not None or not trx_draining(seen)):
        return None
    live = [f for f in findings if f.cause not in _NOT_A_LIMIT]
    main = episode.main_cause if episode.main_cause not in _NO_MAIN else None
    step = _step_in(episode)
    ended = main is not None and all(f.cause is not main for f in live)
    if not ended and step is None:
        return None
    since = seen.at
    if seen.catching is not None and _run_goes_on(seen):
        since = float(seen.catching.get("since", seen.at))
    seen.catching = {"since": since, "at": seen.at}
    limit = live[0] if live else None
    return _finding(seen, episode, since, per_s, step, main, limit)


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


def _finding(
    seen: Seen,
    episode: EpisodeContext,
    since: float,
    per_s: float | None,
    step: StepSeen | None,
    main: Cause | None,
    limit: Finding | None,
) -> Finding:
    metrics = seen.inputs.metrics
    after = (
        f"after {step.what} on {step.instance} ({clock(step.at)})"
        if step is not None
        else f"after {main.words if main else 'its cause'} ended"
    )
    figures = []
    if metrics.lag_s is not None:
        figures.append(f"{words.seconds(metrics.lag_s)} behind")
    if per_s is not None:
        figures.append(f"draining {per_s:.1f} s/s")
    elif metrics.trx_behind is not None:
        figures.append(f"{words.count(metrics.trx_behind)} transactions to apply, falling")
    eta_s = _eta_s(seen, per_s)
    if eta_s is not None:
        figures.append(f"ETA {words.seconds(eta_s)}")
    made = (
        f"the backlog was made by {main.words}"
        if main is not None
        else "what made the backlog was not identified"
    )
    limited = f"; what limits the drain: {limit.cause.words}" if limit is not None else ""
    sentence = (
        f"{seen.name} is catching up since {clock(since)} {after}: {', '.join(figures)}; "
        f"{made}{limited}."
    )
    action = (
        limit.action
        if limit is not None
        else "Nothing to do while it drains; the episode shows what made the backlog. If it "
        "stops gaining, look at the replica's thread states and the source's write rate."
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
                "drain_s_per_s": round(per_s, 3) if per_s is not None else None,
                "eta_s": round(eta_s, 1) if eta_s is not None else None,
                "lag_s": metrics.lag_s,
                "trx_behind": metrics.trx_behind,
                "episode_started_at": iso(episode.started_at),
            }
        ),
    )
