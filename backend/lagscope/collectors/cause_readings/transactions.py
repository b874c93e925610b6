"""The applier threads' open InnoDB transactions: ``INNODB_TRX`` rows of the replication threads
(MySQL 8.0+: found through ``performance_schema.threads`` by instrument name, with the
worker's ``APPLYING_TRANSACTION``). Needs PROCESS.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lagscope.collectors.cause_readings.common import (
    _MYSQL_APPLIER_THREADS,
    Record,
    _bounded,
    _id,
    _part,
    _ts,
)
from lagscope.collectors.cause_readings.sessions import TRX_STATEMENT, Sessions
from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import OpenTransaction
from lagscope.collectors.values import as_int

# MySQL 8.0+: the applier threads' processlist ids, and what each worker is applying.
_APPLIER_THREADS_MYSQL_80_SQL = (
    "SELECT th.PROCESSLIST_ID AS thread_id, COALESCE(w.APPLYING_TRANSACTION, '') AS gtid "  # noqa: S608 - constant fragments
    "FROM performance_schema.threads th "
    "LEFT JOIN performance_schema.replication_applier_status_by_worker w "
    "ON w.THREAD_ID = th.THREAD_ID "
    f"WHERE th.NAME IN ({_MYSQL_APPLIER_THREADS}) ORDER BY th.PROCESSLIST_ID"
)


def transactions_statements(dialect: Dialect) -> tuple[str, ...]:
    """MariaDB and MySQL 5.7: ``INNODB_TRX`` (the replication threads come from the sessions
    reading); MySQL 8.0+: the applier threads from performance_schema, then ``INNODB_TRX``."""
    if dialect.has_worker_timestamps:
        return (_APPLIER_THREADS_MYSQL_80_SQL, TRX_STATEMENT)
    return (TRX_STATEMENT,)


def applier_transaction_records(
    trx: Iterable[Mapping[str, Any]], appliers: Mapping[int, Any]
) -> list[Record]:
    """The transactions of the applier threads (thread id → the GTID it applies, '' when
    unknown), by thread id: ``INNODB_TRX ⋈ PROCESSLIST`` / ``⋈ threads ⋈ by_worker``."""
    found = [
        {**t, "gtid": appliers[_id(t.get("thread_id"))]}
        for t in trx
        if _id(t.get("thread_id")) in appliers
    ]
    found.sort(key=lambda r: _id(r.get("thread_id")))
    return found


def parse_transactions(
    dialect: Dialect, parts: Sequence[ResultSet], sessions: Sessions | None
) -> tuple[OpenTransaction, ...]:
    trx = _part(parts, "trx_id") or []
    if dialect.has_worker_timestamps:
        threads = _part(parts, "gtid") or []
        appliers = {_id(r.get("thread_id")): r.get("gtid") for r in threads}
    else:
        appliers = dict.fromkeys(sessions.system if sessions else (), "")
    return tuple(
        OpenTransaction(
            thread_id=_id(r.get("thread_id")),
            trx_id=_bounded(r.get("trx_id")),
            state=_bounded(r.get("state")),
            started_at=_ts(r.get("started_ts")),
            rows_modified=as_int(r.get("rows_modified")),
            rows_locked=as_int(r.get("rows_locked")),
            lock_wait_started_at=_ts(r.get("wait_started_ts")),
            operation=_bounded(r.get("operation")),
            gtid=_bounded(r.get("gtid")),
        )
        for r in applier_transaction_records(trx, appliers)
    )
