"""Is a replica usable for reads now: the lag check proxies and throttlers ask
(``GET /api/v1/check/{cluster}/{replica}``), judged from the polls the store holds.

Pure: the caller hands each channel's recent polls (oldest first) as stored, the time now and
when data counts as stale; nothing here reads a server or the store.

- **Stale never reads as healthy.** No poll newer than ``stale_after_s`` (three poll intervals,
  as the status page says "stale"): Lagscope cannot judge, ``stale`` (or ``not_polled`` when it
  never polled the channel) — an HTTP 503, not a 200 and not a 429.
- **A fact of the newest poll** makes the replica unusable whatever its lag: the server did not
  answer (``unreachable``), a replication thread is stopped (``stopped``; ``broken`` when an
  error stopped it or the IO thread retries a failed connection), or no lag figure at all
  (``lag_unknown``).
- **The lag, with hysteresis.** Over ``max_lag_s`` the replica is ``lagging``; once it was, it
  is usable again only when its lag is at most ``recover_lag_s`` (``recovering`` in between),
  so a lag hovering around the threshold does not flap a proxy's server up and down.

The hysteresis keeps no state between checks: it is a Schmitt trigger run over the channel's
last polls (``window`` of them, oldest first), starting from "usable". So every API process,
and a restarted one, answers alike from the same stored polls. A poll that could not be judged on
its lag (unreachable, stopped, no lag figure) counts as above ``max_lag_s``. Walking back from
the newest poll, the first poll outside the band (``recover_lag_s``, ``max_lag_s``] decides: above
it, still unusable; at or under ``recover_lag_s``, usable. A window whose polls all sit inside the
band is usable: the lag has stayed under ``max_lag_s`` for the whole window (30 polls by default),
which is a time-based recovery on top of the level-based one.

A replica with several channels is usable when every channel is; a cluster when every replica
is. The worst state decides (:data:`SEVERITY`): anything known to be unusable (HTTP 429) before
anything Lagscope cannot judge (503), before usable (200).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class CheckVerdict(StrEnum):
    USABLE = "usable"
    # Known unusable (HTTP 429).
    BROKEN = "broken"
    STOPPED = "stopped"
    UNREACHABLE = "unreachable"
    NO_REPLICATION = "no_replication"
    LAG_UNKNOWN = "lag_unknown"
    LAGGING = "lagging"
    RECOVERING = "recovering"
    # Lagscope cannot judge (HTTP 503).
    STALE = "stale"
    NOT_POLLED = "not_polled"
    NO_REPLICAS = "no_replicas"


# Worst first: the first of these among a replica's channels (a cluster's replicas) decides.
SEVERITY: tuple[CheckVerdict, ...] = (
    CheckVerdict.BROKEN,
    CheckVerdict.STOPPED,
    CheckVerdict.UNREACHABLE,
    CheckVerdict.NO_REPLICATION,
    CheckVerdict.LAG_UNKNOWN,
    CheckVerdict.LAGGING,
    CheckVerdict.RECOVERING,
    CheckVerdict.STALE,
    CheckVerdict.NOT_POLLED,
    CheckVerdict.NO_REPLICAS,
    CheckVerdict.USABLE,
)
CANNOT_JUDGE = frozenset({CheckVerdict.STALE, CheckVerdict.NOT_POLLED, CheckVerdict.NO_REPLICAS})

# In words, for the answer's ``reason``; {lag}, {max_lag} and {recover_lag} are filled in.
_REASONS = {
    CheckVerdict.USABLE: "lag {lag} is within max_lag {max_lag}",
    CheckVerdict.BROKEN: "replication is broken: a thread stopped on an error, or the IO thread "
    "keeps failing to connect",
    CheckVerdict.STOPPED: "replication is stopped (a replication thread is not running)",
    CheckVerdict.UNREACHABLE: "the replica did not answer Lagscope's newest poll",
    CheckVerdict.NO_REPLICATION: "this server has no replication channel",
    CheckVerdict.LAG_UNKNOWN: "the newest poll gave no lag figure",
    CheckVerdict.LAGGING: "lag {lag} is over max_lag {max_lag}",
    CheckVerdict.RECOVERING: "lag {lag} is under max_lag {max_lag} but has not come down to "
    "recover_lag {recover_lag} since it was over",
    CheckVerdict.STALE: "no recent poll: Lagscope cannot judge (is its worker polling?)",
    CheckVerdict.NOT_POLLED: "never polled yet: Lagscope cannot judge",
    CheckVerdict.NO_REPLICAS: "the cluster has no enabled replica to judge",
}


def http_status(verdict: CheckVerdict) -> int:
    """200 usable, 503 when Lagscope cannot judge, 429 when the replica is not usable."""
    if verdict is CheckVerdict.USABLE:
        return 200
    return 503 if verdict in CANNOT_JUDGE else 429


@dataclass(frozen=True, slots=True)
class Thresholds:
    """``max_lag_s`` > 0 and 0 ≤ ``recover_lag_s`` ≤ ``max_lag_s`` (ValueError otherwise)."""

    max_lag_s: float
    recover_lag_s: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.max_lag_s) and self.max_lag_s > 0):
            raise ValueError("max_lag must be a positive number of seconds")
        if not (math.isfinite(self.recover_lag_s) and 0 <= self.recover_lag_s <= self.max_lag_s):
            raise ValueError("recover_lag must be between 0 and max_lag")


def thresholds(max_lag_s: float, recover_lag_s: float | None, recover_ratio: float) -> Thresholds:
    """The thresholds asked for; ``recover_lag_s`` defaults to ``recover_ratio`` × max_lag."""
    if recover_lag_s is None:
        recover_lag_s = max_lag_s * recover_ratio
    return Thresholds(max_lag_s, recover_lag_s)


@dataclass(frozen=True, slots=True)
class Poll:
    """One stored poll of a channel, reduced to what the check needs.

    ``answered``: the server answered (a poll without an answer is stored with no readings);
    ``sql_running`` / ``io_running``: the threads as read (None: not read); ``broken``: the
    stored verdict says a thread stopped on an error; ``caught_up``: the stored verdict says
    caught up (a lag of None then means nothing is missing, not "unknown")."""

    at: datetime
    lag_s: float | None
    answered: bool = True
    sql_running: bool | None = True
    io_running: bool | None = True
    broken: bool = False
    caught_up: bool = False


def poll_fault(poll: Poll) -> CheckVerdict | None:
    """What makes this one poll unusable whatever the lag; None when its lag decides."""
    if not poll.answered:
        return CheckVerdict.UNREACHABLE
    if poll.broken:
        return CheckVerdict.BROKEN
    if poll.sql_running is False or poll.io_running is False:
        return CheckVerdict.STOPPED
    if poll_lag(poll) is None:
        return CheckVerdict.LAG_UNKNOWN
    return None


def poll_lag(poll: Poll) -> float | None:
    """The lag the check judges: the stored lag, 0 for a caught-up poll without one."""
    if poll.lag_s is not None:
        return poll.lag_s
    return 0.0 if poll.caught_up else None


def recovered(lags: Sequence[float | None], limits: Thresholds) -> bool:
    """The hysteresis over a window of lags, oldest first (None: could not be judged on its
    lag, counted as above ``max_lag_s``): a Schmitt trigger started from "usable"."""
    usable = True
    for lag in lags:
        if lag is None or lag > limits.max_lag_s:
            usable = False
        elif lag <= limits.recover_lag_s:
            usable = True
    return usable


@dataclass(frozen=True, slots=True)
class ChannelJudgement:
    verdict: CheckVerdict
    lag_s: float | None  # the newest poll's lag (None: no poll, or it had none)
    sample_at: datetime | None  # the newest poll's time


def judge_channel(
    polls: Sequence[Poll],
    now: datetime,
    stale_after_s: float,
    limits: Thresholds,
    last_sample_at: datetime | None = None,
) -> ChannelJudgement:
    """One channel from its recent polls, oldest first. ``last_sample_at``: the newest poll
    stored when ``polls`` is empty (none recent), None when it was never polled."""
    if not polls:
        verdict = CheckVerdict.STALE if last_sample_at is not None else CheckVerdict.NOT_POLLED
        return ChannelJudgement(verdict, None, last_sample_at)
    newest = polls[-1]
    lag = poll_lag(newest)
    if (now - newest.at).total_seconds() > stale_after_s:
        return ChannelJudgement(CheckVerdict.STALE, lag, newest.at)
    fault = poll_fault(newest)
    if fault is not None:
        return ChannelJudgement(fault, lag, newest.at)
    assert lag is not None  # no fault: the poll has a lag
    if lag > limits.max_lag_s:
        return ChannelJudgement(CheckVerdict.LAGGING, lag, newest.at)
    window = [None if poll_fault(p) else poll_lag(p) for p in polls]
    if recovered(window, limits):
        return ChannelJudgement(CheckVerdict.USABLE, lag, newest.at)
    return ChannelJudgement(CheckVerdict.RECOVERING, lag, newest.at)


def worst(verdicts: Iterable[CheckVerdict]) -> CheckVerdict | None:
    """The verdict that decides for a set of channels (or replicas); None for none."""
    found = set(verdicts)
    return next((v for v in SEVERITY if v in found), None)


def reason(verdict: CheckVerdict, lag_s: float | None, limits: Thresholds) -> str:
    """The verdict in words, with the figures it was judged on."""
    return _REASONS[verdict].format(
        lag=_seconds(lag_s), max_lag=_seconds(limits.max_lag_s),
        recover_lag=_seconds(limits.recover_lag_s),
    )  # fmt: skip


def _seconds(value: float | None) -> str:
    return "unknown" if value is None else f"{value:g} s"
