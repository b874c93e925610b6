"""The sessions (MariaDB, MySQL 5.7): one ``information_schema.PROCESSLIST`` read per poll that
every other reading joins against, the server's own threads (the replication threads) first,
then the client sessions longest in their command, at most ``SESSIONS_MAX``; and the one
``INNODB_TRX`` read the transaction, blocker and candidate readings all join against.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from lagscope.collectors.cause_readings.common import SESSIONS_MAX, TRX_MAX, Record, _id, _same
from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet

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
