"""Applier threads: what each worker is doing, and MySQL's per-transaction applier lag.

SQL (by dialect):
- MySQL 8.0+: ``performance_schema.replication_applier_status_by_worker`` with every timestamp
  turned into epoch seconds in SQL by ``UNIX_TIMESTAMP()`` (the columns render in the session
  time zone; docs/replication.md, "Applier timestamps"); the zero date reads as 0 and means "unset".
- MySQL 5.7: the same table, which has no timestamps (``LAST_SEEN_TRANSACTION`` only).
- MariaDB: ``information_schema.PROCESSLIST`` rows of the replication threads (its P_S is OFF
  by default and has no commit timestamps). Workers belong to one pool shared by all
  connections, so they carry channel ``''``; with serial apply the SQL thread is worker 0.

Busy or idle: MySQL 8.0+ says it directly (``APPLYING_TRANSACTION`` is set while a worker holds a
transaction); a MariaDB worker is idle only while it waits for work from the SQL thread (the
serial SQL thread: while it has read all relay log, or sleeps for ``MASTER_DELAY``); MySQL 5.7
cannot tell (``LAST_SEEN_TRANSACTION`` may still be applying), so ``busy`` is None there.

Privileges (docs/replication.md, "Privileges"): MySQL refuses the P_S table without ``SELECT`` on
``performance_schema`` (an error, handled by the poller); MariaDB's PROCESSLIST silently hides
the system threads from a user without ``PROCESS``, so an empty answer from a running replica
is the sign (:func:`hidden_by_privilege`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import EVIDENCE_TEXT_MAX, ApplierWorker, ChannelStatus
from lagscope.collectors.values import as_float, as_int, as_text

_MYSQL_80_SQL = (
    "SELECT CHANNEL_NAME AS channel, WORKER_ID AS worker_id, THREAD_ID AS thread_id, "
    "SERVICE_STATE AS service_state, LAST_APPLIED_TRANSACTION AS last_applied_trx, "
    "UNIX_TIMESTAMP(LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP) "
    "AS last_applied_original_commit_ts, "
    "UNIX_TIMESTAMP(LAST_APPLIED_TRANSACTION_END_APPLY_TIMESTAMP) AS last_applied_end_apply_ts, "
    "APPLYING_TRANSACTION AS applying_trx, "
    "UNIX_TIMESTAMP(APPLYING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP) "
    "AS applying_original_commit_ts, "
    "UNIX_TIMESTAMP(APPLYING_TRANSACTION_START_APPLY_TIMESTAMP) AS applying_start_apply_ts, "
    "LAST_ERROR_NUMBER AS last_error_number, LAST_ERROR_MESSAGE AS last_error_message, "
    "UNIX_TIMESTAMP(NOW(6)) AS now_ts "
    "FROM performance_schema.replication_applier_status_by_worker"
)
_MYSQL_57_SQL = (
    "SELECT CHANNEL_NAME AS channel, WORKER_ID AS worker_id, THREAD_ID AS thread_id, "
    "SERVICE_STATE AS service_state, LAST_SEEN_TRANSACTION AS last_applied_trx, "
    "LAST_ERROR_NUMBER AS last_error_number, LAST_ERROR_MESSAGE AS last_error_message "
    "FROM performance_schema.replication_applier_status_by_worker"
)
_MARIADB_SQL = (
    "SELECT ID AS id, USER AS user, COMMAND AS command, STATE AS state, TIME_MS AS time_ms, "
    "INFO AS info FROM information_schema.PROCESSLIST "
    "WHERE USER = 'system user' ORDER BY ID"
)


def statement(dialect: Dialect) -> str:
    if dialect.workers == "processlist":
        return _MARIADB_SQL
    return _MYSQL_80_SQL if dialect.has_worker_timestamps else _MYSQL_57_SQL


def parse(dialect: Dialect, result: ResultSet) -> tuple[ApplierWorker, ...]:
    records = result.records()
    if dialect.workers == "processlist":
        return _mariadb_workers(records)
    return tuple(_mysql_worker(r) for r in records)


def _ts(value: Any) -> float | None:
    seconds = as_float(value)
    return seconds if seconds else None  # 0 = the zero date = unset


def grant_needed(product: str, user: str = "<monitoring user>") -> str:
    """The statement an administrator runs so that ``user`` may read the applier workers."""
    if product == "mariadb":
        return f"GRANT PROCESS ON *.* TO {user}"
    return f"GRANT SELECT ON performance_schema.* TO {user}"


def privilege_problem(product: str, user: str = "<monitoring user>") -> str:
    return "monitoring user lacks the privilege to read applier workers: " + grant_needed(
        product, user
    )


def hidden_by_privilege(
    dialect: Dialect, result: ResultSet, channels: Sequence[ChannelStatus]
) -> bool:
    """MariaDB: a replica whose SQL thread runs shows it in PROCESSLIST to a user with PROCESS;
    no replication thread at all means the user cannot see them (not that there are none)."""
    if dialect.workers != "processlist" or not any(c.sql_running for c in channels):
        return False
    return not any(as_text(r.get("command")) == "Slave_SQL" for r in result.records())


def _mysql_worker(r: dict[str, Any]) -> ApplierWorker:
    applying = as_text(r.get("applying_trx"))
    ended = _ts(r.get("last_applied_end_apply_ts"))
    now = as_float(r.get("now_ts"))
    timestamps = "now_ts" in r
    idle_s = None
    if timestamps and not applying and ended is not None and now is not None:
        idle_s = max(0.0, now - ended)
    return ApplierWorker(
        channel=as_text(r.get("channel")),
        worker_id=as_int(r.get("worker_id")) or 0,
        thread_id=as_int(r.get("thread_id")),
        state=as_text(r.get("service_state")),
        last_applied_trx=as_text(r.get("last_applied_trx")),
        applying_trx=as_text(r.get("applying_trx")),
        last_applied_original_commit_ts=_ts(r.get("last_applied_original_commit_ts")),
        last_applied_end_apply_ts=_ts(r.get("last_applied_end_apply_ts")),
        applying_original_commit_ts=_ts(r.get("applying_original_commit_ts")),
        applying_start_apply_ts=_ts(r.get("applying_start_apply_ts")),
        last_error_number=as_int(r.get("last_error_number")) or 0,
        last_error_message=as_text(r.get("last_error_message")),
        busy=bool(applying) if timestamps else None,
        idle_s=0.0 if applying else idle_s,
    )


# A parallel worker shows COMMAND 'Slave_worker', but also 'Killed' (optimistic mode retrying a
# conflicting transaction) or 'Busy' for a moment; the IO thread shows 'Connect' while it
# connects. So a worker is any replication thread that is neither the IO nor the SQL thread.
_NOT_WORKERS = frozenset({"Slave_IO", "Slave_SQL", "Connect"})
# States of a thread that holds no transaction (MariaDB 10.5–11.x, sql/rpl_parallel.cc and
# sql/slave.cc; a serial SQL thread waiting for MASTER_DELAY holds its event but applies nothing).
_IDLE_STATES = (
    "Waiting for work from SQL thread",
    "Slave has read all relay log; waiting for more updates",
    "Waiting until MASTER_DELAY",
)


def _mariadb_busy(state: str) -> bool:
    return bool(state) and not state.startswith(_IDLE_STATES)


def _mariadb_workers(records: list[dict[str, Any]]) -> tuple[ApplierWorker, ...]:
    workers = [r for r in records if as_text(r.get("command")) not in _NOT_WORKERS]
    # Serial apply: the SQL thread does the work itself and stands in as worker 0.
    rows = workers or [r for r in records if as_text(r.get("command")) == "Slave_SQL"]
    first_id = 1 if workers else 0
    return tuple(_mariadb_worker(first_id + i, r) for i, r in enumerate(rows))


def _mariadb_worker(worker_id: int, r: dict[str, Any]) -> ApplierWorker:
    state = as_text(r.get("state"))
    in_state_s = (as_float(r.get("time_ms")) or 0.0) / 1000
    busy = _mariadb_busy(state)
    return ApplierWorker(
        channel="",
        worker_id=worker_id,
        thread_id=as_int(r.get("id")),
        state=state,
        state_time_s=in_state_s,
        busy=busy,
        idle_s=0.0 if busy else in_state_s,
        statement=as_text(r.get("info"))[:EVIDENCE_TEXT_MAX],
    )


def applier_lag(dialect: Dialect, result: ResultSet) -> Mapping[str, float]:
    """Per channel: the oldest in-flight transaction's age, 0 when every worker is idle.

    Never ``now − last applied commit`` (it grows while idle).
    The figure mixes the source's commit clock with the replica's NOW: skew is included, and
    corrected upstream with the measured clock offsets.
    """
    if not dialect.has_worker_timestamps:
        return MappingProxyType({})
    lag: dict[str, float] = {}
    for r in result.records():
        channel = as_text(r.get("channel"))
        lag.setdefault(channel, 0.0)
        committed = _ts(r.get("applying_original_commit_ts"))
        now = as_float(r.get("now_ts"))
        if as_text(r.get("applying_trx")) and committed is not None and now is not None:
            lag[channel] = max(lag[channel], now - committed)
    return MappingProxyType(lag)
