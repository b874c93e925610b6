"""Cause readings (CAUSES.md): what holds a replica's applier, read only while it is behind.

Each function pair is one statement and its parse; the registry (``readings.py``) decides when
they are sent (:func:`behind`: the previous poll showed a channel behind or an applier busy)
and folds the parts into one :class:`CauseEvidence` per poll.

SQL (by dialect):
- The applier threads' InnoDB transactions: ``information_schema.INNODB_TRX`` joined to the
  replication threads (MariaDB and MySQL 5.7: ``PROCESSLIST`` rows of ``USER='system user'``;
  MySQL 8.0+: ``performance_schema.threads`` by name, with the worker's
  ``APPLYING_TRANSACTION``). Needs PROCESS.
- Row-lock blockers: MariaDB and MySQL 5.7 ``information_schema.INNODB_LOCK_WAITS`` → blocking
  trx → its ``PROCESSLIST`` session; MySQL 8.0+ ``performance_schema.data_lock_waits`` →
  ``threads`` (5.7's I_S tables are gone there).
- Metadata-lock blockers: MySQL ``performance_schema.metadata_locks`` (PENDING for an applier
  thread, GRANTED to another thread on the same object). MariaDB has no wait table: with the
  ``METADATA_LOCK_INFO`` plugin, the sessions holding a table lock on a table the waiting
  applier also holds one on (exact); without it, the sessions in a transaction that began
  before the wait (candidates, ``certain=False``). The plugin is probed once per connection.
- The sessions that could hold what an applier waits for (any lock the server names without a
  holder: a global read or backup lock, LOCK TABLES, a user lock, a state no rule knows): while
  an applier thread is neither idle nor waiting its turn, the client sessions longest in their
  current command (PROCESSLIST; MySQL 8.0+ ``performance_schema.threads``), candidates only; the
  rules keep those older than the wait. Needs PROCESS.
- The current row event's table: ``SHOW RELAYLOG … EVENTS IN <file> FROM <pos> LIMIT 10`` at
  the channel's applier position → the first ``Table_map`` (``table_id: N (db.table)``); MariaDB
  needs REPLICA MONITOR, MySQL REPLICATION SLAVE. Whether that table has a key row lookups can
  use: one ``information_schema`` query for that one table, cached per table for the connection
  (never a schema scan, never ``SHOW CREATE TABLE``: replication-manager#728).
- MySQL 8.0+ receive side: ``performance_schema.replication_connection_status``
  ``QUEUEING_TRANSACTION*`` / ``LAST_QUEUED_TRANSACTION*``.

Server text (statements, users, hosts, names) is bounded to ``EVIDENCE_TEXT_MAX`` here; names
the server gave us go back into SQL only through :func:`sql_string`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import (
    EVIDENCE_TEXT_MAX,
    ApplierWorker,
    BlockingSession,
    CauseEvidence,
    ChannelStatus,
    InstanceSnapshot,
    IoState,
    OpenTransaction,
    ReceiveProgress,
    RowEventTable,
)
from lagscope.collectors.values import as_float, as_int, as_text

# How many relay log events past the applier's position are read to find its Table_map: a row
# event group starts GTID/BEGIN, (Annotate_rows), Table_map, so 10 covers several tables.
RELAY_EVENTS_LIMIT = 10
# At most this many channels' relay logs per poll (multi-source with every channel stuck is
# rare; the most behind come first).
RELAY_CHANNELS_MAX = 4

# MySQL 8.0.26 renamed the instruments (slave → replica); older servers and
# terminology_use_previous keep the old names.
_MYSQL_APPLIER_THREADS = (
    "'thread/sql/replica_sql', 'thread/sql/replica_worker', "
    "'thread/sql/slave_sql', 'thread/sql/slave_worker'"
)
_MDL_WAIT_STATE = "Waiting for table metadata lock"


def _bounded(value: Any) -> str:
    return as_text(value)[:EVIDENCE_TEXT_MAX]


def _ts(value: Any) -> float | None:
    seconds = as_float(value)
    return seconds if seconds else None  # NULL or the zero date: unset


def sql_string(text: str) -> str | None:
    """``text`` as a SQL string literal that reads the same with and without
    ``NO_BACKSLASH_ESCAPES`` (quotes doubled); None when it holds a backslash or a control
    character, which only mode-dependent escaping could carry. The literal is built here, at
    statement time, before the connection's own escaper (PyMySQL's depends on the session's
    SQL mode) could be asked; server-given names never need those characters."""
    if "\\" in text or any(ord(ch) < 32 for ch in text):
        return None
    return "'" + text.replace("'", "''") + "'"


# --- when to read: the trigger --------------------------------------------------------------

# An applier thread on one transaction this long is worth asking about even at SBM 0: a
# poll's interval, the contract's "busy for more than one poll".
BUSY_S = 1.0


def channel_behind(channel: ChannelStatus) -> bool:
    """A running applier behind its source, or behind by an unknown amount.

    A stopped SQL thread is not: nothing holds an applier that is not running (the status
    already says stopped or broken). A delayed replica (``SQL_Delay``) is behind by design:
    only lag past the delay counts. The SQL thread's state alone does not count: it has no
    duration, and a busy state at SBM 0 is a healthy replica under load."""
    if not channel.sql_running:
        return False
    sbm = channel.seconds_behind_source
    if sbm is None:
        return channel.io_state is IoState.YES
    return sbm > channel.sql_delay


def busy_long(worker: ApplierWorker, previous: InstanceSnapshot) -> bool:
    """An applier thread holding one transaction for more than ``BUSY_S``: MariaDB says how
    long it has been in its state; MySQL 8.0+ when it started applying (server clock)."""
    if not worker.busy:
        return False
    if worker.state_time_s is not None:
        return worker.state_time_s >= BUSY_S
    if worker.applying_start_apply_ts is not None:
        server_now = previous.taken_at.timestamp() + previous.clock.offset_s
        return server_now - worker.applying_start_apply_ts >= BUSY_S
    return True


def behind(previous: InstanceSnapshot) -> bool:
    """The trigger: the previous poll showed a channel behind or an applier thread busy on
    one transaction for more than a poll."""
    return any(channel_behind(c) for c in previous.channels) or any(
        busy_long(w, previous) for w in previous.workers
    )


# --- per connection memory ------------------------------------------------------------------


@dataclass(slots=True)
class CauseMemory:
    """What the cause readings learned on one connection: whether MariaDB's
    METADATA_LOCK_INFO plugin answers (probed once), and each table's keys (checked once)."""

    mdl_plugin: bool | None = None
    # (schema, table) → (has_primary_key, has_usable_key); None: not visible to this user.
    keys: dict[tuple[str, str], tuple[bool, bool] | None] = field(default_factory=dict)


