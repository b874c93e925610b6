"""Per-second rates from monotonic counters, and the instance counter rates (docs/lag.md).

Counter names are those of :data:`lagscope.collectors.counters.TRACKED_COUNTERS`. A counter
that goes down between two polls was reset (server restart, ``RESET MASTER``, ``FLUSH STATUS``):
its rate is unknown for that interval, never negative and never a wrap-around guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

_MICROS_PER_S = 1_000_000
_PICOS_PER_S = 1e12
# collectors/file_io.py's pseudo-counters: fsync operations and their time per file class.
_FSYNC_CLASSES = ("fsync_binlog", "fsync_relaylog", "fsync_redo")


def rate(
    prev: float | int | None,
    prev_at: float | None,
    cur: float | int | None,
    cur_at: float,
) -> float | None:
    """``(cur − prev) / (cur_at − prev_at)`` per second, or None when it cannot be trusted.

    None when a reading or time is missing, when time did not move forward (a clock step or a
    replayed poll), or when the counter went down (a reset).
    """
    if prev is None or prev_at is None or cur is None:
        return None
    elapsed = cur_at - prev_at
    if elapsed <= 0 or cur < prev:
        return None
    return (cur - prev) / elapsed


@dataclass(frozen=True, slots=True)
class CounterRates:
    """One instance's counter rates over one poll interval; None when not computable."""

    commits_per_s: float | None = None
    binlog_commits_per_s: float | None = None
    binlog_group_commits_per_s: float | None = None
    log_fsyncs_per_s: float | None = None
    data_fsyncs_per_s: float | None = None
    data_written_per_s: float | None = None  # bytes
    log_written_per_s: float | None = None  # bytes
    dblwr_pages_per_s: float | None = None
    # Seconds spent in fsync per second, per file class (performance_schema; None where off),
    # and the mean time of one fsync over those classes in this interval.
    binlog_fsync_s_per_s: float | None = None
    relay_log_fsync_s_per_s: float | None = None
    redo_fsync_s_per_s: float | None = None
    fsync_latency_s: float | None = None
    # Gauges, read from the newer poll alone: they survive a restart and need no previous poll.
    semi_sync_avg_wait_s: float | None = None
    semi_sync_on: bool | None = None
    redo_log_enabled: bool | None = None

    @property
    def commits_per_group(self) -> float | None:
        """Mean binlog group size (MariaDB only: MySQL has no ``Binlog_group_commits``)."""
        commits, groups = self.binlog_commits_per_s, self.binlog_group_commits_per_s
        if commits is None or groups is None or commits <= 0 or groups <= 0:
            return None
        return commits / groups


def _commit_counter(cur: Mapping[str, int]) -> str:
    """The counter that best counts transactions on this server.

    ``Binlog_commits`` (MariaDB) counts each binlogged transaction once. MySQL has no such
    counter; there ``Handler_commit`` is used: it over-counts (one per engine and per statement,
    read-only autocommit statements included) but, unlike ``Com_commit``, it sees autocommit
    transactions, which are most of a typical write load (docs/replication.md, "Status counters").
    """
    return "Binlog_commits" if "Binlog_commits" in cur else "Handler_commit"


def _restarted(prev: Mapping[str, int], cur: Mapping[str, int]) -> bool:
    """Uptime went down: the server restarted and every counter started again from zero."""
    before, after = prev.get("Uptime"), cur.get("Uptime")
    return before is not None and after is not None and after < before


def _flag(cur: Mapping[str, int], *names: str) -> bool | None:
    """An ON/OFF status read as 1/0 by the collector; the first of ``names`` present wins."""
    value = next((cur[name] for name in names if name in cur), None)
    return None if value is None else value != 0


def _semi_sync_wait_s(cur: Mapping[str, int]) -> float | None:
    # Only one plugin generation can be loaded, so at most one of the two names is present.
    names = ("Rpl_semi_sync_source_tx_avg_wait_time", "Rpl_semi_sync_master_tx_avg_wait_time")
    micros = next((cur[name] for name in names if name in cur), None)
    return None if micros is None else micros / _MICROS_PER_S


def _seconds(picos_per_s: float | None) -> float | None:
    return None if picos_per_s is None else picos_per_s / _PICOS_PER_S


def _fsync_latency_s(prev: Mapping[str, int], cur: Mapping[str, int]) -> float | None:
    """Mean seconds per fsync over the durability classes in this interval (None: none ran)."""
    ops = picos = 0
    for prefix in _FSYNC_CLASSES:
        before_ops, before_ps = prev.get(prefix + "_ops"), prev.get(prefix + "_ps")
        after_ops, after_ps = cur.get(prefix + "_ops"), cur.get(prefix + "_ps")
        if None in (before_ops, before_ps, after_ops, after_ps):
            continue
        assert before_ops is not None and after_ops is not None  # for the type checker
        assert before_ps is not None and after_ps is not None
        if after_ops < before_ops or after_ps < before_ps:
            continue  # truncated (TRUNCATE TABLE on the summary) or reset
        ops += after_ops - before_ops
        picos += after_ps - before_ps
    return picos / ops / _PICOS_PER_S if ops > 0 else None


def counter_rates(
    prev: Mapping[str, int] | None,
    prev_at: float | None,
    cur: Mapping[str, int],
    cur_at: float,
) -> CounterRates:
    """Rates between two polls of one instance (``*_at`` in epoch seconds, poller clock)."""
    gauges = CounterRates(
        semi_sync_avg_wait_s=_semi_sync_wait_s(cur),
        semi_sync_on=_flag(cur, "Rpl_semi_sync_source_status", "Rpl_semi_sync_master_status"),
        redo_log_enabled=_flag(cur, "Innodb_redo_log_enabled"),
    )
    if prev is None or prev_at is None or _restarted(prev, cur):
        return gauges

    def per_s(name: str) -> float | None:
        return rate(prev.get(name), prev_at, cur.get(name), cur_at)

    return CounterRates(
        commits_per_s=per_s(_commit_counter(cur)),
        binlog_commits_per_s=per_s("Binlog_commits"),
        binlog_group_commits_per_s=per_s("Binlog_group_commits"),
        # Absent on MariaDB 10.11 (and on some MySQL builds): the rate is then None.
        log_fsyncs_per_s=per_s("Innodb_os_log_fsyncs"),
        data_fsyncs_per_s=per_s("Innodb_data_fsyncs"),
        data_written_per_s=per_s("Innodb_data_written"),
        log_written_per_s=per_s("Innodb_os_log_written"),
        dblwr_pages_per_s=per_s("Innodb_dblwr_pages_written"),
        binlog_fsync_s_per_s=_seconds(per_s("fsync_binlog_ps")),
        relay_log_fsync_s_per_s=_seconds(per_s("fsync_relaylog_ps")),
        redo_fsync_s_per_s=_seconds(per_s("fsync_redo_ps")),
        fsync_latency_s=_fsync_latency_s(prev, cur),
        semi_sync_avg_wait_s=gauges.semi_sync_avg_wait_s,
        semi_sync_on=gauges.semi_sync_on,
        redo_log_enabled=gauges.redo_log_enabled,
    )
