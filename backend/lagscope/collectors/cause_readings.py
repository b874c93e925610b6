"""Cause readings (CAUSES.md): what holds a replica's applier, read only while it is behind.

Each function pair is one statement and its parse; the registry (``readings.py``) decides when
they are sent (:func:`behind`: the previous poll showed a channel behind or an applier busy)
and folds the parts into one :class:`CauseEvidence` per poll.

SQL (by dialect). No statement reads more than one ``information_schema`` table, nor one of them
with any other table: each is read alone, narrowed and bounded, and the joins are made here in
Python (``*_records`` functions, pure), because MariaDB 10.11.19 crashed in the clean-up of the
temporary tables it fills for such joins (below, "each table read alone"; docs/causes.md).
- The sessions (MariaDB, MySQL 5.7): one ``PROCESSLIST`` read per poll for every reading below,
  the server's own threads first (``USER='system user'``: the replication threads), then the
  client sessions longest in their command, at most ``SESSIONS_MAX``.
- The applier threads' InnoDB transactions: ``INNODB_TRX`` rows of the replication threads
  (MySQL 8.0+: of ``performance_schema.threads`` by name, with the worker's
  ``APPLYING_TRANSACTION``). Needs PROCESS.
- Row-lock blockers: MariaDB and MySQL 5.7 ``INNODB_LOCK_WAITS`` → blocking trx
  (``INNODB_TRX``) → its session, the blocking lock's table (``INNODB_LOCKS``); MySQL 8.0+
  ``performance_schema.data_lock_waits`` ⋈ ``threads`` ⋈ ``data_locks`` (5.7's I_S tables are
  gone there), then ``INNODB_TRX``.
- Metadata-lock blockers: MySQL ``performance_schema.metadata_locks`` (PENDING for an applier
  thread, GRANTED to another thread on the same object). MariaDB has no wait table: with the
  ``METADATA_LOCK_INFO`` plugin, the sessions holding a table lock on a table the waiting
  applier also holds one on (exact); without it, the sessions in a transaction that began
  before the wait (candidates, ``certain=False``). The plugin is probed once per connection.
- The sessions that could hold what an applier waits for (any lock the server names without a
  holder: a global read or backup lock, LOCK TABLES, a user lock, a state no rule knows): while
  an applier thread is neither idle nor waiting its turn, the client sessions longest in their
  current command (the sessions reading; MySQL 8.0+ ``performance_schema.threads``),
  candidates only; the rules keep those older than the wait. Needs PROCESS.
- The current row event's table: ``SHOW RELAYLOG … EVENTS IN <file> FROM <pos> LIMIT 10`` at
  the channel's applier position → the first ``Table_map`` (``table_id: N (db.table)``); MariaDB
  needs REPLICA MONITOR, MySQL REPLICATION SLAVE. Whether that table has a key row lookups can
  use: ``information_schema`` for that one table (``TABLES``, then ``STATISTICS``; InnoDB's
  dictionary by the table's id), cached per table for the connection (never a schema scan,
  never ``SHOW CREATE TABLE``: replication-manager#728).
- MySQL 8.0+ receive side: ``performance_schema.replication_connection_status``
  ``QUEUEING_TRANSACTION*`` / ``LAST_QUEUED_TRANSACTION*``.

Server text (statements, users, hosts, names) is bounded to ``EVIDENCE_TEXT_MAX`` here; names
the server gave us go back into SQL only through :func:`sql_string`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import (
    EVIDENCE_TEXT_MAX,
    ApplierWorker,
    BlockingSession,
    CauseEvidence,
    ChannelStatus,
    InstanceSnapshot,
    IoState,
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


# --- when to read: the trigger --------------------------------------------------------------

# An applier thread on one transaction this long is worth asking about even at SBM 0: a
# poll's interval, the contract's "busy for more than one poll".
BUSY_S = 1.0


def channel_behind(channel: ChannelStatus) -> bool:
    """A running applier behind its source, or behind by an unknown amount.

    A stopped SQL thread is not: nothing holds an applier that is not running (the status
    already says stopped or broken). A delayed replica (``SQL_Delay``) is behind by design:
    only lag past the delay counts. The SQL thread's state alone does not count: it has no
    duration, and a busy state at SBM 0 is a healthy replica under load."""
    if not channel.sql_running:
        return False
    sbm = channel.seconds_behind_source
    if sbm is None:
        return channel.io_state is IoState.YES
    return sbm > channel.sql_delay


def busy_long(worker: ApplierWorker, previous: InstanceSnapshot) -> bool:
    """An applier thread holding one transaction for more than ``BUSY_S``: MariaDB says how
    long it has been in its state; MySQL 8.0+ when it started applying (server clock)."""
    if not worker.busy:
        return False
    if worker.state_time_s is not None:
        return worker.state_time_s >= BUSY_S
    if worker.applying_start_apply_ts is not None:
        server_now = previous.taken_at.timestamp() + previous.clock.offset_s
        return server_now - worker.applying_start_apply_ts >= BUSY_S
    return True


def behind(previous: InstanceSnapshot) -> bool:
    """The trigger: the previous poll showed a channel behind or an applier thread busy on
    one transaction for more than a poll."""
    return any(channel_behind(c) for c in previous.channels) or any(
        busy_long(w, previous) for w in previous.workers
    )


# --- per connection memory ------------------------------------------------------------------


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


# --- each table read alone, joined here -----------------------------------------------------

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


_SYSTEM_USER = "system user"


class Sessions:
    """The sessions ``information_schema.PROCESSLIST`` listed this poll (MariaDB, MySQL 5.7):
    the server's own threads (the replication threads among them) first, then the client
    sessions longest in their current command; at most ``SESSIONS_MAX``, ``complete`` when
    the list was not cut. The monitoring connection itself is never listed."""

    __slots__ = ("by_id", "complete", "ordered", "system")

    def __init__(self, records: Iterable[Mapping[str, Any]], complete: bool) -> None:
        self.ordered: tuple[Mapping[str, Any], ...] = tuple(records)
        self.by_id: dict[int, Mapping[str, Any]] = {_id(r.get("id")): r for r in self.ordered}
        self.system = frozenset(
            i for i, r in self.by_id.items() if _same(r.get("user"), _SYSTEM_USER)
        )
        self.complete = complete

    def waiting(self, state: str) -> list[Mapping[str, Any]]:
        """The server's own threads in ``state``, by id."""
        found = [self.by_id[i] for i in sorted(self.system)]
        return [r for r in found if _same(r.get("state"), state)]

    def client(self, thread_id: int) -> Mapping[str, Any] | None:
        """Thread ``thread_id`` as a client session (what an inner join on PROCESSLIST with
        ``USER <> 'system user'`` kept): its row; an empty one when the list was cut before it
        (the session is still named, without its details); None for a thread of the server's
        own, or one gone since."""
        if thread_id <= 0 or thread_id in self.system:
            return None
        row = self.by_id.get(thread_id)
        if row is not None:
            return row
        return None if self.complete else {}


