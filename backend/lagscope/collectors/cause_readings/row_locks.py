"""Row-lock blockers: who holds the InnoDB row lock an applier waits for. MariaDB and MySQL 5.7
read ``INNODB_LOCK_WAITS``, ``INNODB_TRX`` and ``INNODB_LOCKS`` one at a time and join them
here; MySQL 8.0+ joins ``performance_schema.data_lock_waits``, ``threads`` and ``data_locks``
in the server, then ``INNODB_TRX``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lagscope.collectors.cause_readings.common import (
    _MYSQL_APPLIER_THREADS,
    LOCK_WAITS_MAX,
    LOCKS_MAX,
    Record,
    _bounded,
    _id,
    _part,
    _ts,
)
from lagscope.collectors.cause_readings.sessions import (
    TRX_WITH_QUERY_STATEMENT,
    Sessions,
    _session_columns,
)
from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import BlockingSession
from lagscope.collectors.values import as_float, as_int, as_text

_LOCK_WAITS_SQL = (
    "SELECT requesting_trx_id AS requesting_trx_id, blocking_trx_id AS blocking_trx_id, "  # noqa: S608 - constant fragments
    "blocking_lock_id AS blocking_lock_id FROM information_schema.INNODB_LOCK_WAITS "
    f"LIMIT {LOCK_WAITS_MAX}"
)
# Only the locks a transaction waits for or that block one (InnoDB lists no others here).
_LOCKS_SQL = (
    "SELECT lock_id AS lock_id, lock_table AS lock_table FROM information_schema.INNODB_LOCKS "  # noqa: S608 - constant fragments
    f"LIMIT {LOCKS_MAX}"
)
_ROW_BLOCKERS_MYSQL_80_SQL = (
    "SELECT bt.PROCESSLIST_ID AS thread_id, rt.PROCESSLIST_ID AS blocked_thread_id, "  # noqa: S608 - constant fragments
    "bt.PROCESSLIST_USER AS user, bt.PROCESSLIST_HOST AS host, "
    "bt.PROCESSLIST_COMMAND AS command, bt.PROCESSLIST_TIME AS time_s, "
    "bt.PROCESSLIST_STATE AS state, LEFT(bt.PROCESSLIST_INFO, 500) AS statement, "
    "w.BLOCKING_ENGINE_TRANSACTION_ID AS blocking_trx_id, "
    "CONCAT(bl.OBJECT_SCHEMA, '.', bl.OBJECT_NAME) AS object_name "
    "FROM performance_schema.data_lock_waits w "
    "JOIN performance_schema.threads rt ON rt.THREAD_ID = w.REQUESTING_THREAD_ID "
    "JOIN performance_schema.threads bt ON bt.THREAD_ID = w.BLOCKING_THREAD_ID "
    "LEFT JOIN performance_schema.data_locks bl "
    "ON bl.ENGINE_LOCK_ID = w.BLOCKING_ENGINE_LOCK_ID AND bl.ENGINE = w.ENGINE "
    f"WHERE rt.NAME IN ({_MYSQL_APPLIER_THREADS}) "
    "ORDER BY rt.PROCESSLIST_ID, bt.PROCESSLIST_ID"
)


def row_blockers_statements(dialect: Dialect) -> tuple[str, ...]:
    if dialect.has_worker_timestamps:  # MySQL 8.0+: the I_S lock tables were removed
        return (_ROW_BLOCKERS_MYSQL_80_SQL, TRX_WITH_QUERY_STATEMENT)
    return (_LOCK_WAITS_SQL, TRX_WITH_QUERY_STATEMENT, _LOCKS_SQL)


def row_blocker_records(
    waits: Iterable[Mapping[str, Any]],
    trx: Iterable[Mapping[str, Any]],
    locks: Iterable[Mapping[str, Any]],
    sessions: Sessions,
) -> list[Record]:
    """``INNODB_LOCK_WAITS`` → the waiting transaction (a replication thread's) and the
    blocking one → the blocker's session (when listed), the blocking lock's table; by waiting
    then blocking thread id."""
    by_trx = {as_text(t.get("trx_id")): t for t in trx}
    tables = {as_text(lock.get("lock_id")): lock.get("lock_table") for lock in locks}
    found: list[Record] = []
    for w in waits:
        waiting = by_trx.get(as_text(w.get("requesting_trx_id")))
        blocking = by_trx.get(as_text(w.get("blocking_trx_id")))
        if waiting is None or blocking is None:
            continue
        if _id(waiting.get("thread_id")) not in sessions.system:
            continue
        session = sessions.by_id.get(_id(blocking.get("thread_id")))
        columns = _session_columns(session)
        if columns["statement"] is None:  # idle, or not listed: its transaction's statement
            columns["statement"] = blocking.get("query")
        found.append(
            {
                "thread_id": blocking.get("thread_id"),
                "blocked_thread_id": waiting.get("thread_id"),
                **columns,
                "trx_started_ts": blocking.get("started_ts"),
                "object_name": tables.get(as_text(w.get("blocking_lock_id"))),
            }
        )
    found.sort(key=lambda r: (_id(r["blocked_thread_id"]), _id(r["thread_id"])))
    return found


def blocking_trx_records(
    blockers: Iterable[Mapping[str, Any]], trx: Iterable[Mapping[str, Any]]
) -> list[Record]:
    """MySQL 8.0+: each performance_schema blocker with its blocking transaction's start and,
    when the session shows none, its statement (``⋈ INNODB_TRX`` on the transaction id)."""
    by_trx = {as_text(t.get("trx_id")): t for t in trx}
    found: list[Record] = []
    for b in blockers:
        t = by_trx.get(as_text(b.get("blocking_trx_id"))) or {}
        statement = b.get("statement")
        found.append(
            {
                **b,
                "statement": t.get("query") if statement is None else statement,
                "trx_started_ts": t.get("started_ts"),
            }
        )
    return found


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


def row_blockers(records: Iterable[Mapping[str, Any]]) -> tuple[BlockingSession, ...]:
    return tuple(_blocker(r, "row") for r in records)


def parse_row_blockers(
    dialect: Dialect, parts: Sequence[ResultSet], sessions: Sessions | None
) -> tuple[BlockingSession, ...]:
    trx = _part(parts, "trx_id") or []
    if dialect.has_worker_timestamps:
        return row_blockers(blocking_trx_records(_part(parts, "blocked_thread_id") or [], trx))
    if sessions is None:
        return ()
    waits = _part(parts, "requesting_trx_id") or []
    locks = _part(parts, "lock_table") or []
    return row_blockers(row_blocker_records(waits, trx, locks, sessions))