@dataclass(slots=True)
class EvidenceParts:
    """One poll's cause evidence as its readings are parsed (collected, then frozen)."""

    transactions: list[OpenTransaction] = field(default_factory=list)
    blockers: list[BlockingSession] = field(default_factory=list)
    tables: list[RowEventTable] = field(default_factory=list)
    receive: list[ReceiveProgress] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)

    def freeze(self) -> CauseEvidence:
        return CauseEvidence(
            transactions=tuple(self.transactions),
            blockers=tuple(self.blockers),
            tables=tuple(self.tables),
            receive=tuple(self.receive),
            problems=MappingProxyType(dict(self.problems)),
        )


# --- the applier's open transactions --------------------------------------------------------

_TRX_COLUMNS = (
    "t.trx_mysql_thread_id AS thread_id, t.trx_id AS trx_id, t.trx_state AS state, "
    "UNIX_TIMESTAMP(t.trx_started) AS started_ts, t.trx_rows_modified AS rows_modified, "
    "t.trx_rows_locked AS rows_locked, UNIX_TIMESTAMP(t.trx_wait_started) AS wait_started_ts, "
    "t.trx_operation_state AS operation"
)
_TRX_PROCESSLIST_SQL = (
    f"SELECT {_TRX_COLUMNS}, '' AS gtid FROM information_schema.INNODB_TRX t "  # noqa: S608 - constant fragments
    "JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id "
    "WHERE p.USER = 'system user' ORDER BY t.trx_mysql_thread_id"
)
_TRX_MYSQL_80_SQL = (
    f"SELECT {_TRX_COLUMNS}, COALESCE(w.APPLYING_TRANSACTION, '') AS gtid "  # noqa: S608 - constant fragments
    "FROM information_schema.INNODB_TRX t "
    "JOIN performance_schema.threads th ON th.PROCESSLIST_ID = t.trx_mysql_thread_id "
    "LEFT JOIN performance_schema.replication_applier_status_by_worker w "
    "ON w.THREAD_ID = th.THREAD_ID "
    f"WHERE th.NAME IN ({_MYSQL_APPLIER_THREADS}) ORDER BY t.trx_mysql_thread_id"
)


def transactions_statement(dialect: Dialect) -> str:
    return _TRX_MYSQL_80_SQL if dialect.has_worker_timestamps else _TRX_PROCESSLIST_SQL


def parse_transactions(result: ResultSet) -> tuple[OpenTransaction, ...]:
    return tuple(
        OpenTransaction(
            thread_id=as_int(r.get("thread_id")) or 0,
            trx_id=_bounded(r.get("trx_id")),
            state=_bounded(r.get("state")),
            started_at=_ts(r.get("started_ts")),
            rows_modified=as_int(r.get("rows_modified")),
            rows_locked=as_int(r.get("rows_locked")),
            lock_wait_started_at=_ts(r.get("wait_started_ts")),
            operation=_bounded(r.get("operation")),
            gtid=_bounded(r.get("gtid")),
        )
        for r in result.records()
    )


# --- row-lock blockers ----------------------------------------------------------------------