# The server's own threads first (the replication threads are what every join starts from),
# then the sessions longest in their command (a lock holder has usually been idle since it took
# its lock). A binlog dump thread (a replica or Lagscope's own binlog sample reading from this
# server) holds no lock an applier waits for.
_SESSIONS_SQL = (
    "SELECT ID AS id, USER AS user, HOST AS host, COMMAND AS command, TIME AS time, "  # noqa: S608 - constant fragments
    "{time} AS time_s, STATE AS state, LEFT(INFO, 500) AS statement, "
    "USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1) AS own_user "
    "FROM information_schema.PROCESSLIST "
    "WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ('Binlog Dump', 'Binlog Dump GTID') "
    f"ORDER BY USER = 'system user' DESC, TIME DESC, ID LIMIT {SESSIONS_MAX}"
)


def _reads_processlist(dialect: Dialect) -> bool:
    # MySQL 8.0+ reads its threads from performance_schema.threads, inside its P_S joins.
    return not dialect.has_worker_timestamps


def sessions_statement(dialect: Dialect) -> str | None:
    if not _reads_processlist(dialect):
        return None
    time = "TIME_MS / 1000" if dialect.product == "mariadb" else "TIME"
    return _SESSIONS_SQL.format(time=time)


def parse_sessions(result: ResultSet) -> Sessions:
    records = result.records()
    return Sessions(records, complete=len(records) < SESSIONS_MAX)


def _session_columns(session: Mapping[str, Any] | None) -> Record:
    s = session or {}
    return {
        "user": s.get("user"),
        "host": s.get("host"),
        "command": s.get("command"),
        "time_s": s.get("time_s"),
        "state": s.get("state"),
        "statement": s.get("statement"),
    }


# Every InnoDB transaction, each reading joining the rows it needs (each reads it itself, so
# without PROCESS each is refused and says so; its rows come from InnoDB's copy of its
# transactions, refreshed at most every 0.1 s, so a second read in a batch is a copy of the
# first). Past the bound, the transactions holding locks come first (an applier's that changed
# rows, a blocker's), then the oldest (a metadata lock's candidates). Only the row blockers use a
# transaction's statement (a blocker's session may show none).
_TRX_SQL = (
    "SELECT trx_mysql_thread_id AS thread_id, trx_id AS trx_id, trx_state AS state, "  # noqa: S608 - constant fragments
    "UNIX_TIMESTAMP(trx_started) AS started_ts, trx_rows_modified AS rows_modified, "
    "trx_rows_locked AS rows_locked, UNIX_TIMESTAMP(trx_wait_started) AS wait_started_ts, "
    "trx_operation_state AS operation{query} "
    "FROM information_schema.INNODB_TRX "
    f"ORDER BY trx_lock_structs = 0, trx_started, trx_mysql_thread_id LIMIT {TRX_MAX}"
)
TRX_STATEMENT = _TRX_SQL.format(query="")
TRX_WITH_QUERY_STATEMENT = _TRX_SQL.format(query=", LEFT(trx_query, 500) AS query")


