"""Was a tick missed, and why: decided at the tick that follows the hole.

Ticks are dispatched on the interval; one that a worker ran is stored with its time. A tick
further than ``GAP_FACTOR`` intervals after the previous one means at least one was never
recorded. What the store knows of the hole names its reason, most specific first:

- ``slow``: the previous tick took longer than the interval, so the ticks dispatched while it
  ran were skipped (a cluster is never polled by two ticks at once);
- ``expired``: a tick waited in the queue past its interval and was dropped (every worker busy,
  or none running when it was due);
- ``not_polled``: nothing says: the worker that took the tick was lost mid-tick (killed, out of
  memory, its host gone), or no worker or beat was running.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# Dispatch jitter moves a tick by a fraction of its interval; a whole missing tick moves the
# next one by a whole interval. 1.75 tells the two apart at any interval.
GAP_FACTOR = 1.75


class GapReason(StrEnum):
    SLOW = "slow"
    EXPIRED = "expired"
    NOT_POLLED = "not_polled"


@dataclass(frozen=True, slots=True)
class TickGap:
    started_at: float
    ended_at: float
    missed: int
    reason: GapReason
    detail: str


def tick_gap(
    last_tick_at: float | None,
    last_tick_s: float | None,
    expired_at: float | None,
    now: float,
    interval_s: float,
) -> TickGap | None:
    """The hole between the last recorded tick (epoch s) and this one at ``now``, if any.
    ``last_tick_s``: how long that tick took; ``expired_at``: the newest tick of the cluster
    that expired in the queue."""
    if last_tick_at is None or now - last_tick_at <= interval_s * GAP_FACTOR:
        return None
    width = now - last_tick_at
    missed = max(1, round(width / interval_s) - 1)
    if last_tick_s is not None and last_tick_s > interval_s:
        reason = GapReason.SLOW
        detail = (
            f"the previous tick took {last_tick_s:.1f} s of a {interval_s:g} s interval: the"
            " ticks due while it ran were skipped"
        )
    elif expired_at is not None and last_tick_at < expired_at <= now:
        reason = GapReason.EXPIRED
        detail = (
            "ticks expired in the queue before a worker took them: every worker was busy,"
            " or none was running"
        )
    else:
        reason = GapReason.NOT_POLLED
        detail = (
            "no worker recorded these ticks: the worker that took them was lost mid-tick,"
            " or no worker or beat was running"
        )
    return TickGap(last_tick_at, now, missed, reason, detail)