_ROW_BLOCKERS_I_S_SQL = (
    "SELECT b.trx_mysql_thread_id AS thread_id, r.trx_mysql_thread_id AS blocked_thread_id, "
    "p.USER AS user, p.HOST AS host, p.COMMAND AS command, {time} AS time_s, "
    "p.STATE AS state, LEFT(COALESCE(p.INFO, b.trx_query), 500) AS statement, "
    "UNIX_TIMESTAMP(b.trx_started) AS trx_started_ts, bl.lock_table AS object_name "
    "FROM information_schema.INNODB_LOCK_WAITS w "
    "JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id "
    "JOIN information_schema.PROCESSLIST rp ON rp.ID = r.trx_mysql_thread_id "
    "AND rp.USER = 'system user' "
    "JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id "
    "LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id "
    "LEFT JOIN information_schema.INNODB_LOCKS bl ON bl.lock_id = w.blocking_lock_id "
    "ORDER BY r.trx_mysql_thread_id, b.trx_mysql_thread_id"
)
_ROW_BLOCKERS_MYSQL_80_SQL = (
    "SELECT bt.PROCESSLIST_ID AS thread_id, rt.PROCESSLIST_ID AS blocked_thread_id, "  # noqa: S608 - constant fragments
    "bt.PROCESSLIST_USER AS user, bt.PROCESSLIST_HOST AS host, "
    "bt.PROCESSLIST_COMMAND AS command, bt.PROCESSLIST_TIME AS time_s, "
    "bt.PROCESSLIST_STATE AS state, "
    "LEFT(COALESCE(bt.PROCESSLIST_INFO, bx.trx_query), 500) AS statement, "
    "UNIX_TIMESTAMP(bx.trx_started) AS trx_started_ts, "
    "CONCAT(bl.OBJECT_SCHEMA, '.', bl.OBJECT_NAME) AS object_name "
    "FROM performance_schema.data_lock_waits w "
    "JOIN performance_schema.threads rt ON rt.THREAD_ID = w.REQUESTING_THREAD_ID "
    "JOIN performance_schema.threads bt ON bt.THREAD_ID = w.BLOCKING_THREAD_ID "
    "LEFT JOIN performance_schema.data_locks bl "
    "ON bl.ENGINE_LOCK_ID = w.BLOCKING_ENGINE_LOCK_ID AND bl.ENGINE = w.ENGINE "
    "LEFT JOIN information_schema.INNODB_TRX bx "
    "ON bx.trx_id = w.BLOCKING_ENGINE_TRANSACTION_ID "
    f"WHERE rt.NAME IN ({_MYSQL_APPLIER_THREADS}) "
    "ORDER BY rt.PROCESSLIST_ID, bt.PROCESSLIST_ID"
)


def row_blockers_statement(dialect: Dialect) -> str:
    if dialect.has_worker_timestamps:  # MySQL 8.0+: the I_S lock tables were removed
        return _ROW_BLOCKERS_MYSQL_80_SQL
    time = "p.TIME_MS / 1000" if dialect.product == "mariadb" else "p.TIME"
    return _ROW_BLOCKERS_I_S_SQL.format(time=time)


def _blocker(r: Mapping[str, Any], lock: str, certain: bool = True) -> BlockingSession:
    return BlockingSession(
        thread_id=as_int(r.get("thread_id")) or 0,
        blocked_thread_id=as_int(r.get("blocked_thread_id")) or 0,
        lock=lock,
        certain=certain,
        user=_bounded(r.get("user")),
        host=_bounded(r.get("host")),
        command=_bounded(r.get("command")),
        time_s=as_float(r.get("time_s")),
        state=_bounded(r.get("state")),
        statement=_bounded(r.get("statement")),
        trx_started_at=_ts(r.get("trx_started_ts")),
        object_name=_bounded(r.get("object_name")).replace("`", ""),
    )


def parse_row_blockers(result: ResultSet) -> tuple[BlockingSession, ...]:
    return tuple(_blocker(r, "row") for r in result.records())


# --- metadata-lock blockers -----------------------------------------------------------------