def _trx_of(trx: Iterable[Mapping[str, Any]]) -> dict[int, Mapping[str, Any]]:
    """Transactions by their session (one each)."""
    found: dict[int, Mapping[str, Any]] = {}
    for t in trx:
        found.setdefault(_id(t.get("thread_id")), t)
    return found


def _started(trx_of: Mapping[int, Mapping[str, Any]], thread_id: int) -> Any:
    t = trx_of.get(thread_id)
    return t.get("started_ts") if t is not None else None


# --- the applier's open transactions --------------------------------------------------------

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


# --- row-lock blockers ----------------------------------------------------------------------

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


# --- metadata-lock blockers -----------------------------------------------------------------

MDL_PLUGIN_PROBE_SQL = (
    "SELECT COUNT(*) AS installed FROM information_schema.PLUGINS "
    "WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO' AND PLUGIN_STATUS = 'ACTIVE'"
)
# MariaDB with the plugin: every session's table locks. The waiting applier already holds a
# lesser lock on the table it waits for (an ALTER holds SHARED_UPGRADABLE while it waits to
# upgrade): the other sessions' table locks on it block it.
_MDL_TABLE_LOCKS_MARIADB_SQL = (
    "SELECT THREAD_ID AS thread_id, TABLE_SCHEMA AS table_schema, TABLE_NAME AS table_name "  # noqa: S608 - constant fragments
    "FROM information_schema.METADATA_LOCK_INFO WHERE LOCK_TYPE = 'Table metadata lock' "
    f"LIMIT {MDL_LOCKS_MAX}"
)
_MDL_MYSQL_SQL = (
    "SELECT DISTINCT ht.PROCESSLIST_ID AS thread_id, wt.PROCESSLIST_ID AS blocked_thread_id, "  # noqa: S608 - constant fragments
    "ht.PROCESSLIST_USER AS user, ht.PROCESSLIST_HOST AS host, "
    "ht.PROCESSLIST_COMMAND AS command, ht.PROCESSLIST_TIME AS time_s, "
    "ht.PROCESSLIST_STATE AS state, LEFT(ht.PROCESSLIST_INFO, 500) AS statement, "
    "CONCAT(h.OBJECT_SCHEMA, '.', h.OBJECT_NAME) AS object_name, 1 AS certain, "
    "w.OBJECT_TYPE AS object_type "
    "FROM performance_schema.metadata_locks w "
    "JOIN performance_schema.threads wt ON wt.THREAD_ID = w.OWNER_THREAD_ID "
    "JOIN performance_schema.metadata_locks h ON h.OBJECT_TYPE = w.OBJECT_TYPE "
    "AND h.OBJECT_SCHEMA <=> w.OBJECT_SCHEMA AND h.OBJECT_NAME <=> w.OBJECT_NAME "
    "AND h.LOCK_STATUS = 'GRANTED' AND h.OWNER_THREAD_ID <> w.OWNER_THREAD_ID "
    # Every writer holds the global and commit locks INTENTION_EXCLUSIVE, which never conflict
    # with each other: only a stronger hold (FLUSH TABLES WITH READ LOCK's SHARED) blocks.
    "AND NOT (h.LOCK_TYPE = 'INTENTION_EXCLUSIVE' AND w.LOCK_TYPE = 'INTENTION_EXCLUSIVE') "
    "JOIN performance_schema.threads ht ON ht.THREAD_ID = h.OWNER_THREAD_ID "
    f"WHERE w.LOCK_STATUS = 'PENDING' AND wt.NAME IN ({_MYSQL_APPLIER_THREADS}) "
    "ORDER BY wt.PROCESSLIST_ID, ht.PROCESSLIST_ID"
)


# MariaDB with the plugin: the backup lock's holders. FLUSH TABLES WITH READ LOCK holds it in
# MDL_BACKUP_FTWRL1/2, a BACKUP STAGE in MDL_BACKUP_START … WAIT_COMMIT (seen on 10.11 on the lab);
# the modes every statement takes (DML, DDL, COMMIT…) never block an applier, so they are left out.
_BACKUP_LOCK_WAIT_STATE = "Waiting for backup lock"
_BACKUP_HOLDERS_MARIADB_SQL = (
    "SELECT THREAD_ID AS holder_thread_id FROM information_schema.METADATA_LOCK_INFO "  # noqa: S608 - constant fragments
    "WHERE LOCK_TYPE = 'Backup lock' AND LOCK_MODE NOT IN ('MDL_BACKUP_DML', "
    "'MDL_BACKUP_TRANS_DML', 'MDL_BACKUP_SYS_DML', 'MDL_BACKUP_DDL', 'MDL_BACKUP_ALTER_COPY', "
    f"'MDL_BACKUP_COMMIT') LIMIT {BACKUP_HOLDERS_MAX}"
)


