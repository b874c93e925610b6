"""What every lab incident shares: the :class:`Incident` it returns, the schema its tables live in,
the queries and polled waits it reads the servers with (never a fixed sleep), the applier's
threads and transactions as the replica shows them, how far behind a replica is in GTIDs, and
the plain session a lock incident holds its locks in.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

import pymysql
import pymysql.cursors

from lagscope.errors import InvalidInput
from lagscope.lab.servers import LabError
from lagscope.lab.topology import Lab

SCHEMA = "lab_incidents"
MAX_ROWS = 50_000_000
# How long the sized incidents keep the applier busy: a large transaction must last past the
# diagnosis's "large" threshold (5 s) and then some polls; an ALTER long enough to be seen.
LARGE_TRX_LASTING_S = 10.0
LONG_ALTER_LASTING_S = 6.0
# The ALTER computes a SHA-256 per row while copying: 2.3 times a filled row's cost on the lab
# (a plain ADD COLUMN copies at 0.7, so a long one needed many more rows filled first).
ALTER_COST = 2.0
NO_KEY_LASTING_S = 10.0
# The applier's threads (SQL thread, parallel workers, IO thread) in MariaDB's PROCESSLIST.
SYSTEM_USER = "system user"
_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]{0,63}")
# Never under 0.1 s: InnoDB refreshes its INFORMATION_SCHEMA transaction and lock tables only
# when they have not been read for 0.1 s, so a faster wait loop (0.05 s on a fast box, where
# each query returns at once) read the same stale INNODB_TRX for 30 s and missed the applier's
# LOCK WAIT.
_POLL_S = 0.25
T = TypeVar("T")


@dataclass(frozen=True)
class Incident:
    """What an incident made happen, for a test to find in Lagscope's readings."""

    name: str
    # The cause label (analysis/causes) Lagscope should name.
    cause: str
    # The replica on which it shows (the other replicas may show it too: a large transaction
    # reaches every replica).
    replica: str
    schema: str | None = None
    table: str | None = None
    # CONNECTION_ID() of the session on the replica that blocks the applier.
    session_id: int | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    # When the cause began (epoch s, this machine's clock): the triggering statement sent, the
    # load started, the setting changed — for measuring how soon a monitor names it.
    started_at: float | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["details"] = dict(self.details)
        return data


def _table_name(table: str) -> str:
    """Identifiers cannot be query parameters: only ``[a-z][a-z0-9_]*`` names are used."""
    if not _IDENTIFIER.fullmatch(table):
        raise InvalidInput(f"incident table names are [a-z][a-z0-9_]{{0,63}}, not {table!r}")
    return table


def _sql(template: str, table: str) -> str:
    """``template`` with ``{t}`` standing for ``lab_incidents.<table>`` (a checked name)."""
    return template.replace("{t}", f"{SCHEMA}.{_table_name(table)}")


def query(lab: Lab, name: str, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """One statement as the lab's admin on server ``name``; rows as dicts."""
    with lab.connect(name) as conn, conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute(sql, args)
        return list(cur.fetchall())


def wait_for(check: Callable[[], T | None], timeout_s: float, what: str) -> T:
    """Poll ``check`` until it returns something truthy; :class:`LabError` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    last: object = None
    while True:
        value = check()
        if value:
            return value
        last = value
        if time.monotonic() >= deadline:
            raise LabError(f"timed out after {timeout_s:g} s waiting for {what}; last: {last!r}")
        time.sleep(_POLL_S)


def applier_threads(lab: Lab, replica: str) -> list[dict[str, Any]]:
    """The replica's replication threads (``system user``) from PROCESSLIST."""
    return query(
        lab,
        replica,
        "SELECT ID, COMMAND, STATE, INFO, TIME_MS FROM information_schema.PROCESSLIST"
        " WHERE USER = %s ORDER BY ID",
        (SYSTEM_USER,),
    )


def applier_transactions(lab: Lab, replica: str) -> list[dict[str, Any]]:
    """INNODB_TRX rows of the replica's applier threads."""
    return query(
        lab,
        replica,
        "SELECT t.trx_id, t.trx_state, t.trx_started, t.trx_rows_modified, t.trx_rows_locked,"
        " t.trx_wait_started, t.trx_operation_state, t.trx_mysql_thread_id, t.trx_query"
        " FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p"
        " ON p.ID = t.trx_mysql_thread_id WHERE p.USER = %s",
        (SYSTEM_USER,),
    )


def _state_shown(lab: Lab, replica: str, pattern: str) -> dict[str, Any] | None:
    for thread in applier_threads(lab, replica):
        if re.search(pattern, str(thread["STATE"] or "")):
            return thread
    return None


def _running(lab: Lab) -> list[str]:
    return [s.name for s in lab.servers if lab.is_running(s.name)]


def _check_replica(lab: Lab, replica: str) -> None:
    if replica == "source" or replica not in {r.name for r in lab.replicas}:
        raise InvalidInput(f"{replica!r} is not a replica of this lab")


def _source_gtid(lab: Lab) -> str:
    return str(query(lab, "source", "SELECT @@global.gtid_binlog_pos AS pos")[0]["pos"])


def not_received(lab: Lab, replica: str) -> int:
    """Transactions the source has written (domain 0) that ``replica`` has not received yet."""
    source = _seq(_source_gtid(lab))
    rows = query(lab, replica, "SHOW ALL SLAVES STATUS")
    received = max((_seq(str(r["Gtid_IO_Pos"] or "")) for r in rows), default=0)
    return max(0, source - received)


def not_applied(lab: Lab, replica: str) -> int:
    """Transactions the source has written (domain 0) that ``replica`` has not applied yet."""
    source = _seq(_source_gtid(lab))
    applied = query(lab, replica, "SELECT @@global.gtid_slave_pos AS pos")[0]["pos"]
    return max(0, source - _seq(str(applied)))


def _seq(gtids: str) -> int:
    """Domain 0's sequence number in a GTID list (the lab writes domain 0 only)."""
    for part in gtids.split(","):
        domain, _, rest = part.strip().partition("-")
        if domain == "0" and rest:
            return int(rest.rsplit("-", 1)[1])
    return 0


@contextlib.contextmanager
def _session(lab: Lab, replica: str) -> Iterator[tuple[pymysql.Connection[Any], int]]:
    """A plain (admin) session on the replica and its CONNECTION_ID(); rolled back and closed on
    leaving, which is what releases whatever it held."""
    conn = lab.connect(replica)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT CONNECTION_ID()")
            row = cur.fetchone()
        assert row is not None
        yield conn, int(row[0])
    finally:
        with contextlib.suppress(pymysql.err.MySQLError):
            conn.rollback()
        conn.close()
