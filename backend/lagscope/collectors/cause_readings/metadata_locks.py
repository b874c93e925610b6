"""Metadata-lock blockers: who holds the table lock an applier waits for. MySQL names them in
``performance_schema.metadata_locks`` (the backup lock's holders too); MariaDB has no wait table,
so with the ``METADATA_LOCK_INFO`` plugin (probed once per connection) the holders of a lock on a
table the applier also holds one on are exact, and without it the sessions in a transaction
begun before the wait are only candidates. MariaDB's backup-lock holders: ``backup_locks.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lagscope.collectors.cause_readings.common import (
    _MDL_WAIT_STATE,
    _MYSQL_APPLIER_THREADS,
    MDL_LOCKS_MAX,
    CauseMemory,
    Record,
    _id,
    _part,
)
from lagscope.collectors.cause_readings.row_locks import _blocker
from lagscope.collectors.cause_readings.sessions import (
    TRX_STATEMENT,
    Sessions,
    _session_columns,
    _started,
    _trx_of,
)
from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import BlockingSession, ChannelStatus
from lagscope.collectors.values import as_float, as_int, as_text

MDL_PLUGIN_PROBE_SQL = (
    "SELECT COUNT(*) AS installed FROM information_schema.PLUGINS "
    "WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO' AND PLUGIN_STATUS = 'ACTIVE'"
)
# MariaDB with the plugin: every session's table locks. The waiting applier already holds a
# lesser lock on the table it waits for (an ALTER holds SHARED_UPGRADABLE while it waits to
# upgrade): the other sessions' table locks on it block it.
_MDL_TABLE_LOCKS_MARIADB_SQL = (
    "SELECT THREAD_ID AS thread_id, TABLE_SCHEMA AS table_schema, TABLE_NAME AS table_name "  # noqa: S608 - constant fragments
    "FROM information_schema.METADATA_LOCK_INFO WHERE LOCK_TYPE = 'Table metadata lock' "
    f"LIMIT {MDL_LOCKS_MAX}"
)
_MDL_MYSQL_SQL = (
    "SELECT DISTINCT ht.PROCESSLIST_ID AS thread_id, wt.PROCESSLIST_ID AS blocked_thread_id, "  # noqa: S608 - constant fragments
    "ht.PROCESSLIST_USER AS user, ht.PROCESSLIST_HOST AS host, "
    "ht.PROCESSLIST_COMMAND AS command, ht.PROCESSLIST_TIME AS time_s, "
    "ht.PROCESSLIST_STATE AS state, LEFT(ht.PROCESSLIST_INFO, 500) AS statement, "
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
    f"WHERE w.LOCK_STATUS = 'PENDING' AND wt.NAME IN ({_MYSQL_APPLIER_THREADS}) "
    "ORDER BY wt.PROCESSLIST_ID, ht.PROCESSLIST_ID"
)


def mdl_probe_statement(dialect: Dialect, memory: CauseMemory) -> str | None:
    if dialect.product != "mariadb" or memory.mdl_plugin is not None:
        return None
    return MDL_PLUGIN_PROBE_SQL


def parse_mdl_probe(result: ResultSet, memory: CauseMemory) -> None:
    memory.mdl_plugin = bool(result.rows and as_int(result.rows[0][0]))


def mdl_blockers_statements(dialect: Dialect, memory: CauseMemory) -> tuple[str, ...]:
    """MySQL: P_S ``metadata_locks``, then ``INNODB_TRX``. MariaDB: exact with the plugin
    (its table locks), candidates without (``INNODB_TRX`` alone, with the sessions reading);
    the plugin's answer is known from the second triggered poll on (the probe rides in the
    first one's batch), until then the candidates are read."""
    if dialect.product != "mariadb":
        return (_MDL_MYSQL_SQL, TRX_STATEMENT)
    if memory.mdl_plugin:
        return (_MDL_TABLE_LOCKS_MARIADB_SQL, TRX_STATEMENT)
    return (TRX_STATEMENT,)


def _distinct(records: Iterable[Record]) -> list[Record]:
    seen: set[tuple[Any, ...]] = set()
    kept: list[Record] = []
    for r in records:
        key = tuple(r.items())
        if key not in seen:
            seen.add(key)
            kept.append(r)
    return kept


def _by_waiter(records: list[Record]) -> list[Record]:
    return sorted(records, key=lambda r: (_id(r["blocked_thread_id"]), _id(r["thread_id"])))