MDL_PLUGIN_PROBE_SQL = (
    "SELECT COUNT(*) AS installed FROM information_schema.PLUGINS "
    "WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO' AND PLUGIN_STATUS = 'ACTIVE'"
)
_SESSION_COLUMNS = (
    "p.USER AS user, p.HOST AS host, p.COMMAND AS command, p.TIME_MS / 1000 AS time_s, "
    "p.STATE AS state, LEFT(p.INFO, 500) AS statement, "
    "UNIX_TIMESTAMP(t.trx_started) AS trx_started_ts"
)
# The waiting applier already holds a lesser lock on the table it waits for (an ALTER holds
# SHARED_UPGRADABLE while it waits to upgrade): the other sessions' table locks on it block it.
_MDL_MARIADB_PLUGIN_SQL = (
    f"SELECT DISTINCT h.THREAD_ID AS thread_id, a.ID AS blocked_thread_id, {_SESSION_COLUMNS}, "  # noqa: S608 - constant fragments
    "CONCAT(h.TABLE_SCHEMA, '.', h.TABLE_NAME) AS object_name, 1 AS certain "
    "FROM information_schema.PROCESSLIST a "
    "JOIN information_schema.METADATA_LOCK_INFO al ON al.THREAD_ID = a.ID "
    "AND al.LOCK_TYPE = 'Table metadata lock' "
    "JOIN information_schema.METADATA_LOCK_INFO h ON h.LOCK_TYPE = al.LOCK_TYPE "
    "AND h.TABLE_SCHEMA = al.TABLE_SCHEMA AND h.TABLE_NAME = al.TABLE_NAME "
    "AND h.THREAD_ID <> a.ID "
    "JOIN information_schema.PROCESSLIST p ON p.ID = h.THREAD_ID AND p.USER <> 'system user' "
    "LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID "
    f"WHERE a.USER = 'system user' AND a.STATE = '{_MDL_WAIT_STATE}' "
    "ORDER BY a.ID, h.THREAD_ID"
)
# Without the plugin: sessions in a transaction that began before the applier started waiting
# (TIME is whole seconds in the state, so the bound errs by < 1 s towards including).
_MDL_MARIADB_CANDIDATES_SQL = (
    f"SELECT p.ID AS thread_id, a.ID AS blocked_thread_id, {_SESSION_COLUMNS}, "  # noqa: S608 - constant fragments
    "'' AS object_name, 0 AS certain "
    "FROM information_schema.PROCESSLIST a "
    "JOIN information_schema.INNODB_TRX t ON t.trx_started <= NOW() - INTERVAL a.TIME SECOND "
    "JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id "
    "AND p.USER <> 'system user' AND p.ID <> CONNECTION_ID() "
    f"WHERE a.USER = 'system user' AND a.STATE = '{_MDL_WAIT_STATE}' "
    "ORDER BY a.ID, p.ID"
)
_MDL_MYSQL_SQL = (
    "SELECT DISTINCT ht.PROCESSLIST_ID AS thread_id, wt.PROCESSLIST_ID AS blocked_thread_id, "  # noqa: S608 - constant fragments
    "ht.PROCESSLIST_USER AS user, ht.PROCESSLIST_HOST AS host, "
    "ht.PROCESSLIST_COMMAND AS command, ht.PROCESSLIST_TIME AS time_s, "
    "ht.PROCESSLIST_STATE AS state, LEFT(ht.PROCESSLIST_INFO, 500) AS statement, "
    "UNIX_TIMESTAMP(x.trx_started) AS trx_started_ts, "
    "CONCAT(h.OBJECT_SCHEMA, '.', h.OBJECT_NAME) AS object_name, 1 AS certain, "
    "w.OBJECT_TYPE AS object_type "
    "FROM performance_schema.metadata_locks w "
    "JOIN performance_schema.threads wt ON wt.THREAD_ID = w.OWNER_THREAD_ID "
    "JOIN performance_schema.metadata_locks h ON h.OBJECT_TYPE = w.OBJECT_TYPE "
    "AND h.OBJECT_SCHEMA <=> w.OBJECT_SCHEMA AND h.OBJECT_NAME <=> w.OBJECT_NAME "
    "AND h.LOCK_STATUS = 'GRANTED' AND h.OWNER_THREAD_ID <> w.OWNER_THREAD_ID "
    # Every writer holds the global and commit locks INTENTION_EXCLUSIVE, which never conflict
    # with each other: only a stronger hold (FLUSH TABLES WITH READ LOCK's SHARED) blocks.
    "AND NOT (h.LOCK_TYPE = 'INTENTION_EXCLUSIVE' AND w.LOCK_TYPE = 'INTENTION_EXCLUSIVE') "
    "JOIN performance_schema.threads ht ON ht.THREAD_ID = h.OWNER_THREAD_ID "
    "LEFT JOIN information_schema.INNODB_TRX x ON x.trx_mysql_thread_id = ht.PROCESSLIST_ID "
    f"WHERE w.LOCK_STATUS = 'PENDING' AND wt.NAME IN ({_MYSQL_APPLIER_THREADS}) "
    "ORDER BY wt.PROCESSLIST_ID, ht.PROCESSLIST_ID"
)


# MariaDB with the plugin: the backup lock's holders. FLUSH TABLES WITH READ LOCK holds it in
# MDL_BACKUP_FTWRL1/2, a BACKUP STAGE in MDL_BACKUP_START … WAIT_COMMIT (seen on 10.11 on the lab);
# the modes every statement takes (DML, DDL, COMMIT…) never block an applier, so they are left out.
_BACKUP_HOLDERS_MARIADB_PLUGIN_SQL = (
    f"SELECT DISTINCT h.THREAD_ID AS thread_id, a.ID AS blocked_thread_id, {_SESSION_COLUMNS}, "  # noqa: S608 - constant fragments
    "'' AS object_name, 1 AS certain, 'BACKUP LOCK' AS object_type "
    "FROM information_schema.PROCESSLIST a "
    "JOIN information_schema.METADATA_LOCK_INFO h ON h.LOCK_TYPE = 'Backup lock' "
    "AND h.THREAD_ID <> a.ID AND h.LOCK_MODE NOT IN ('MDL_BACKUP_DML', 'MDL_BACKUP_TRANS_DML', "
    "'MDL_BACKUP_SYS_DML', 'MDL_BACKUP_DDL', 'MDL_BACKUP_ALTER_COPY', 'MDL_BACKUP_COMMIT') "
    "JOIN information_schema.PROCESSLIST p ON p.ID = h.THREAD_ID AND p.USER <> 'system user' "
    "LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID "
    "WHERE a.USER = 'system user' AND a.STATE = 'Waiting for backup lock' "
    "ORDER BY a.ID, h.THREAD_ID"
)