def backup_holders_statements(dialect: Dialect, memory: CauseMemory) -> tuple[str, ...]:
    """MariaDB with METADATA_LOCK_INFO only (MySQL's metadata_locks reading covers the backup
    lock already; without the plugin the lock sessions are the candidates)."""
    if dialect.product != "mariadb" or not memory.mdl_plugin:
        return ()
    return (_BACKUP_HOLDERS_MARIADB_SQL, TRX_STATEMENT)


def mdl_probe_statement(dialect: Dialect, memory: CauseMemory) -> str | None:
    if dialect.product != "mariadb" or memory.mdl_plugin is not None:
        return None
    return MDL_PLUGIN_PROBE_SQL


def parse_mdl_probe(result: ResultSet, memory: CauseMemory) -> None:
    memory.mdl_plugin = bool(result.rows and as_int(result.rows[0][0]))


def mdl_blockers_statements(dialect: Dialect, memory: CauseMemory) -> tuple[str, ...]:
    """MySQL: P_S ``metadata_locks``, then ``INNODB_TRX``. MariaDB: exact with the plugin
    (its table locks), candidates without (``INNODB_TRX`` alone, with the sessions reading);
    the plugin's answer is known from the second triggered poll on (the probe rides in the
    first one's batch), until then the candidates are read."""
    if dialect.product != "mariadb":
        return (_MDL_MYSQL_SQL, TRX_STATEMENT)
    if memory.mdl_plugin:
        return (_MDL_TABLE_LOCKS_MARIADB_SQL, TRX_STATEMENT)
    return (TRX_STATEMENT,)


def _distinct(records: Iterable[Record]) -> list[Record]:
    seen: set[tuple[Any, ...]] = set()
    kept: list[Record] = []
    for r in records:
        key = tuple(r.items())
        if key not in seen:
            seen.add(key)
            kept.append(r)
    return kept


def _by_waiter(records: list[Record]) -> list[Record]:
    return sorted(records, key=lambda r: (_id(r["blocked_thread_id"]), _id(r["thread_id"])))


def _holder(
    thread_id: int, waiter: int, session: Mapping[str, Any], trx_of: Mapping[int, Mapping[str, Any]]
) -> Record:
    return {
        "thread_id": thread_id,
        "blocked_thread_id": waiter,
        **_session_columns(session),
        "trx_started_ts": _started(trx_of, thread_id),
    }


def mdl_holder_records(
    table_locks: Iterable[Mapping[str, Any]],
    trx: Iterable[Mapping[str, Any]],
    sessions: Sessions,
) -> list[Record]:
    """MariaDB with METADATA_LOCK_INFO: for each replication thread waiting for a table
    metadata lock, the client sessions holding a table lock on a table it holds one on."""
    trx_of = _trx_of(trx)
    locks = [
        (_id(lock.get("thread_id")), (lock.get("table_schema"), lock.get("table_name")))
        for lock in table_locks
    ]
    held: dict[int, set[tuple[Any, Any]]] = {}
    for thread_id, table in locks:
        if None not in table:  # a NULL name equals nothing in SQL
            held.setdefault(thread_id, set()).add(table)
    found: list[Record] = []
    for waiter in sessions.waiting(_MDL_WAIT_STATE):
        waiter_id = _id(waiter.get("id"))
        mine = held.get(waiter_id, set())
        for thread_id, table in locks:
            if thread_id == waiter_id or table not in mine:
                continue
            session = sessions.client(thread_id)
            if session is None:
                continue
            record = _holder(thread_id, waiter_id, session, trx_of)
            record.update(object_name=f"{table[0]}.{table[1]}", certain=1)
            found.append(record)
    return _by_waiter(_distinct(found))


def mdl_candidate_records(
    trx: Iterable[Mapping[str, Any]], sessions: Sessions, server_now: float
) -> list[Record]:
    """MariaDB without the plugin: for each replication thread waiting for a table metadata
    lock, the client sessions in a transaction that began before the wait (TIME is whole
    seconds in the state, so the bound errs by < 1 s towards including). ``server_now``: the
    server's clock this poll, taken to the second as ``NOW()`` is."""
    trx = list(trx)
    now = math.floor(server_now)
    found: list[Record] = []
    for waiter in sessions.waiting(_MDL_WAIT_STATE):
        waiting_s = as_int(waiter.get("time"))
        if waiting_s is None:
            continue
        for t in trx:
            started = as_float(t.get("started_ts"))
            thread_id = _id(t.get("thread_id"))
            session = sessions.client(thread_id)
            if started is None or started > now - waiting_s or session is None:
                continue
            record = _holder(thread_id, _id(waiter.get("id")), session, {thread_id: t})
            record.update(object_name="", certain=0)
            found.append(record)
    return _by_waiter(found)


