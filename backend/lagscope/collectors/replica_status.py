"""Replica status of every channel, normalized.

SQL (one of, chosen by the dialect; docs/replication.md):
- MariaDB 10.5+:  ``SHOW ALL SLAVES STATUS`` — one row per connection, with ``Connection_name``
- MySQL ≥ 8.0.22: ``SHOW REPLICA STATUS`` — one row per channel, new column names
- MySQL < 8.0.22: ``SHOW SLAVE STATUS`` — one row per channel, old column names

Zero rows means "not a replica", which is not an error here. Columns are looked up by name,
case-insensitively, through the dialect's map; ``Seconds_Behind_*`` NULL stays None.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import ChannelStatus, IoState
from lagscope.collectors.values import as_int, as_text, no_space

_IO_STATES = {
    "yes": IoState.YES,
    "connecting": IoState.CONNECTING,
    "preparing": IoState.PREPARING,
    "no": IoState.NO,
}
# Every ``int | None`` field of the snapshot is a number the server prints or leaves NULL: a new
# one needs only its column in the dialect's map and its field on ChannelStatus.
_INT_FIELDS = tuple(f.name for f in fields(ChannelStatus) if f.type == "int | None")
_TEXT_FIELDS = (
    "io_thread_state",
    "sql_thread_state",
    "last_io_error",
    "last_sql_error",
    "last_io_error_at",
    "last_sql_error_at",
)
# Likewise every ``str | None`` field: text the server may leave NULL.
_OPTIONAL_TEXT_FIELDS = tuple(f.name for f in fields(ChannelStatus) if f.type == "str | None")


def statement(dialect: Dialect) -> str:
    return dialect.replica_status_sql


def parse(dialect: Dialect, result: ResultSet) -> tuple[ChannelStatus, ...]:
    """All channels, sorted by name (MariaDB sorts; MySQL's order is not documented)."""
    fields = [dialect.columns.get(c.lower()) for c in result.columns]
    channels = []
    for row in result.rows:
        named = {f: v for f, v in zip(fields, row, strict=True) if f is not None}
        channels.append(_channel(named))
    return tuple(sorted(channels, key=lambda c: c.channel))


def _channel(named: dict[str, Any]) -> ChannelStatus:
    ints: dict[str, Any] = {f: as_int(named.get(f)) for f in _INT_FIELDS}
    texts: dict[str, Any] = {f: as_text(named.get(f)) for f in _TEXT_FIELDS}
    optional: dict[str, Any] = {
        f: (as_text(named[f]) if named.get(f) is not None else None) for f in _OPTIONAL_TEXT_FIELDS
    }
    return ChannelStatus(
        channel=as_text(named.get("channel")),
        io_state=_IO_STATES.get(as_text(named.get("io_running")).strip().lower(), IoState.NO),
        sql_running=as_text(named.get("sql_running")).strip().lower() == "yes",
        sql_delay=as_int(named.get("sql_delay")) or 0,
        last_io_errno=as_int(named.get("last_io_errno")) or 0,
        last_sql_errno=as_int(named.get("last_sql_errno")) or 0,
        retrieved_gtids=no_space(named.get("retrieved_gtids")),
        executed_gtids=no_space(named.get("executed_gtids")),
        using_gtid=_using_gtid(named),
        **ints,
        **texts,
        **optional,
    )


def _using_gtid(named: dict[str, Any]) -> str:
    if "using_gtid" in named:  # MariaDB: No / Slave_Pos / Current_Pos
        return as_text(named["using_gtid"]) or "No"
    return "Auto_Position" if as_int(named.get("auto_position")) == 1 else "No"