def backup_holders_statement(dialect: Dialect, memory: CauseMemory) -> str | None:
    """MariaDB with METADATA_LOCK_INFO only (MySQL's metadata_locks reading covers the backup
    lock already; without the plugin the lock sessions are the candidates)."""
    if dialect.product != "mariadb" or not memory.mdl_plugin:
        return None
    return _BACKUP_HOLDERS_MARIADB_PLUGIN_SQL


def mdl_probe_statement(dialect: Dialect, memory: CauseMemory) -> str | None:
    if dialect.product != "mariadb" or memory.mdl_plugin is not None:
        return None
    return MDL_PLUGIN_PROBE_SQL


def parse_mdl_probe(result: ResultSet, memory: CauseMemory) -> None:
    memory.mdl_plugin = bool(result.rows and as_int(result.rows[0][0]))


def mdl_blockers_statement(dialect: Dialect, memory: CauseMemory) -> str:
    """MySQL: P_S ``metadata_locks``. MariaDB: exact with the plugin, candidates without; the
    plugin's answer is known from the second triggered poll on (the probe rides in the first
    one's batch), until then the candidates are read."""
    if dialect.product != "mariadb":
        return _MDL_MYSQL_SQL
    return _MDL_MARIADB_PLUGIN_SQL if memory.mdl_plugin else _MDL_MARIADB_CANDIDATES_SQL


# MySQL's metadata_locks OBJECT_TYPE → the lock's kind, as the applier's wait state names it
# ("Waiting for global read lock", "Waiting for backup lock"…; analysis/causes/states.py). A
# table's is "metadata"; MariaDB's readings read table locks only.
MDL_KINDS = {
    "TABLE": "metadata",
    "GLOBAL": "global read",
    "COMMIT": "global read",
    "BACKUP LOCK": "backup",
    "USER LEVEL LOCK": "user",
    "SCHEMA": "schema metadata",
    "TABLESPACE": "tablespace metadata",
    "FUNCTION": "stored function metadata",
    "PROCEDURE": "stored procedure metadata",
    "TRIGGER": "trigger metadata",
    "EVENT": "event metadata",
    "LOCKING SERVICE": "locking service",
    "FOREIGN KEY": "foreign key metadata",
    "CHECK CONSTRAINT": "check constraint metadata",
    "COLUMN STATISTICS": "column statistics",
    "RESOURCE_GROUPS": "resource groups metadata",
    "SRID": "srid metadata",
    "ACL_CACHE": "acl cache",
}


def parse_mdl_blockers(result: ResultSet) -> tuple[BlockingSession, ...]:
    return tuple(
        _blocker(
            r,
            MDL_KINDS.get(as_text(r.get("object_type")).upper(), "metadata"),
            certain=bool(as_int(r.get("certain"))),
        )
        for r in result.records()
    )


def mdl_problem(
    dialect: Dialect, channels: Iterable[ChannelStatus], found: bool, memory: CauseMemory
) -> str | None:
    """An applier waits for a metadata lock and nobody is seen holding it: say what would
    show the holder rather than leave the blank unexplained."""
    waiting = any(c.sql_thread_state == _MDL_WAIT_STATE for c in channels)
    if not waiting or found:
        return None
    if dialect.product == "mariadb" and not memory.mdl_plugin:
        return (
            "the applier waits for a metadata lock and no session is in a transaction older "
            "than the wait; the METADATA_LOCK_INFO plugin (INSTALL SONAME 'metadata_lock_info') "
            "would name the holder (LOCK TABLES, FLUSH TABLES … also hold them)"
        )
    if dialect.product == "mariadb":
        return (
            "the applier waits for a metadata lock and METADATA_LOCK_INFO shows no other "
            "session holding one on a table the applier holds (a lock on a table it has not "
            "opened yet is not shown)"
        )
    return (
        "the applier waits for a metadata lock and performance_schema.metadata_locks shows "
        "no holder: enable the wait/lock/metadata/sql/mdl instrument (off by default in 5.7)"
    )


# --- the sessions that could hold what an applier waits for -----------------------------------