def backup_holder_records(
    holders: Iterable[Mapping[str, Any]],
    trx: Iterable[Mapping[str, Any]],
    sessions: Sessions,
) -> list[Record]:
    """MariaDB with METADATA_LOCK_INFO: for each replication thread waiting for the backup
    lock, the client sessions holding it in a mode that blocks (FTWRL, a BACKUP STAGE)."""
    trx_of = _trx_of(trx)
    holder_ids = [_id(h.get("holder_thread_id")) for h in holders]
    found: list[Record] = []
    for waiter in sessions.waiting(_BACKUP_LOCK_WAIT_STATE):
        waiter_id = _id(waiter.get("id"))
        for thread_id in holder_ids:
            session = sessions.client(thread_id)
            if thread_id == waiter_id or session is None:
                continue
            record = _holder(thread_id, waiter_id, session, trx_of)
            record.update(object_name="", certain=1, object_type="BACKUP LOCK")
            found.append(record)
    return _by_waiter(_distinct(found))


def with_trx_started(
    records: Iterable[Mapping[str, Any]], trx: Iterable[Mapping[str, Any]]
) -> list[Record]:
    """MySQL: performance_schema rows with their session's transaction start
    (``LEFT JOIN INNODB_TRX`` on the processlist id)."""
    trx_of = _trx_of(trx)
    return [{**r, "trx_started_ts": _started(trx_of, _id(r.get("thread_id")))} for r in records]


# MySQL's metadata_locks OBJECT_TYPE → the lock's kind, as the applier's wait state names it
# ("Waiting for global read lock", "Waiting for backup lock"…; analysis/causes/states.py). A
# table's is "metadata"; MariaDB's readings read table locks only.
MDL_KINDS = {
    "TABLE": "metadata",
    "GLOBAL": "global read",
    "COMMIT": "global read",
    "BACKUP LOCK": "backup",
    "USER LEVEL LOCK": "user",
    "SCHEMA": "schema metadata",
    "TABLESPACE": "tablespace metadata",
    "FUNCTION": "stored function metadata",
    "PROCEDURE": "stored procedure metadata",
    "TRIGGER": "trigger metadata",
    "EVENT": "event metadata",
    "LOCKING SERVICE": "locking service",
    "FOREIGN KEY": "foreign key metadata",
    "CHECK CONSTRAINT": "check constraint metadata",
    "COLUMN STATISTICS": "column statistics",
    "RESOURCE_GROUPS": "resource groups metadata",
    "SRID": "srid metadata",
    "ACL_CACHE": "acl cache",
}


def mdl_blockers(records: Iterable[Mapping[str, Any]]) -> tuple[BlockingSession, ...]:
    return tuple(
        _blocker(
            r,
            MDL_KINDS.get(as_text(r.get("object_type")).upper(), "metadata"),
            certain=bool(as_int(r.get("certain"))),
        )
        for r in records
    )


def parse_mdl_blockers(
    parts: Sequence[ResultSet], sessions: Sessions | None, server_now: float | None
) -> tuple[BlockingSession, ...]:
    """Which form was sent is told by its answers, not by the probe (answered in the same
    batch as the first form sent): P_S rows (MySQL); on MariaDB the plugin's table locks and
    the transactions, or the transactions alone (candidates)."""
    trx = _part(parts, "trx_id") or []
    mysql = _part(parts, "blocked_thread_id")
    if mysql is not None:
        return mdl_blockers(with_trx_started(mysql, trx))
    if sessions is None:
        return ()
    if len(parts) > 1:
        table_locks = _part(parts, "table_name") or []
        return mdl_blockers(mdl_holder_records(table_locks, trx, sessions))
    if server_now is None:
        return ()
    return mdl_blockers(mdl_candidate_records(trx, sessions, server_now))


def parse_backup_holders(
    parts: Sequence[ResultSet], sessions: Sessions | None
) -> tuple[BlockingSession, ...]:
    if sessions is None:
        return ()
    holders = _part(parts, "holder_thread_id") or []
    trx = _part(parts, "trx_id") or []
    return mdl_blockers(backup_holder_records(holders, trx, sessions))


