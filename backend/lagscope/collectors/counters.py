"""Status counters that become rates: commits, group commits, fsyncs, bytes, doublewrite, semi-sync.

SQL: ``SELECT VARIABLE_NAME, VARIABLE_VALUE FROM performance_schema.global_status`` (MySQL) /
``information_schema.GLOBAL_STATUS`` (MariaDB) ``WHERE VARIABLE_NAME IN (<the names below>)``.
The names are constants of this module. Counters a server lacks (``Binlog_group_commits`` on
MySQL, one semi-sync generation or the other) are simply absent. ``ON``/``OFF`` states
(semi-sync status, redo log enabled) read as 1/0 so every value is an integer. ``Uptime`` is
kept so a rate computation can tell a server restart (counters reset) from a wrap.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.values import as_int, as_text

TRACKED_COUNTERS: tuple[str, ...] = (
    "Uptime",
    "Com_commit",
    "Handler_commit",
    "Innodb_os_log_fsyncs",
    "Innodb_data_fsyncs",
    "Innodb_data_written",
    "Innodb_os_log_written",
    "Innodb_dblwr_writes",
    "Innodb_dblwr_pages_written",
    "Innodb_redo_log_enabled",
    "Binlog_commits",
    "Binlog_group_commits",
    "Binlog_group_commit_trigger_count",
    "Binlog_group_commit_trigger_timeout",
    "Binlog_group_commit_trigger_lock_wait",
    "Binlog_bytes_written",
    "Slave_retried_transactions",
    "Slave_received_heartbeats",
    "Slaves_running",
    "Rpl_semi_sync_master_status",
    "Rpl_semi_sync_master_tx_avg_wait_time",
    "Rpl_semi_sync_master_yes_tx",
    "Rpl_semi_sync_master_no_tx",
    "Rpl_semi_sync_source_status",
    "Rpl_semi_sync_source_tx_avg_wait_time",
    "Rpl_semi_sync_source_yes_tx",
    "Rpl_semi_sync_source_no_tx",
)
_CANONICAL = {name.lower(): name for name in TRACKED_COUNTERS}
_STATES = {"on": 1, "off": 0}


def statement(dialect: Dialect) -> str:
    names = ", ".join(f"'{name}'" for name in TRACKED_COUNTERS)
    return (
        f"SELECT VARIABLE_NAME, VARIABLE_VALUE FROM {dialect.status_table} "  # noqa: S608 - constants
        f"WHERE VARIABLE_NAME IN ({names})"
    )


def parse(dialect: Dialect, result: ResultSet) -> Mapping[str, int]:
    counters: dict[str, int] = {}
    for raw_name, raw_value in result.rows:
        name = _CANONICAL.get(as_text(raw_name).lower())
        if name is None:
            continue
        value = as_int(raw_value)
        if value is None:
            value = _STATES.get(as_text(raw_value).strip().lower())
        if value is not None:
            counters[name] = value
    return MappingProxyType(counters)