# The lock a candidate session is offered for: any (the state table decides which lock the
# applier waits for; a session in its command since before the wait could hold any of them).
SESSION_LOCK = "session"
# Sessions listed per poll at most (longest in their command first).
LOCK_SESSIONS_MAX = 20
# MariaDB / MySQL 5.7: while an applier thread is in a state that is neither idle nor waiting its
# turn (applier_workers' idle states), the client sessions longest in their current command:
# what a global read lock, a backup stage, LOCK TABLES or a user lock left behind looks like from
# PROCESSLIST (a FLUSH TABLES WITH READ LOCK holder sits idle, its statement gone). The rules keep
# those in their command since before the wait began (the SQL thread's own TIME counts from its
# event's timestamp, not from its wait, so it cannot bound them here). The server's own sessions
# (replication, daemons) and the monitoring user's (Lagscope's connections from every worker,
# idle between polls; its grants take no lock) are left out.
_LOCK_SESSIONS_PROCESSLIST_SQL = (
    "SELECT p.ID AS thread_id, a.ID AS blocked_thread_id, p.USER AS user, p.HOST AS host, "  # noqa: S608 - constant fragments
    "p.COMMAND AS command, {time} AS time_s, p.STATE AS state, "
    "LEFT(p.INFO, 500) AS statement, UNIX_TIMESTAMP(t.trx_started) AS trx_started_ts, "
    "'' AS object_name, 0 AS certain "
    "FROM (SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'system user' "
    "AND COMMAND NOT IN ('Slave_IO', 'Connect', 'Daemon', 'Binlog Dump', 'Binlog Dump GTID') "
    "AND COALESCE(STATE, '') <> '' AND STATE NOT LIKE 'Slave has read all relay log%' "
    "AND STATE NOT LIKE 'Waiting for work from SQL thread%' "
    "AND STATE NOT LIKE 'Waiting for prior transaction%' "
    "AND STATE NOT LIKE 'Waiting until MASTER_DELAY%' ORDER BY ID LIMIT 1) a "
    "JOIN information_schema.PROCESSLIST p ON p.USER <> 'system user' "
    "AND p.ID <> CONNECTION_ID() AND p.USER <> SUBSTRING_INDEX(CURRENT_USER(), '@', 1) "
    "AND p.COMMAND NOT IN ('Daemon', 'Binlog Dump', 'Binlog Dump GTID') "
    "LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID "
    f"ORDER BY p.TIME DESC, p.ID LIMIT {LOCK_SESSIONS_MAX}"
)
# MySQL 8.0+: the same from performance_schema.threads (PROCESSLIST is deprecated there).
_LOCK_SESSIONS_MYSQL_80_SQL = (
    "SELECT p.PROCESSLIST_ID AS thread_id, a.PROCESSLIST_ID AS blocked_thread_id, "  # noqa: S608 - constant fragments
    "p.PROCESSLIST_USER AS user, p.PROCESSLIST_HOST AS host, "
    "p.PROCESSLIST_COMMAND AS command, p.PROCESSLIST_TIME AS time_s, "
    "p.PROCESSLIST_STATE AS state, LEFT(p.PROCESSLIST_INFO, 500) AS statement, "
    "UNIX_TIMESTAMP(t.trx_started) AS trx_started_ts, '' AS object_name, 0 AS certain "
    "FROM (SELECT PROCESSLIST_ID FROM performance_schema.threads "
    f"WHERE NAME IN ({_MYSQL_APPLIER_THREADS}) "
    "AND COALESCE(PROCESSLIST_STATE, '') <> '' "
    "AND PROCESSLIST_STATE NOT LIKE '%has read all relay log%' "
    "AND PROCESSLIST_STATE NOT LIKE 'Waiting for an event from Coordinator%' "
    "AND PROCESSLIST_STATE NOT LIKE 'Waiting for preceding transaction%' "
    "AND PROCESSLIST_STATE NOT LIKE 'Waiting for dependent transaction%' "
    "AND PROCESSLIST_STATE NOT LIKE 'Waiting until %_DELAY%' "
    "ORDER BY PROCESSLIST_ID LIMIT 1) a "
    "JOIN performance_schema.threads p ON p.NAME = 'thread/sql/one_connection' "
    "AND p.PROCESSLIST_ID <> CONNECTION_ID() "
    "AND p.PROCESSLIST_USER <> SUBSTRING_INDEX(CURRENT_USER(), '@', 1) "
    "AND p.PROCESSLIST_COMMAND NOT IN ('Daemon', 'Binlog Dump', 'Binlog Dump GTID') "
    "LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.PROCESSLIST_ID "
    "ORDER BY p.PROCESSLIST_TIME DESC, p.PROCESSLIST_ID "
    f"LIMIT {LOCK_SESSIONS_MAX}"
)


def lock_sessions_statement(dialect: Dialect) -> str:
    if dialect.has_worker_timestamps:
        return _LOCK_SESSIONS_MYSQL_80_SQL
    time = "p.TIME_MS / 1000" if dialect.product == "mariadb" else "p.TIME"
    return _LOCK_SESSIONS_PROCESSLIST_SQL.format(time=time)


def parse_lock_sessions(result: ResultSet) -> tuple[BlockingSession, ...]:
    """Each session once, as a candidate for any lock."""
    found: dict[int, BlockingSession] = {}
    for r in result.records():
        session = _blocker(r, SESSION_LOCK, certain=False)
        found.setdefault(session.thread_id, session)
    return tuple(found.values())


# --- MySQL 8.0+ receive side ----------------------------------------------------------------