def mdl_problem(
    dialect: Dialect, channels: Iterable[ChannelStatus], found: bool, memory: CauseMemory
) -> str | None:
    """An applier waits for a metadata lock and nobody is seen holding it: say what would
    show the holder rather than leave the blank unexplained."""
    waiting = any(c.sql_thread_state == _MDL_WAIT_STATE for c in channels)
    if not waiting or found:
        return None
    if dialect.product == "mariadb" and not memory.mdl_plugin:
        return (
            "the applier waits for a metadata lock and no session is in a transaction older "
            "than the wait; the METADATA_LOCK_INFO plugin (INSTALL SONAME 'metadata_lock_info') "
            "would name the holder (LOCK TABLES, FLUSH TABLES … also hold them)"
        )
    if dialect.product == "mariadb":
        return (
            "the applier waits for a metadata lock and METADATA_LOCK_INFO shows no other "
            "session holding one on a table the applier holds (a lock on a table it has not "
            "opened yet is not shown)"
        )
    return (
        "the applier waits for a metadata lock and performance_schema.metadata_locks shows "
        "no holder: enable the wait/lock/metadata/sql/mdl instrument (off by default in 5.7)"
    )


# --- the sessions that could hold what an applier waits for -----------------------------------

# The lock a candidate session is offered for: any (the state table decides which lock the
# applier waits for; a session in its command since before the wait could hold any of them).
SESSION_LOCK = "session"
# Sessions listed per poll at most (longest in their command first).
LOCK_SESSIONS_MAX = 20
# MariaDB / MySQL 5.7: while an applier thread is in a state that is neither idle nor waiting its
# turn (applier_workers' idle states), the client sessions longest in their current command:
# what a global read lock, a backup stage, LOCK TABLES or a user lock left behind looks like from
# PROCESSLIST (a FLUSH TABLES WITH READ LOCK holder sits idle, its statement gone). The rules keep
# those in their command since before the wait began (the SQL thread's own TIME counts from its
# event's timestamp, not from its wait, so it cannot bound them here). The server's own sessions
# (replication, daemons) and the monitoring user's (Lagscope's connections from every worker,
# idle between polls; its grants take no lock) are left out.
_NOT_APPLIERS = ("Slave_IO", "Connect", "Daemon", "Binlog Dump", "Binlog Dump GTID")
_APPLIER_AT_REST = (
    "Slave has read all relay log",
    "Waiting for work from SQL thread",
    "Waiting for prior transaction",
    "Waiting until MASTER_DELAY",
)
_NOT_HOLDERS = ("Daemon", "Binlog Dump", "Binlog Dump GTID")


def _one_of(text: Any, words: Sequence[str]) -> bool:
    return any(_same(text, w) for w in words)


def _applier_waiting(sessions: Sessions) -> Mapping[str, Any] | None:
    """The first replication thread (by id) neither idle nor waiting its turn."""
    for thread_id in sorted(sessions.system):
        r = sessions.by_id[thread_id]
        state = as_text(r.get("state")).casefold()
        if _one_of(r.get("command"), _NOT_APPLIERS) or not state.strip():
            continue
        if not any(state.startswith(rest.casefold()) for rest in _APPLIER_AT_REST):
            return r
    return None


def lock_session_records(trx: Iterable[Mapping[str, Any]], sessions: Sessions) -> list[Record]:
    """The client sessions longest in their command (``TIME`` descending, then id), at most
    ``LOCK_SESSIONS_MAX``, while an applier thread waits; none while every one is at rest."""
    waiter = _applier_waiting(sessions)
    if waiter is None:
        return []
    candidates = [
        r
        for r in sessions.ordered
        if _id(r.get("id")) not in sessions.system
        and not as_int(r.get("own_user"))
        and not _one_of(r.get("command"), _NOT_HOLDERS)
    ]
    # ORDER BY TIME DESC, ID: a NULL time last.
    candidates.sort(
        key=lambda r: (r.get("time") is None, -(as_int(r.get("time")) or 0), _id(r.get("id")))
    )
    trx_of = _trx_of(trx)
    found: list[Record] = []
    for r in candidates[:LOCK_SESSIONS_MAX]:
        record = _holder(_id(r.get("id")), _id(waiter.get("id")), r, trx_of)
        record.update(object_name="", certain=0)
        found.append(record)
    return found


