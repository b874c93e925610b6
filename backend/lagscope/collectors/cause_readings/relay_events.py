"""The current row event's table: ``SHOW RELAYLOG EVENTS`` at each lagging channel's applier
position, read to the first ``Table_map``, names the table the applier is changing rows of.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from lagscope.collectors.cause_readings.common import (
    RELAY_CHANNELS_MAX,
    RELAY_EVENTS_LIMIT,
    CauseMemory,
    _bounded,
    sql_string,
)
from lagscope.collectors.cause_readings.trigger import channel_behind
from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import ChannelStatus, InstanceSnapshot, RowEventTable
from lagscope.collectors.values import as_text

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
