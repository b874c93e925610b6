"""The sessions that could hold what an applier waits for when the server names no holder (a
global read or backup lock, LOCK TABLES, a user lock, a state no rule knows): the client
sessions longest in their current command, candidates only; the rules keep those older than
the wait. Needs PROCESS.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lagscope.collectors.cause_readings.common import (
    _MYSQL_APPLIER_THREADS,
    Record,
    _id,
    _part,
    _same,
)
from lagscope.collectors.cause_readings.metadata_locks import _holder, with_trx_started
from lagscope.collectors.cause_readings.row_locks import _blocker
from lagscope.collectors.cause_readings.sessions import TRX_STATEMENT, Sessions, _trx_of
from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import BlockingSession
from lagscope.collectors.values import as_int, as_text

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