_RECEIVE_SQL = (
    "SELECT CHANNEL_NAME AS channel, QUEUEING_TRANSACTION AS queueing_trx, "
    "UNIX_TIMESTAMP(QUEUEING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP) "
    "AS queueing_original_commit_ts, "
    "UNIX_TIMESTAMP(QUEUEING_TRANSACTION_START_QUEUE_TIMESTAMP) AS queueing_start_ts, "
    "LAST_QUEUED_TRANSACTION AS last_queued_trx, "
    "UNIX_TIMESTAMP(LAST_QUEUED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP) "
    "AS last_queued_original_commit_ts, "
    "UNIX_TIMESTAMP(LAST_QUEUED_TRANSACTION_END_QUEUE_TIMESTAMP) AS last_queued_end_ts "
    "FROM performance_schema.replication_connection_status ORDER BY CHANNEL_NAME"
)


def receive_statement(dialect: Dialect) -> str | None:
    # 8.0 added the queueing timestamps; 5.7 and MariaDB have none (the IO thread state is all).
    return _RECEIVE_SQL if dialect.has_worker_timestamps else None


def parse_receive(result: ResultSet) -> tuple[ReceiveProgress, ...]:
    return tuple(
        ReceiveProgress(
            channel=_bounded(r.get("channel")),
            queueing_trx=_bounded(r.get("queueing_trx")),
            queueing_original_commit_ts=_ts(r.get("queueing_original_commit_ts")),
            queueing_start_ts=_ts(r.get("queueing_start_ts")),
            last_queued_trx=_bounded(r.get("last_queued_trx")),
            last_queued_original_commit_ts=_ts(r.get("last_queued_original_commit_ts")),
            last_queued_end_ts=_ts(r.get("last_queued_end_ts")),
        )
        for r in result.records()
    )


# --- the current row event's table ----------------------------------------------------------

# MySQL: Write_rows, Update_rows, Delete_rows (and Update_rows_partial); MariaDB adds _v1 and
# compressed forms. Annotate_rows is not a row event.
_ROW_EVENTS = ("Write_rows", "Update_rows", "Delete_rows")
_TABLE_MAP_RE = re.compile(r"^table_id: \d+ \((?P<schema>[^.]*)\.(?P<table>.*)\)$")


def relay_positions(previous: InstanceSnapshot) -> list[ChannelStatus]:
    """The channels whose applier position is worth reading, most behind first. The position
    is the previous poll's (this poll's replica status arrives in the same batch): the event
    there is still the one applied when the applier is stuck, which is when it matters."""
    channels = [
        c for c in previous.channels if c.relay_log_file and c.relay_log_pos and channel_behind(c)
    ]
    channels.sort(key=lambda c: -(c.seconds_behind_source or 0))
    return channels[:RELAY_CHANNELS_MAX]


def relay_events_statement(dialect: Dialect, channel: ChannelStatus) -> str | None:
    """``SHOW RELAYLOG`` at the channel's applier position; None when a name cannot be quoted.
    MariaDB names the connection before EVENTS, MySQL after (``FOR CHANNEL``)."""
    log = sql_string(channel.relay_log_file or "")
    name = sql_string(channel.channel)
    if log is None or name is None:
        return None
    where = f"IN {log} FROM {int(channel.relay_log_pos or 0)} LIMIT {RELAY_EVENTS_LIMIT}"
    if dialect.product == "mariadb":
        return f"SHOW RELAYLOG {name} EVENTS {where}"
    return f"SHOW RELAYLOG EVENTS {where} FOR CHANNEL {name}"


def parse_relay_events(
    result: ResultSet,
    channels: Sequence[ChannelStatus],
    memory: CauseMemory,
) -> tuple[RowEventTable, ...]:
    """The first Table_map after each channel's position, and the row event that follows it.
    Rows of several channels arrive in one result; ``Log_name`` tells them apart."""
    by_log = {c.relay_log_file: c.channel for c in channels}
    found: dict[str, RowEventTable] = {}
    pending: dict[str, RowEventTable] = {}
    for r in result.records():
        channel = by_log.get(as_text(r.get("log_name")))
        if channel is None or channel in found:
            continue
        kind = as_text(r.get("event_type"))
        if channel in pending:
            if kind.startswith(_ROW_EVENTS):
                found[channel] = replace(pending.pop(channel), event=_bounded(kind))
            continue
        match = _TABLE_MAP_RE.match(as_text(r.get("info")))
        if kind == "Table_map" and match:
            schema, table = match["schema"], match["table"]
            keys = memory.keys.get((schema, table))
            pending[channel] = RowEventTable(
                channel=channel,
                schema=_bounded(schema),
                table=_bounded(table),
                has_primary_key=keys[0] if keys else None,
                has_usable_key=keys[1] if keys else None,
            )
    found.update(pending)  # a Table_map whose row event lies past the limit
    return tuple(found[c.channel] for c in channels if c.channel in found)


# --- does that table have a key -------------------------------------------------------------


