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

from collections.abc import Sequence

from lagscope.analysis.causes.catching_up_finding import Drain, catching_up_finding
from lagscope.analysis.causes.catching_up_pace import (
    BARELY_DRAINING,
    BARELY_S_PER_S,
    DRAINING,
    NOT_DRAINING,
    RUN_GAP_INTERVALS,
    Pace,
    falls_poll_after_poll,
    lag_drain_per_s,
    lag_rise_s_per_s,
    pace_of,
    trx_draining,
)
from lagscope.analysis.causes.model import Cause, EpisodeContext, Finding, StepSeen
from lagscope.analysis.causes.seen import Seen

# What shapes the figure or is this state itself is never what limits the drain.
_NOT_A_LIMIT = frozenset(
    {Cause.UNEXPLAINED, Cause.CATCHING_UP, Cause.DELAYED_BY_DESIGN, Cause.CLOCK_SKEW}
)
_NO_MAIN = frozenset({Cause.UNEXPLAINED, Cause.CATCHING_UP})


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
    drain = Drain(since, how, per_s, pace, step, main, limit, turn)
    return catching_up_finding(seen, episode, drain)


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
        if per_s is not None and falls_poll_after_poll(seen):
            return DRAINING, per_s, None
        return None
    per_s = lag_drain_per_s(seen, turn)
    if per_s is not None:
        return DRAINING, per_s, None
    if seen.inputs.metrics.lag_s is None and trx_draining(seen):
        return DRAINING, None, None
    return None


def _step_in(episode: EpisodeContext) -> StepSeen | None:
    step = episode.step
    return step if step is not None and step.at >= episode.started_at else None
