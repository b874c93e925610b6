"""What a replica's applier cost over a window before a step, as the store kept it: each
figure's mean over the window's polls with a backlog (the capacity's polls), the fsync counts
over those of them whose fsyncs were timed.

Read by the durability prediction (:mod:`lagscope.analysis.durability`), which prices what
relaxing a setting takes out of this cost.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lagscope.analysis.drain import has_backlog
from lagscope.analysis.impact import Point, Window, window_stats


@dataclass(frozen=True, slots=True)
class ApplierCost:
    """A replica's window before the change, as the store kept it (means over the window;
    None where not read). ``*_fsync_s_per_s``: seconds in fsync per second by file class."""

    rate: float | None  # trx/s while behind (the window's capacity)
    busy: float | None  # mean threads holding a transaction
    relay_waiting: float | None  # mean threads waiting for the relay log
    binlog_fsync_s_per_s: float | None = None
    redo_fsync_s_per_s: float | None = None
    binlog_fsyncs_per_s: float | None = None  # ≈ Binlog_group_commits with sync_binlog=1
    redo_fsyncs_per_s: float | None = None  # Innodb_os_log_fsyncs, else Innodb_data_fsyncs
    fsync_latency_s: float | None = None  # over the timed classes, when one class is missing
    relay_log_fsync_s_per_s: float | None = None  # the receiver's relay-log fsyncs
    # Share of the window's samples whose backlog was mostly not yet received.
    receive_bound: float | None = None


@dataclass(frozen=True, slots=True)
class CostPoll:
    """One poll of a replica channel with its instance's readings at the same moment (None:
    not read): the channel's backlog and apply rate, the applier's threads, the fsync figures."""

    point: Point
    busy: float | None = None
    relay_waiting: float | None = None
    binlog_fsync_s_per_s: float | None = None
    redo_fsync_s_per_s: float | None = None
    fsync_latency_s: float | None = None
    relay_log_fsync_s_per_s: float | None = None
    binlog_fsyncs_per_s: float | None = None
    redo_fsyncs_per_s: float | None = None


def window_cost(polls: Sequence[CostPoll]) -> ApplierCost:
    """The cost of a window: each figure's mean over the polls with a backlog (the capacity's
    polls, at least 3 of them, else no rate); the fsync counts over those of them whose fsyncs
    were timed, so a count and its time match."""
    behind = [p for p in polls if has_backlog(p.point)]
    everything = Window(-math.inf, math.inf)
    rate = window_stats([p.point for p in polls], everything).capacity
    timed = [p for p in behind if p.binlog_fsync_s_per_s is not None] or behind

    def mean(of: Sequence[CostPoll], read: Callable[[CostPoll], float | None]) -> float | None:
        known = [v for p in of if (v := read(p)) is not None]
        return statistics.fmean(known) if known else None

    # Mostly not yet received: not received > received, not applied (backlog − not received).
    counted = [p.point for p in behind if p.point.not_received is not None and p.point.backlog]
    receive_bound = None
    if counted:
        receive_bound = statistics.fmean(
            1.0 if 2 * (p.not_received or 0) > (p.backlog or 0) else 0.0 for p in counted
        )
    return ApplierCost(
        rate=rate,
        busy=mean(behind, lambda p: p.busy),
        relay_waiting=mean(behind, lambda p: p.relay_waiting),
        binlog_fsync_s_per_s=mean(behind, lambda p: p.binlog_fsync_s_per_s),
        redo_fsync_s_per_s=mean(behind, lambda p: p.redo_fsync_s_per_s),
        binlog_fsyncs_per_s=mean(timed, lambda p: p.binlog_fsyncs_per_s),
        redo_fsyncs_per_s=mean(timed, lambda p: p.redo_fsyncs_per_s),
        fsync_latency_s=mean(behind, lambda p: p.fsync_latency_s),
        relay_log_fsync_s_per_s=mean(behind, lambda p: p.relay_log_fsync_s_per_s),
        receive_bound=receive_bound,
    )
