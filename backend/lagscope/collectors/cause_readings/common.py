"""What every cause reading shares: the per-connection memory (:class:`CauseMemory`), one poll's
evidence as it is gathered (:class:`EvidenceParts`), the bounds on each ``information_schema``
read, and the small helpers that bound server text and quote names back into SQL.

Each ``information_schema`` table is read alone and the joins are made in Python from records in
the collector's alias shape (:data:`Record`): MariaDB 10.11.19 crashed dropping the temporary
tables it fills for such joins (below; docs/causes.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import (
    EVIDENCE_TEXT_MAX,
    BlockingSession,
    CauseEvidence,
    OpenTransaction,
    ReceiveProgress,
    RowEventTable,
)
from lagscope.collectors.values import as_float, as_int, as_text

# How many relay log events past the applier's position are read to find its Table_map: a row
# event group starts GTID/BEGIN, (Annotate_rows), Table_map, so 10 covers several tables.
RELAY_EVENTS_LIMIT = 10
# At most this many channels' relay logs per poll (multi-source with every channel stuck is
# rare; the most behind come first).
RELAY_CHANNELS_MAX = 4

# MySQL 8.0.26 renamed the instruments (slave → replica); older servers and
# terminology_use_previous keep the old names.
_MYSQL_APPLIER_THREADS = (
    "'thread/sql/replica_sql', 'thread/sql/replica_worker', "
    "'thread/sql/slave_sql', 'thread/sql/slave_worker'"
)
_MDL_WAIT_STATE = "Waiting for table metadata lock"


def _bounded(value: Any) -> str:
    return as_text(value)[:EVIDENCE_TEXT_MAX]


def _ts(value: Any) -> float | None:
    seconds = as_float(value)
    return seconds if seconds else None  # NULL or the zero date: unset


def sql_string(text: str) -> str | None:
    """``text`` as a SQL string literal that reads the same with and without
    ``NO_BACKSLASH_ESCAPES`` (quotes doubled); None when it holds a backslash or a control
    character, which only mode-dependent escaping could carry. The literal is built here, at
    statement time, before the connection's own escaper (PyMySQL's depends on the session's
    SQL mode) could be asked; server-given names never need those characters."""
    if "\\" in text or any(ord(ch) < 32 for ch in text):
        return None
    return "'" + text.replace("'", "''") + "'"


@dataclass(slots=True)
class CauseMemory:
    """What the cause readings learned on one connection: whether MariaDB's
    METADATA_LOCK_INFO plugin answers (probed once), and each table's keys (checked once)."""

    mdl_plugin: bool | None = None
    # (schema, table) → (has_primary_key, has_usable_key); None: not visible to this user.
    keys: dict[tuple[str, str], tuple[bool, bool] | None] = field(default_factory=dict)


@dataclass(slots=True)
class EvidenceParts:
    """One poll's cause evidence as its readings are parsed (collected, then frozen)."""

    transactions: list[OpenTransaction] = field(default_factory=list)
    blockers: list[BlockingSession] = field(default_factory=list)
    tables: list[RowEventTable] = field(default_factory=list)
    receive: list[ReceiveProgress] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)

    def freeze(self) -> CauseEvidence:
        return CauseEvidence(
            transactions=tuple(self.transactions),
            blockers=tuple(self.blockers),
            tables=tuple(self.tables),
            receive=tuple(self.receive),
            problems=MappingProxyType(dict(self.problems)),
        )


# MariaDB materialises every information_schema table a statement reads into an internal
# temporary table (Aria, as soon as a column is a BLOB such as PROCESSLIST.INFO) and drops them
# all when the statement's tables are closed. 10.11.19 crashed (signal 11 in
# ha_maria::drop_table ← free_tmp_table ← close_thread_tables) six times in that clean-up while it
# ran these readings as joins of INNODB_TRX, PROCESSLIST, INNODB_LOCK_WAITS, METADATA_LOCK_INFO,
# five of them at shutdown: so no statement here reads more than one information_schema table,
# and the joins the server used to make are made below, in Python, from each table's own rows.
# performance_schema tables are storage-engine tables with indexes (data_locks is looked up by
# lock id, never scanned): MySQL 8.0+'s joins among them stay in the server.
#
# A row in the collector's alias shape: what the server-side join used to return.
Record = dict[str, Any]

# information_schema has no condition push-down for these tables: the server fills every row
# whatever the WHERE, which only bounds what is sent. The bounds keep a server with thousands of
# sessions or transactions to a bounded answer (collectors/answer_limits.py): each row is at
# most ~0.6 kB (statements cut to 500 characters), so the largest read is ~0.3 MB at worst, a
# few kB on an ordinary server.
SESSIONS_MAX = 200
TRX_MAX = 500
LOCK_WAITS_MAX = 500
LOCKS_MAX = 1000
MDL_LOCKS_MAX = 1000
BACKUP_HOLDERS_MAX = 100


def _id(value: Any) -> int:
    """A thread id (0: none; InnoDB's own transactions have thread id 0)."""
    return as_int(value) or 0


def _same(text: Any, expected: str) -> bool:
    # SQL's `=` on these utf8 columns ignores case and trailing spaces; the server's own words
    # never differ in either, but a comparison here means what it meant in SQL.
    return as_text(text).rstrip().casefold() == expected.casefold()


def _has(part: ResultSet, column: str) -> bool:
    return column in (c.lower() for c in part.columns)


def _part(parts: Sequence[ResultSet], column: str) -> list[Record] | None:
    """The records of the first answer with ``column``: each statement's aliases tell its
    answer apart."""
    for part in parts:
        if _has(part, column):
            return part.records()
    return None
