"""Per-flavor SQL dialects, as data.

:func:`dialect_for` is the only function in Lagscope that compares server versions
(docs/replication.md, "Which status statement"): MySQL < 8.0.22 (``SHOW SLAVE STATUS``),
8.0.22–8.3 (``SHOW REPLICA STATUS``), ≥ 8.4 (``SHOW REPLICA STATUS`` and ``SHOW BINARY LOG
STATUS`` only) and MariaDB 10.5+ (``SHOW ALL SLAVES STATUS``). Collectors ask a dialect's
capabilities, never the version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

from lagscope.collectors.flavor import ServerFlavor
from lagscope.errors import UnsupportedServer

WorkerSource = Literal["perf_schema_timestamps", "perf_schema_basic", "processlist"]

# Server column (lower case) → our field. One table serves every flavor: old MySQL names, the
# 8.0.22+ names and MariaDB's never clash, and lookups are case-insensitive (the 5.7 manual prints
# ``Channel_name``, the server sends ``Channel_Name``).
_REPLICA_COLUMNS: dict[str, str] = {
    "channel_name": "channel",
    "connection_name": "channel",
    "slave_io_state": "io_thread_state",
    "replica_io_state": "io_thread_state",
    "master_host": "source_host",
    "source_host": "source_host",
    "master_port": "source_port",
    "source_port": "source_port",
    "master_log_file": "source_log_file",
    "source_log_file": "source_log_file",
    "read_master_log_pos": "read_source_log_pos",
    "read_source_log_pos": "read_source_log_pos",
    "relay_log_file": "relay_log_file",
    "relay_log_pos": "relay_log_pos",
    "relay_master_log_file": "relay_source_log_file",
    "relay_source_log_file": "relay_source_log_file",
    "slave_io_running": "io_running",
    "replica_io_running": "io_running",
    "slave_sql_running": "sql_running",
    "replica_sql_running": "sql_running",
    "exec_master_log_pos": "exec_source_log_pos",
    "exec_source_log_pos": "exec_source_log_pos",
    "relay_log_space": "relay_log_space",
    "seconds_behind_master": "seconds_behind_source",
    "seconds_behind_source": "seconds_behind_source",
    "last_io_errno": "last_io_errno",
    "last_io_error": "last_io_error",
    "last_sql_errno": "last_sql_errno",
    "last_sql_error": "last_sql_error",
    "last_io_error_timestamp": "last_io_error_at",
    "last_sql_error_timestamp": "last_sql_error_at",
    "master_server_id": "source_server_id",
    "source_server_id": "source_server_id",
    "master_uuid": "source_uuid",
    "source_uuid": "source_uuid",
    "sql_delay": "sql_delay",
    "sql_remaining_delay": "sql_remaining_delay",
    "slave_sql_running_state": "sql_thread_state",
    "replica_sql_running_state": "sql_thread_state",
    # MySQL names the GTID columns; MariaDB has its own per-connection received position and the
    # server-wide applied position (SHOW ALL only).
    "retrieved_gtid_set": "retrieved_gtids",
    "gtid_io_pos": "retrieved_gtids",
    "executed_gtid_set": "executed_gtids",
    "gtid_slave_pos": "executed_gtids",
    "auto_position": "auto_position",
    "using_gtid": "using_gtid",
    "parallel_mode": "parallel_mode",
    "retried_transactions": "retried_transactions",
    "master_slave_time_diff": "source_replica_time_diff",
}
REPLICA_COLUMNS: Mapping[str, str] = MappingProxyType(_REPLICA_COLUMNS)


@dataclass(frozen=True, slots=True)
class Dialect:
    """Everything flavor-specific a collector needs, and nothing else."""

    name: str
    product: Literal["mysql", "mariadb"]
    replica_status_sql: str
    source_status_sql: str
    # Where the server lists variables / status counters as (VARIABLE_NAME, VARIABLE_VALUE).
    variables_table: str
    status_table: str
    workers: WorkerSource
    gtid_kind: Literal["mysql", "mariadb"]
    # Capability flags.
    sbm_null_unless_io_yes: (
        bool  # MariaDB: SBM is NULL as soon as IO is not 'Yes' (docs/replication.md)
    )
    has_worker_timestamps: bool
    columns: Mapping[str, str] = field(default_factory=lambda: REPLICA_COLUMNS)
    # The replicas registered with this server (collectors/discovery.py). MySQL 8.0.22 renamed
    # SHOW SLAVE HOSTS to SHOW REPLICAS (the old name is removed in 8.4); MariaDB 10.5.1 added
    # SHOW REPLICA HOSTS as an alias and keeps SHOW SLAVE HOSTS.
    replica_hosts_sql: str = "SHOW SLAVE HOSTS"
    # Where sessions are listed: MySQL 8.0.22 deprecates information_schema.PROCESSLIST for
    # performance_schema.processlist (same columns).
    processlist_table: str = "information_schema.PROCESSLIST"


MYSQL_57 = Dialect(
    name="mysql-5.7",
    product="mysql",
    replica_status_sql="SHOW SLAVE STATUS",
    source_status_sql="SHOW MASTER STATUS",
    variables_table="performance_schema.global_variables",
    status_table="performance_schema.global_status",
    workers="perf_schema_basic",
    gtid_kind="mysql",
    sbm_null_unless_io_yes=False,
    has_worker_timestamps=False,
)
# 8.0 adds commit/apply timestamps to the applier tables (docs/replication.md).
MYSQL_80_OLD = replace(
    MYSQL_57, name="mysql-8.0", workers="perf_schema_timestamps", has_worker_timestamps=True
)
MYSQL_80_22 = replace(
    MYSQL_80_OLD,
    name="mysql-8.0.22",
    replica_status_sql="SHOW REPLICA STATUS",
    replica_hosts_sql="SHOW REPLICAS",
    processlist_table="performance_schema.processlist",
)
# 8.2 and 8.3 deprecate SHOW MASTER STATUS in favour of SHOW BINARY LOG STATUS (same columns);
# 8.4 removes the old statement, so both use the new one.
MYSQL_82 = replace(MYSQL_80_22, name="mysql-8.2", source_status_sql="SHOW BINARY LOG STATUS")
MYSQL_84 = replace(MYSQL_82, name="mysql-8.4")
MARIADB = Dialect(
    name="mariadb",
    product="mariadb",
    replica_status_sql="SHOW ALL SLAVES STATUS",
    source_status_sql="SHOW MASTER STATUS",
    # performance_schema is OFF by default on MariaDB, information_schema always answers.
    variables_table="information_schema.GLOBAL_VARIABLES",
    status_table="information_schema.GLOBAL_STATUS",
    workers="processlist",
    gtid_kind="mariadb",
    sbm_null_unless_io_yes=True,
    has_worker_timestamps=False,
)


def dialect_for(flavor: ServerFlavor, server: str = "server") -> Dialect:
    """Choose the dialect for a flavor; the only place that compares versions.

    Raises :class:`UnsupportedServer` for MySQL < 5.7 and MariaDB < 10.5 (no ``SHOW ALL SLAVES
    STATUS`` alias set, old privilege names).
    """
    v = flavor.version
    if flavor.product == "mariadb":
        if v < (10, 5, 0):
            raise UnsupportedServer(server, f"MariaDB {_dotted(v)} is older than 10.5")
        return MARIADB
    if v < (5, 7, 0):
        raise UnsupportedServer(server, f"MySQL {_dotted(v)} is older than 5.7")
    if v < (8, 0, 0):
        return MYSQL_57
    if v < (8, 0, 22):
        return MYSQL_80_OLD
    if v < (8, 2, 0):
        return MYSQL_80_22
    if v < (8, 4, 0):
        return MYSQL_82
    return MYSQL_84


def _dotted(version: tuple[int, int, int]) -> str:
    return ".".join(map(str, version))
