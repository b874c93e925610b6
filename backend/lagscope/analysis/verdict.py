"""A channel's verdict: one class per poll (:func:`classify`), then a vote over a short window.

``verdict`` (docs/lag.md, "The figures") is computed over a short window, never from one sample, so
a single odd poll (a slow read, a replica briefly reconnecting) does not flip what the UI and alerts
say.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from lagscope.analysis.codes import LagSource, Verdict
from lagscope.collectors.snapshot import IoState

# A delayed replica's lag hovers just above SQL_Delay (the wait is counted from the source's
# commit, plus the apply itself and the poll's own timing): 2 s of slack keeps it "by design".
_DELAY_SLACK_S = 2
# Caught up also needs (almost) no backlog: a few transactions in flight are normal under any
# write load (the replica was read a moment after the source); more than that is only allowed
# when the source itself writes them within a second, so they are the next second's work.
CAUGHT_UP_MAX_TRX = 10
_CAUGHT_UP_BACKLOG_S = 1.0
_BACKLOG = frozenset({Verdict.RECEIVE_BOUND, Verdict.APPLY_BOUND})
# A thread that is not running, read from the server itself: a fact of this poll, not noise.
_NOT_RUNNING = frozenset({Verdict.STOPPED, Verdict.BROKEN})


@dataclass(frozen=True, slots=True)
class Observation:
    """One poll of one channel, reduced to what the verdict needs. None = not known this poll."""

    reachable: bool
    io_state: IoState | None = None
    sql_running: bool | None = None
    last_io_errno: int = 0
    last_sql_errno: int = 0
    sql_delay: int = 0
    sql_remaining_delay: int | None = None
    sql_thread_state: str = ""
    lag_s: float | None = None  # the best lag (see lag.best_lag)
    seconds_behind_source: int | None = None
    trx_behind: int | None = None
    not_received: int | None = None
    received_not_applied: int | None = None
    lag_source: LagSource | None = None
    source_rate: float | None = None  # trx/s on the source, to judge a backlog in seconds


def _broken(obs: Observation) -> bool:
    """A thread stopped by an error, as opposed to by an operator's STOP (ChannelStatus.broken).

    An IO thread that is CONNECTING with an error set is retrying a failed connection: that is
    broken, not "behind", until it reconnects.
    """
    sql_failed = obs.sql_running is False and obs.last_sql_errno != 0
    io_failed = (
        obs.io_state is not None and obs.io_state is not IoState.YES and obs.last_io_errno != 0
    )
    return sql_failed or io_failed


def _stopped(obs: Observation) -> bool:
    # CONNECTING / PREPARING with no error is a thread that is running and about to receive
    # (start-up, a reconnect after the source restarted), not a STOP: it falls through to the
    # lag and backlog checks, which say caught up or receive-bound as the figures show.
    return obs.sql_running is False or obs.io_state is IoState.NO


def _delayed_by_design(obs: Observation) -> bool:
    """SQL_Delay is set and the replica is waiting out the delay, not struggling."""
    if obs.sql_delay <= 0:
        return False
    return (
        obs.sql_remaining_delay is not None
        or obs.sql_thread_state.startswith("Waiting until")
        or (obs.lag_s is not None and obs.lag_s <= obs.sql_delay + _DELAY_SLACK_S)
    )


def small_backlog(trx_behind: int, source_rate: float | None) -> bool:
    """At most a handful of transactions, or what the source writes in 1 s."""
    if trx_behind <= CAUGHT_UP_MAX_TRX:
        return True
    return source_rate is not None and trx_behind <= source_rate * _CAUGHT_UP_BACKLOG_S


def _caught_up(obs: Observation, caught_up_s: float) -> bool:
    """A lag below the threshold AND no real backlog, whichever lag source is in use.

    A GTID backlog overrides any lag figure. With no GTID counts, the server's
    Seconds_Behind_Source alone is never enough: it reads 0 while the SQL thread waits on a
    relay log that the IO thread fills too slowly.
    """
    if obs.trx_behind is not None and not small_backlog(obs.trx_behind, obs.source_rate):
        return False
    if obs.lag_s is not None:
        if obs.trx_behind is None and obs.lag_source is LagSource.SBM:
            return False
        return obs.lag_s < caught_up_s
    return obs.trx_behind is not None


def _backlog_side(obs: Observation) -> Verdict:
    """Behind: is the backlog on the network/receive side or the apply side?"""
    if obs.not_received is not None and obs.received_not_applied is not None:
        if obs.not_received > obs.received_not_applied:
            return Verdict.RECEIVE_BOUND
        return Verdict.APPLY_BOUND
    # No GTID counts. SBM well below the lag means the SQL thread keeps catching up with a relay
    # log that the IO thread fills too slowly (the disagreement case); a NULL SBM while
    # running means the IO thread has not read from the source yet. Both point at receiving.
    sbm = obs.seconds_behind_source
    if sbm is None or (obs.lag_s is not None and sbm < obs.lag_s / 2):
        return Verdict.RECEIVE_BOUND
    return Verdict.APPLY_BOUND


def classify(obs: Observation, caught_up_s: float = 1.0) -> Verdict:
    """The class of one sample; the first rule that matches wins (the order is the priority)."""
    if not obs.reachable:
        return Verdict.UNREACHABLE
    if _broken(obs):
        return Verdict.BROKEN
    if _stopped(obs):
        return Verdict.STOPPED
    if _delayed_by_design(obs):
        return Verdict.DELAYED_BY_DESIGN
    if _caught_up(obs, caught_up_s):
        return Verdict.CAUGHT_UP
    return _backlog_side(obs)


def verdict(window: Sequence[Verdict], previous: Verdict | None = None) -> Verdict:
    """The verdict over ``window`` (the last few polls' classes, oldest first).

    A class held by a strict majority wins; with no majority the previous verdict stands (no
    flapping), or the newest class when there is none. With a window of 3, a change shows once
    two polls agree — except that a backlog or a stopped thread in the newest poll shows at
    once instead of a caught-up majority. An empty window keeps ``previous``; with neither it
    is a ValueError.
    """
    if not window:
        if previous is None:
            raise ValueError("verdict needs at least one class or a previous verdict")
        return previous
    newest = window[-1]
    leader, votes = Counter(window).most_common(1)[0]
    judged = leader if votes * 2 > len(window) else previous if previous is not None else newest
    if judged is Verdict.CAUGHT_UP and newest in _BACKLOG:
        # A backlog seen now is never outvoted into "caught up": the window smooths
        # between ways of being behind, and hides an odd caught-up poll, not a backlog.
        return newest
    if judged is Verdict.CAUGHT_UP and newest in _NOT_RUNNING:
        # Seen once: a duplicate-key error stopped the SQL thread and the sample still
        # said caught_up, outvoted by the two polls before it. A channel whose thread is not
        # running is never caught up.
        return newest
    return judged
