"""The receive side (MySQL 8.0+ only): the transaction the I/O thread is queueing and the last one
it queued, from ``performance_schema.replication_connection_status``.
"""

from __future__ import annotations

from lagscope.collectors.cause_readings.common import _bounded, _ts
from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import ReceiveProgress

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
