"""Was a tick missed, and why: decided at the tick that follows the hole.

Ticks are dispatched on the interval; one that a worker ran is stored with its time. A tick
further than ``GAP_FACTOR`` intervals after the previous one means at least one was never
recorded. What the store knows of the hole names its reason, most specific first:

- ``slow``: the previous tick took longer than the interval, so the ticks dispatched while it
  ran were skipped (a cluster is never polled by two ticks at once);
- ``expired``: a tick waited in the queue past its interval and was dropped (every worker busy,
  or none running when it was due);
- ``not_polled``: nothing says: the worker that took the tick was lost mid-tick (killed, out of
  memory, its host gone), or no worker or beat was running. When the tick after the hole runs
  in another process than the one before it, both are named: with the poll owner engine that
  is a takeover after the owner before was lost.
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
    last_tick_by: str | None = None,
    now_by: str | None = None,
) -> TickGap | None:
    """The hole between the last recorded tick (epoch s) and this one at ``now``, if any.
    ``last_tick_s``: how long that tick took; ``expired_at``: the newest tick of the cluster
    that expired in the queue; ``last_tick_by``/``now_by``: the processes that ran the last
    tick and run this one (a poll owner that took the cluster over names the one it lost)."""
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
    elif last_tick_by and now_by and last_tick_by != now_by:
        reason = GapReason.NOT_POLLED
        detail = (
            f"{last_tick_by} stopped recording these ticks (stopped, killed or cut off from the"
            f" store) and {now_by} took the cluster over when its lease ran out"
        )
    else:
        reason = GapReason.NOT_POLLED
        detail = (
            "no worker recorded these ticks: the worker that took them was lost mid-tick,"
            " or no worker or beat was running"
        )
    return TickGap(last_tick_at, now, missed, reason, detail)