def unchecked_tables(previous: InstanceSnapshot, memory: CauseMemory) -> list[tuple[str, str]]:
    """Tables the previous poll's row events named whose keys this connection has not read."""
    tables = previous.evidence.tables if previous.evidence else ()
    wanted = {(t.schema, t.table) for t in tables if (t.schema, t.table) not in memory.keys}
    return sorted(wanted)


def table_keys_statement(schema: str, table: str) -> str | None:
    """One named table's indexes: ``TABLES`` tells "no index" from "not visible to this user";
    the equalities on both names let the server open that one table only."""
    s, t = sql_string(schema), sql_string(table)
    if s is None or t is None:
        return None
    return (
        "SELECT tb.TABLE_SCHEMA AS table_schema, tb.TABLE_NAME AS table_name, "  # noqa: S608 - literals quoted by sql_string
        "st.INDEX_NAME AS index_name, st.NON_UNIQUE AS non_unique, st.NULLABLE AS nullable "
        "FROM information_schema.TABLES tb "
        "LEFT JOIN information_schema.STATISTICS st "
        "ON st.TABLE_SCHEMA = tb.TABLE_SCHEMA AND st.TABLE_NAME = tb.TABLE_NAME "
        f"WHERE tb.TABLE_SCHEMA = {s} AND tb.TABLE_NAME = {t}"
    )


def _rows_by_table(result: ResultSet) -> dict[tuple[str, str], list[dict[str, Any]]]:
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in result.records():
        name = (as_text(r.get("table_schema")), as_text(r.get("table_name")))
        rows.setdefault(name, []).append(r)
    return rows


def _keys(rows: Iterable[Mapping[str, Any]]) -> tuple[bool, bool]:
    """(has primary key, has a unique key over NOT NULL columns only) from index rows."""
    unique: dict[str, bool] = {}  # index → every column NOT NULL
    for r in rows:
        index = as_text(r.get("index_name"))
        if not index or as_int(r.get("non_unique")):
            continue
        not_null = as_text(r.get("nullable")).upper() != "YES"
        unique[index] = unique.get(index, True) and not_null
    return "PRIMARY" in unique, any(unique.values())


def parse_table_keys(
    result: ResultSet, asked: Iterable[tuple[str, str]], memory: CauseMemory
) -> None:
    """Cache, per asked table, (has primary key, has a unique key over NOT NULL columns only),
    or None when the server shows no such table (this user may not see it). The answers of
    several tables arrive in one result; their name columns tell them apart."""
    rows = _rows_by_table(result)
    for name in asked:
        memory.keys[name] = _keys(rows[name]) if name in rows else None


# InnoDB's own dictionary answers for a table the user has no privilege on (a monitoring user
# rarely has SELECT on the application's tables, and ``information_schema.TABLES`` hides those):
# it needs PROCESS only, which the applier readings need anyway. InnoDB clusters a table on its
# primary key, else on its first UNIQUE index over NOT NULL columns, else on a hidden row id
# (GEN_CLUST_INDEX): the clustered index alone (TYPE bit 1; bit 2 = unique) says both answers.
_DICTIONARY_TABLES = {
    "old": ("INNODB_SYS_TABLES", "INNODB_SYS_INDEXES"),  # MariaDB, MySQL 5.7
    "new": ("INNODB_TABLES", "INNODB_INDEXES"),  # MySQL 8.0+
}


def table_dictionary_statement(dialect: Dialect, schema: str, table: str) -> str | None:
    """The clustered index of one InnoDB table, from InnoDB's dictionary (``db/table`` names;
    a name InnoDB stores encoded does not match: the keys then stay unknown)."""
    s, t = sql_string(schema), sql_string(table)
    if s is None or t is None:
        return None
    old = dialect.product == "mariadb" or dialect.name == "mysql-5.7"
    tables, indexes = _DICTIONARY_TABLES["old" if old else "new"]
    return (
        f"SELECT {s} AS table_schema, {t} AS table_name, i.NAME AS index_name, "  # noqa: S608 - literals quoted by sql_string
        "IF(i.TYPE & 3 = 3, 0, 1) AS non_unique, 'NO' AS nullable "
        f"FROM information_schema.{tables} tt "
        f"JOIN information_schema.{indexes} i ON i.TABLE_ID = tt.TABLE_ID "
        f"WHERE tt.NAME = CONCAT({s}, '/', {t}) AND i.TYPE & 1 = 1"
    )


def parse_table_dictionary(
    result: ResultSet, memory: CauseMemory, asked: Iterable[tuple[str, str]] = ()
) -> None:
    """Fill in the keys of the tables no earlier check answered for this user; ``asked`` tables
    the dictionary does not show either are remembered as unknown."""
    asked = list(asked)
    for name, rows in _rows_by_table(result).items():
        if name in asked or (name in memory.keys and memory.keys[name] is None):
            memory.keys[name] = _keys(rows)
    for name in asked:
        memory.keys.setdefault(name, None)


def hidden_tables(tables: Iterable[RowEventTable], memory: CauseMemory) -> list[str]:
    return [
        f"{t.schema}.{t.table}"
        for t in tables
        if (t.schema, t.table) in memory.keys and memory.keys[(t.schema, t.table)] is None
    ]