# MySQL 8.0+: the same from performance_schema.threads (PROCESSLIST is deprecated there).
_LOCK_SESSIONS_MYSQL_80_SQL = (
    "SELECT p.PROCESSLIST_ID AS thread_id, a.PROCESSLIST_ID AS blocked_thread_id, "  # noqa: S608 - constant fragments
    "p.PROCESSLIST_USER AS user, p.PROCESSLIST_HOST AS host, "
    "p.PROCESSLIST_COMMAND AS command, p.PROCESSLIST_TIME AS time_s, "
    "p.PROCESSLIST_STATE AS state, LEFT(p.PROCESSLIST_INFO, 500) AS statement, "
    "'' AS object_name, 0 AS certain "
    "FROM (SELECT PROCESSLIST_ID FROM performance_schema.threads "
    f"WHERE NAME IN ({_MYSQL_APPLIER_THREADS}) "
    "AND COALESCE(PROCESSLIST_STATE, '') <> '' "
    "AND PROCESSLIST_STATE NOT LIKE '%has read all relay log%' "
    "AND PROCESSLIST_STATE NOT LIKE 'Waiting for an event from Coordinator%' "
    "AND PROCESSLIST_STATE NOT LIKE 'Waiting for preceding transaction%' "
    "AND PROCESSLIST_STATE NOT LIKE 'Waiting for dependent transaction%' "
    "AND PROCESSLIST_STATE NOT LIKE 'Waiting until %_DELAY%' "
    "ORDER BY PROCESSLIST_ID LIMIT 1) a "
    "JOIN performance_schema.threads p ON p.NAME = 'thread/sql/one_connection' "
    "AND p.PROCESSLIST_ID <> CONNECTION_ID() "
    "AND p.PROCESSLIST_USER <> SUBSTRING_INDEX(CURRENT_USER(), '@', 1) "
    "AND p.PROCESSLIST_COMMAND NOT IN ('Daemon', 'Binlog Dump', 'Binlog Dump GTID') "
    "ORDER BY p.PROCESSLIST_TIME DESC, p.PROCESSLIST_ID "
    f"LIMIT {LOCK_SESSIONS_MAX}"
)


def lock_sessions_statements(dialect: Dialect) -> tuple[str, ...]:
    """MariaDB and MySQL 5.7: ``INNODB_TRX`` (the sessions come from the sessions reading);
    MySQL 8.0+: performance_schema's threads, then ``INNODB_TRX``."""
    if dialect.has_worker_timestamps:
        return (_LOCK_SESSIONS_MYSQL_80_SQL, TRX_STATEMENT)
    return (TRX_STATEMENT,)


def parse_lock_sessions(
    parts: Sequence[ResultSet], sessions: Sessions | None
) -> tuple[BlockingSession, ...]:
    """Each session once, as a candidate for any lock."""
    trx = _part(parts, "trx_id") or []
    mysql = _part(parts, "blocked_thread_id")
    if mysql is not None:
        records = with_trx_started(mysql, trx)
    elif sessions is not None:
        records = lock_session_records(trx, sessions)
    else:
        records = []
    found: dict[int, BlockingSession] = {}
    for r in records:
        session = _blocker(r, SESSION_LOCK, certain=False)
        found.setdefault(session.thread_id, session)
    return tuple(found.values())


# --- MySQL 8.0+ receive side ----------------------------------------------------------------

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


# --- the current row event's table ----------------------------------------------------------

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


# --- does that table have a key -------------------------------------------------------------


def unchecked_tables(previous: InstanceSnapshot, memory: CauseMemory) -> list[tuple[str, str]]:
    """Tables the previous poll's row events named whose keys this connection has not read."""
    tables = previous.evidence.tables if previous.evidence else ()
    wanted = {(t.schema, t.table) for t in tables if (t.schema, t.table) not in memory.keys}
    return sorted(wanted)


def table_keys_statements(schema: str, table: str) -> tuple[str, str] | None:
    """One named table (``TABLES`` tells "no index" from "not visible to this user") and its
    indexes, each table read alone; the equalities on both names let the server open that one
    table only."""
    s, t = sql_string(schema), sql_string(table)
    if s is None or t is None:
        return None
    where = f"WHERE TABLE_SCHEMA = {s} AND TABLE_NAME = {t}"
    return (
        "SELECT TABLE_SCHEMA AS table_schema, TABLE_NAME AS table_name "  # noqa: S608 - literals quoted by sql_string
        f"FROM information_schema.TABLES {where}",
        "SELECT TABLE_SCHEMA AS table_schema, TABLE_NAME AS table_name, "  # noqa: S608 - literals quoted by sql_string
        "INDEX_NAME AS index_name, NON_UNIQUE AS non_unique, NULLABLE AS nullable "
        f"FROM information_schema.STATISTICS {where}",
    )


def _name(r: Mapping[str, Any]) -> tuple[str, str]:
    return as_text(r.get("table_schema")), as_text(r.get("table_name"))


def table_index_records(parts: Sequence[ResultSet]) -> list[Record]:
    """Index rows per table. The tables' own answers (no ``index_name``) stand for the
    ``TABLES LEFT JOIN STATISTICS`` the server is not asked to make: a table it shows
    without an index gives one row without one; with no such answer (InnoDB's dictionary),
    the index rows are all there is. Empty answers (a ``SET``) carry nothing."""
    tables = [r for p in parts if p.columns and not _has(p, "index_name") for r in p.records()]
    indexes = [r for p in parts if _has(p, "index_name") for r in p.records()]
    if not tables:
        return indexes
    by_table: dict[tuple[str, str], list[Record]] = {}
    for r in indexes:
        by_table.setdefault(_name(r), []).append(r)
    found: list[Record] = []
    for t in tables:
        rows = by_table.get(_name(t))
        found.extend(rows or [{**t, "index_name": None, "non_unique": None, "nullable": None}])
    return found


