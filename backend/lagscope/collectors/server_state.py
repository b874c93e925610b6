"""Server identity, clock and GTID variables, in one SELECT.

SQL (by dialect):
- MySQL:   ``SELECT UNIX_TIMESTAMP(NOW(6)), @@global.server_id, @@global.server_uuid,
  @@global.read_only, @@global.gtid_executed, @@global.gtid_mode``
- MariaDB: ``SELECT UNIX_TIMESTAMP(NOW(6)), @@global.server_id, @@global.read_only,
  @@global.gtid_binlog_pos, @@global.gtid_slave_pos, @@global.gtid_current_pos,
  @@global.gtid_strict_mode, @@global.gtid_domain_id``

It runs first in every poll batch, so the server's clock is read right after the poller's
``t0``; the clock offset is then known to within half the batch's round trip.
"""

from __future__ import annotations

from dataclasses import dataclass

from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import ClockReading, GtidState
from lagscope.collectors.values import as_float, as_int, as_text, no_space

_MYSQL_SQL = (
    "SELECT UNIX_TIMESTAMP(NOW(6)) AS now_ts, @@global.server_id AS server_id, "
    "@@global.server_uuid AS server_uuid, @@global.read_only AS read_only, "
    "@@global.gtid_executed AS gtid_executed, @@global.gtid_mode AS gtid_mode"
)
_MARIADB_SQL = (
    "SELECT UNIX_TIMESTAMP(NOW(6)) AS now_ts, @@global.server_id AS server_id, "
    "@@global.read_only AS read_only, @@global.gtid_binlog_pos AS gtid_binlog_pos, "
    "@@global.gtid_slave_pos AS gtid_slave_pos, @@global.gtid_current_pos AS gtid_current_pos, "
    "@@global.gtid_strict_mode AS gtid_strict_mode, @@global.gtid_domain_id AS gtid_domain_id"
)


@dataclass(frozen=True, slots=True)
class ServerState:
    server_now: float
    server_id: int
    server_uuid: str | None
    read_only: bool
    gtid: GtidState


def statement(dialect: Dialect) -> str:
    return _MARIADB_SQL if dialect.gtid_kind == "mariadb" else _MYSQL_SQL


# server_id is an unsigned 32-bit system variable on both products.
_SERVER_ID_MAX = 2**32 - 1


def parse(dialect: Dialect, result: ResultSet) -> ServerState:
    records = result.records()
    if len(records) != 1:
        raise ValueError(f"{len(records)} rows where one was due")
    row = records[0]
    if dialect.gtid_kind == "mariadb":
        binlog_pos = no_space(row.get("gtid_binlog_pos"))
        gtid = GtidState(
            executed=binlog_pos,
            binlog_pos=binlog_pos,
            slave_pos=no_space(row.get("gtid_slave_pos")),
            current_pos=no_space(row.get("gtid_current_pos")),
            strict_mode=bool(as_int(row.get("gtid_strict_mode"))),
            domain_id=as_int(row.get("gtid_domain_id")),
        )
    else:
        gtid = GtidState(
            executed=no_space(row.get("gtid_executed")),
            gtid_mode=as_text(row.get("gtid_mode")) or None,
        )
    server_id = as_int(row.get("server_id")) or 0
    if not 0 <= server_id <= _SERVER_ID_MAX:
        raise ValueError(f"server_id {server_id} is outside 0..{_SERVER_ID_MAX}")
    return ServerState(
        server_now=as_float(row.get("now_ts")) or 0.0,
        server_id=server_id,
        server_uuid=as_text(row.get("server_uuid")) or None,
        read_only=bool(as_int(row.get("read_only"))),
        gtid=gtid,
    )


def clock_reading(server_now: float, sent_at: float, received_at: float) -> ClockReading:
    """Offset of the server clock from the poller's, from one round trip.

    The server read its clock somewhere in [sent_at, received_at]; the midpoint is the best
    estimate and half the round trip bounds the error.
    """
    midpoint = (sent_at + received_at) / 2
    return ClockReading(offset_s=server_now - midpoint, resolution_s=(received_at - sent_at) / 2)
