"""Heartbeat rows visible on a server: Lagscope's own table or an existing pt-heartbeat table.

SQL (by table kind):
- Lagscope: ``SELECT server_id, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', ts) FROM
  lagscope.heartbeat`` — ``ts`` is ``DATETIME(6)`` written with the source's ``UTC_TIMESTAMP(6)``;
  the difference is computed in SQL so no session time zone gets involved.
- pt-heartbeat: ``SELECT server_id, ts FROM <db>.<table>`` — ``ts`` is the updater host's ISO
  text (docs/replication.md, "The heartbeat table"); UTC unless told otherwise (pt-heartbeat
  ``--utc``).

Table names are configuration, not user text in SQL: they must match a strict identifier
pattern and are back-quoted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Literal

from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import HeartbeatReading, HeartbeatRow
from lagscope.collectors.values import as_float, as_int, as_text
from lagscope.errors import InvalidInput

_IDENT = re.compile(r"^[A-Za-z0-9_]{1,64}$")


@dataclass(frozen=True, slots=True)
class HeartbeatTable:
    """Where heartbeats live. ``utc_offset_minutes`` applies to pt-heartbeat text timestamps."""

    kind: Literal["lagscope", "pt-heartbeat"] = "lagscope"
    schema: str = "lagscope"
    table: str = "heartbeat"
    utc_offset_minutes: int = 0

    def __post_init__(self) -> None:
        for part in (self.schema, self.table):
            if not _IDENT.match(part):
                raise InvalidInput(f"heartbeat table name part {part!r} is not a plain identifier")

    @property
    def qualified(self) -> str:
        return f"`{self.schema}`.`{self.table}`"

    def statement(self) -> str:
        if self.kind == "lagscope":
            epoch_us = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ts)"
            return f"SELECT server_id, {epoch_us} FROM {self.qualified}"  # noqa: S608 - validated
        return f"SELECT server_id, ts FROM {self.qualified}"  # noqa: S608 - validated identifier

    def parse(self, result: ResultSet, server_now: float) -> HeartbeatReading:
        rows = []
        for raw_id, raw_ts in result.rows:
            ts = self._epoch(raw_ts)
            server_id = as_int(raw_id)
            if ts is not None and server_id is not None:
                rows.append(HeartbeatRow(server_id, ts))
        return HeartbeatReading(tuple(rows), server_now, f"{self.schema}.{self.table}")

    def _epoch(self, raw: object) -> float | None:
        if self.kind == "lagscope":
            micros = as_float(raw)
            return None if micros is None else micros / 1_000_000
        return parse_pt_timestamp(as_text(raw), self.utc_offset_minutes)


def parse_pt_timestamp(text: str, utc_offset_minutes: int = 0) -> float | None:
    """pt-heartbeat's ``2024-03-01T12:00:00.123456`` (or a legacy DATETIME) → epoch seconds."""
    text = text.strip()
    if not text:
        return None
    try:
        naive = datetime.fromisoformat(text.replace(" ", "T"))
    except ValueError:
        return None
    zone = timezone(timedelta(minutes=utc_offset_minutes)) if utc_offset_minutes else UTC
    stamped = naive if naive.tzinfo else naive.replace(tzinfo=zone)
    return stamped.timestamp()