def _rows_by_table(records: Iterable[Record]) -> dict[tuple[str, str], list[Record]]:
    rows: dict[tuple[str, str], list[Record]] = {}
    for r in records:
        rows.setdefault(_name(r), []).append(r)
    return rows


def _keys(rows: Iterable[Mapping[str, Any]]) -> tuple[bool, bool]:
    """(has primary key, has a unique key over NOT NULL columns only) from index rows."""
    unique: dict[str, bool] = {}  # index → every column NOT NULL
    for r in rows:
        index = as_text(r.get("index_name"))
        if not index or as_int(r.get("non_unique")):
            continue
        not_null = as_text(r.get("nullable")).upper() != "YES"
        unique[index] = unique.get(index, True) and not_null
    return "PRIMARY" in unique, any(unique.values())


def parse_table_keys(
    result: ResultSet, asked: Iterable[tuple[str, str]], memory: CauseMemory
) -> None:
    """Cache, per asked table, (has primary key, has a unique key over NOT NULL columns only),
    or None when the server shows no such table (this user may not see it). The answers of
    several tables arrive together; their name columns tell them apart."""
    rows = _rows_by_table(table_index_records(result.each()))
    for name in asked:
        memory.keys[name] = _keys(rows[name]) if name in rows else None


# InnoDB's own dictionary answers for a table the user has no privilege on (a monitoring user
# rarely has SELECT on the application's tables, and ``information_schema.TABLES`` hides those):
# it needs PROCESS only, which the applier readings need anyway. InnoDB clusters a table on its
# primary key, else on its first UNIQUE index over NOT NULL columns, else on a hidden row id
# (GEN_CLUST_INDEX): the clustered index alone (TYPE bit 1; bit 2 = unique) says both answers.
_DICTIONARY_TABLES = {
    "old": ("INNODB_SYS_TABLES", "INNODB_SYS_INDEXES"),  # MariaDB, MySQL 5.7
    "new": ("INNODB_TABLES", "INNODB_INDEXES"),  # MySQL 8.0+
}
# The table's id, from the first statement to the second of the same batch (session scope): the
# dictionary's indexes name their table by id only, and a statement reading both tables is the
# join this module never sends. Set on every use (NULL when the table is not found), so a value
# from an earlier poll is never read.
_TABLE_ID_VARIABLE = "@lagscope_table_id"


def table_dictionary_statements(
    dialect: Dialect, schema: str, table: str
) -> tuple[str, str] | None:
    """The clustered index of one InnoDB table, from InnoDB's dictionary (``db/table`` names;
    a name InnoDB stores encoded does not match: the keys then stay unknown): the table's id,
    then that id's clustered index."""
    s, t = sql_string(schema), sql_string(table)
    if s is None or t is None:
        return None
    old = dialect.product == "mariadb" or dialect.name == "mysql-5.7"
    tables, indexes = _DICTIONARY_TABLES["old" if old else "new"]
    return (
        f"SET {_TABLE_ID_VARIABLE} = (SELECT TABLE_ID FROM information_schema.{tables} "  # noqa: S608 - literals quoted by sql_string
        f"WHERE NAME = CONCAT({s}, '/', {t}))",
        f"SELECT {s} AS table_schema, {t} AS table_name, NAME AS index_name, "  # noqa: S608 - literals quoted by sql_string
        "IF(TYPE & 3 = 3, 0, 1) AS non_unique, 'NO' AS nullable "
        f"FROM information_schema.{indexes} "
        f"WHERE TABLE_ID = {_TABLE_ID_VARIABLE} AND TYPE & 1 = 1",
    )


def parse_table_dictionary(
    result: ResultSet, memory: CauseMemory, asked: Iterable[tuple[str, str]] = ()
) -> None:
    """Fill in the keys of the tables no earlier check answered for this user; ``asked`` tables
    the dictionary does not show either are remembered as unknown."""
    asked = list(asked)
    for name, rows in _rows_by_table(table_index_records(result.each())).items():
        if name in asked or (name in memory.keys and memory.keys[name] is None):
            memory.keys[name] = _keys(rows)
    for name in asked:
        memory.keys.setdefault(name, None)


def hidden_tables(tables: Iterable[RowEventTable], memory: CauseMemory) -> list[str]:
    return [
        f"{t.schema}.{t.table}"
        for t in tables
        if (t.schema, t.table) in memory.keys and memory.keys[(t.schema, t.table)] is None
    ]