def _holder(
    thread_id: int, waiter: int, session: Mapping[str, Any], trx_of: Mapping[int, Mapping[str, Any]]
) -> Record:
    return {
        "thread_id": thread_id,
        "blocked_thread_id": waiter,
        **_session_columns(session),
        "trx_started_ts": _started(trx_of, thread_id),
    }


def mdl_holder_records(
    table_locks: Iterable[Mapping[str, Any]],
    trx: Iterable[Mapping[str, Any]],
    sessions: Sessions,
) -> list[Record]:
    """MariaDB with METADATA_LOCK_INFO: for each replication thread waiting for a table
    metadata lock, the client sessions holding a table lock on a table it holds one on."""
    trx_of = _trx_of(trx)
    locks = [
        (_id(lock.get("thread_id")), (lock.get("table_schema"), lock.get("table_name")))
        for lock in table_locks
    ]
    held: dict[int, set[tuple[Any, Any]]] = {}
    for thread_id, table in locks:
        if None not in table:  # a NULL name equals nothing in SQL
            held.setdefault(thread_id, set()).add(table)
    found: list[Record] = []
    for waiter in sessions.waiting(_MDL_WAIT_STATE):
        waiter_id = _id(waiter.get("id"))
        mine = held.get(waiter_id, set())
        for thread_id, table in locks:
            if thread_id == waiter_id or table not in mine:
                continue
            session = sessions.client(thread_id)
            if session is None:
                continue
            record = _holder(thread_id, waiter_id, session, trx_of)
            record.update(object_name=f"{table[0]}.{table[1]}", certain=1)
            found.append(record)
    return _by_waiter(_distinct(found))


def mdl_candidate_records(
    trx: Iterable[Mapping[str, Any]], sessions: Sessions, server_now: float
) -> list[Record]:
    """MariaDB without the plugin: for each replication thread waiting for a table metadata
    lock, the client sessions in a transaction that began before the wait (TIME is whole
    seconds in the state, so the bound errs by < 1 s towards including). ``server_now``: the
    server's clock this poll, taken to the second as ``NOW()`` is."""
    trx = list(trx)
    now = math.floor(server_now)
    found: list[Record] = []
    for waiter in sessions.waiting(_MDL_WAIT_STATE):
        waiting_s = as_int(waiter.get("time"))
        if waiting_s is None:
            continue
        for t in trx:
            started = as_float(t.get("started_ts"))
            thread_id = _id(t.get("thread_id"))
            session = sessions.client(thread_id)
            if started is None or started > now - waiting_s or session is None:
                continue
            record = _holder(thread_id, _id(waiter.get("id")), session, {thread_id: t})
            record.update(object_name="", certain=0)
            found.append(record)
    return _by_waiter(found)


def with_trx_started(
    records: Iterable[Mapping[str, Any]], trx: Iterable[Mapping[str, Any]]
) -> list[Record]:
    """MySQL: performance_schema rows with their session's transaction start
    (``LEFT JOIN INNODB_TRX`` on the processlist id)."""
    trx_of = _trx_of(trx)
    return [{**r, "trx_started_ts": _started(trx_of, _id(r.get("thread_id")))} for r in records]


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


def mdl_blockers(records: Iterable[Mapping[str, Any]]) -> tuple[BlockingSession, ...]:
    return tuple(
        _blocker(
            r,
            MDL_KINDS.get(as_text(r.get("object_type")).upper(), "metadata"),
            certain=bool(as_int(r.get("certain"))),
        )
        for r in records
    )


def parse_mdl_blockers(
    parts: Sequence[ResultSet], sessions: Sessions | None, server_now: float | None
) -> tuple[BlockingSession, ...]:
    """Which form was sent is told by its answers, not by the probe (answered in the same
    batch as the first form sent): P_S rows (MySQL); on MariaDB the plugin's table locks and
    the transactions, or the transactions alone (candidates)."""
    trx = _part(parts, "trx_id") or []
    mysql = _part(parts, "blocked_thread_id")
    if mysql is not None:
        return mdl_blockers(with_trx_started(mysql, trx))
    if sessions is None:
        return ()
    if len(parts) > 1:
        table_locks = _part(parts, "table_name") or []
        return mdl_blockers(mdl_holder_records(table_locks, trx, sessions))
    if server_now is None:
        return ()
    return mdl_blockers(mdl_candidate_records(trx, sessions, server_now))


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
