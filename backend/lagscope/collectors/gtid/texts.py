"""GTID text as the collectors read it: parsed by product, parsed once per snapshot (a failure
remembered too), and counted into transactions behind (:func:`gtid_counts`).
"""

from __future__ import annotations

from typing import Literal

from lagscope.collectors.gtid.counting import GtidCounts, mariadb_counts, mysql_counts
from lagscope.collectors.gtid.intervals import _quote
from lagscope.collectors.gtid.mariadb import GtidPos
from lagscope.collectors.gtid.mysql import GtidSet

GtidKind = Literal["mysql", "mariadb"]
Gtids = GtidSet | GtidPos
"""Parsed GTID text: a MySQL set or a MariaDB position."""


def parse_gtids(kind: GtidKind, text: str) -> Gtids:
    """``text`` as ``kind`` writes it; :class:`ValueError` when it does not parse."""
    if kind == "mysql":
        return GtidSet.parse(text)
    if kind == "mariadb":
        return GtidPos.parse(text)
    raise ValueError(f"unknown product {_quote(str(kind))}: want 'mysql' or 'mariadb'")


class GtidTexts:
    """GTID texts parsed once each, by (kind, text); a failure is remembered too.

    One per snapshot (``InstanceSnapshot.parsed``): a tick reads a server's sets for its rate,
    its counts and its timeline, and a large MySQL set costs milliseconds to parse. Parsed
    values are immutable, so sharing them is safe."""

    __slots__ = ("_parsed",)

    def __init__(self) -> None:
        self._parsed: dict[tuple[str, str], Gtids | ValueError] = {}

    def parse(self, kind: GtidKind, text: str) -> Gtids:
        found = self._parsed.get((kind, text))
        if found is None:
            try:
                found = parse_gtids(kind, text)
            except ValueError as exc:
                found = exc
            self._parsed[kind, text] = found
        if isinstance(found, ValueError):
            raise ValueError(*found.args)
        return found

    def gtid_set(self, text: str) -> GtidSet:
        parsed = self.parse("mysql", text)
        assert isinstance(parsed, GtidSet)
        return parsed

    def gtid_pos(self, text: str) -> GtidPos:
        parsed = self.parse("mariadb", text)
        assert isinstance(parsed, GtidPos)
        return parsed


def count_gtids(
    source_executed: Gtids, retrieved: Gtids, executed: Gtids, strict_mode: bool = True
) -> GtidCounts:
    """:func:`gtid_counts` over parsed texts; :class:`ValueError` when their kinds differ."""
    if (
        isinstance(source_executed, GtidSet)
        and isinstance(retrieved, GtidSet)
        and isinstance(executed, GtidSet)
    ):
        return mysql_counts(source_executed, retrieved, executed)
    if (
        isinstance(source_executed, GtidPos)
        and isinstance(retrieved, GtidPos)
        and isinstance(executed, GtidPos)
    ):
        return mariadb_counts(source_executed, retrieved, executed, strict_mode)
    raise ValueError("GTID texts of different products cannot be counted together")


def gtid_counts(
    product: Literal["mysql", "mariadb"],
    source_executed: str,
    retrieved: str,
    executed: str,
    strict_mode: bool = True,
) -> GtidCounts:
    """Parse the three server strings for ``product`` and count.

    MySQL: source ``@@gtid_executed``, ``Retrieved_Gtid_Set``, ``Executed_Gtid_Set``.
    MariaDB: source ``@@gtid_binlog_pos``, ``Gtid_IO_Pos``, ``@@gtid_slave_pos``;
    ``strict_mode`` is the replica's ``@@gtid_strict_mode`` (ignored for MySQL).
    """
    if product == "mysql":
        return mysql_counts(
            GtidSet.parse(source_executed), GtidSet.parse(retrieved), GtidSet.parse(executed)
        )
    if product == "mariadb":
        return mariadb_counts(
            GtidPos.parse(source_executed),
            GtidPos.parse(retrieved),
            GtidPos.parse(executed),
            strict_mode,
        )
    raise ValueError(f"unknown product {_quote(str(product))}: want 'mysql' or 'mariadb'")
