"""Make each cause of replication lag happen on a running lab, and undo it.

Every incident is a context manager taking the :class:`~lagscope.lab.topology.Lab` first and
keyword options after; entering returns an :class:`Incident` once the servers SHOW the cause
(polled, with a time limit — never a fixed sleep), saying what a test or the demo must find: the
replica it shows on, the table used, the blocking session's ``CONNECTION_ID()``. Leaving undoes it
(ends the session, restores the setting, stops the load), waits until every replica has caught up
and drops the incident's table. Everything stays on the lab's loopback servers.

Tables live in the ``lab_incidents`` database. Big tables are filled on every server at once with
``sql_log_bin=0`` from MariaDB's sequence engine, identical everywhere: the fill is setup, not part
of the incident, and replicating a million-row fill would itself be a large transaction.

What is real here, per cause (docs/causes.md):

* ``large_transaction`` — one ``UPDATE`` of every row of a big table on the source; the replicas
  apply it for 10 s or more (``INNODB_TRX.trx_rows_modified`` climbs).
* ``long_alter`` — ``ALTER TABLE … ALGORITHM=COPY`` on a big table; replicated, applied serially
  for about 6 s.
* ``metadata_lock`` — a replica session in an open transaction that read the table; the source
  alters it; the applier waits for the metadata lock.
* ``row_lock`` — a replica session holding ``SELECT … FOR UPDATE`` locks; the source updates those
  rows; the applier's transaction is in ``LOCK WAIT``.
* ``no_primary_key`` — a bulk ``UPDATE`` of a keyless table under ROW format: each row event
  scans the table on the replica (``find_row()``).
* ``serial_apply`` — many concurrent committers on the source with ``sync_binlog=1`` (so commits
  group), a serial applier on the replica (``slave_parallel_threads=0``).
* ``relay_log_durability`` — ``sync_relay_log=1``/``sync_master_info=1`` on the replicas under a
  write load: the IO threads fsync every event; near and far fall behind on receiving alike.
* ``durable_apply`` — a cheap-committing source, a serial replica fsyncing each applied
  transaction (``innodb_flush_log_at_trx_commit=1``, ``sync_binlog=1``).
* ``delayed`` — ``CHANGE MASTER TO MASTER_DELAY=N``.
* ``stopped`` / ``broken`` — the SQL thread stopped by hand, or by a duplicate-key error on a
  row written on the replica alone.
* ``network_bound`` — the far replica's proxy limited to a bandwidth below the source's binlog
  rate; the near replica keeps up.
* ``clock_offset`` — a replica restarted under libfaketime (``FAKETIME=+Ns``): its whole clock
  (``NOW()``, ``UNIX_TIMESTAMP()``, the binlog's event times) is shifted. ``SET TIMESTAMP`` would
  only shift one session's ``NOW()``, which no monitor would ever see. Needs Debian's
  ``faketime`` package (``make system-deps``); without it the incident refuses, and clock skew is
  left to unit tests with a fake clock.

The big tables (large transaction, long ALTER, keyless update) are sized to this machine's
speed: a first slice is filled and timed, and the row count follows. With fixed sizes a quiet
box applied the million-row UPDATE in 2 s, under the 5 s after which a transaction is "large",
so whether the cause showed depended on the box.
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
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


# ---- helpers ------------------------------------------------------------------------------------


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


def _create(lab: Lab, table: str, columns: str) -> None:
    """(Re)create ``lab_incidents.<table>`` on the source and wait until every replica has it."""
    query(lab, "source", f"CREATE DATABASE IF NOT EXISTS {SCHEMA}")
    query(lab, "source", _sql("DROP TABLE IF EXISTS {t}", table))
    query(lab, "source", _sql("CREATE TABLE {t} (", table) + columns + ") ENGINE=InnoDB")
    lab.wait_caught_up(timeout_s=60)


def _fill_everywhere(lab: Lab, table: str, rows: int, first: int = 1) -> float:
    """``(first, 0) … (rows, 0)`` into the table's two columns on every running server, not
    logged, all at once (MariaDB's sequence engine: ``seq_<first>_to_<rows>``). Returns the
    slowest server's seconds."""
    if not 1 <= first <= rows <= MAX_ROWS:
        raise InvalidInput(f"rows must be 1…{MAX_ROWS:,}, not {rows}")
    failures: list[BaseException] = []
    took: list[float] = []

    def fill(name: str) -> None:
        try:
            began = time.monotonic()
            with lab.connect(name) as conn, conn.cursor() as cur:
                cur.execute("SET SESSION sql_log_bin = 0")
                # The sequence engine's table name carries the row range.
                sequence = f"{SCHEMA}.seq_{int(first)}_to_{int(rows)}"
                cur.execute(
                    _sql("INSERT INTO {t} SELECT seq, 0 FROM {seq}", table).replace(
                        "{seq}", sequence
                    )
                )
            took.append(time.monotonic() - began)
        except BaseException as exc:  # re-raised below, in the caller's thread
            failures.append(exc)

    workers = [threading.Thread(target=fill, args=(name,)) for name in _running(lab)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if failures:
        raise LabError(f"filling {SCHEMA}.{table} failed: {failures[0]}") from failures[0]
    return max(took, default=0.0)


def _scan_s_per_row(lab: Lab, server: str, table: str, rows: int) -> float:
    """Seconds per row of a full scan of the table on ``server`` (a predicate no key serves),
    repeated for at least 0.2 s so that one scan's jitter does not decide."""
    statement = _sql("SELECT COUNT(*) FROM {t} WHERE n = -1", table)
    scans = 0
    with lab.connect(server) as conn, conn.cursor() as cur:
        began = time.monotonic()
        while scans < 3 or time.monotonic() - began < 0.2:
            cur.execute(statement)
            cur.fetchall()
            scans += 1
        took = time.monotonic() - began
    return took / (scans * rows)


def _fill_for(
    lab: Lab, table: str, lasting_s: float, cost: float, least: int, probe: int = 200_000
) -> int:
    """Fill the table with enough rows that the replicas' work on all of them (applying their
    changes, copying them) lasts about ``lasting_s``, on this machine, whatever its speed: a
    first ``probe`` rows are filled and timed, the work per row is taken as ``cost`` times a
    filled row's (a floor measured on the lab, so the real work lasts longer, never shorter),
    and the rest is filled. At least ``least`` rows. Returns the row count."""
    probe = min(probe, least)
    per_row_s = _fill_everywhere(lab, table, probe) / probe
    wanted = int(lasting_s / max(per_row_s * cost, 1e-9))
    rows = min(MAX_ROWS, max(least, wanted))
    if rows > probe:
        _fill_everywhere(lab, table, rows, first=probe + 1)
    return rows


@contextlib.contextmanager
def _table_lifetime(lab: Lab, table: str, catch_up_s: float = 300.0) -> Iterator[None]:
    """On leaving: wait until the replicas have caught up, then drop the table."""
    try:
        yield
    finally:
        lab.wait_caught_up(timeout_s=catch_up_s)
        if lab.is_running("source"):
            query(lab, "source", _sql("DROP TABLE IF EXISTS {t}", table))
            lab.wait_caught_up(timeout_s=catch_up_s)


def _source_gtid(lab: Lab) -> str:
    return str(query(lab, "source", "SELECT @@global.gtid_binlog_pos AS pos")[0]["pos"])


class _Load:
    """Threads running ``statement`` on the source in a loop until stopped; at most ``rate``
    statements per second each when given (pacing, not waiting)."""

    def __init__(
        self,
        lab: Lab,
        statement: str,
        args: tuple[Any, ...] = (),
        threads: int = 1,
        rate: float | None = None,
    ) -> None:
        self._lab, self._statement, self._args, self._rate = lab, statement, args, rate
        self._stop = threading.Event()
        self.done = 0
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._run, name=f"incident-load-{i}", daemon=True)
            for i in range(threads)
        ]

    def __enter__(self) -> _Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)

    def _run(self) -> None:
        try:
            with self._lab.connect("source") as conn, conn.cursor() as cur:
                began = time.monotonic()
                count = 0
                while not self._stop.is_set():
                    cur.execute(self._statement, self._args)
                    count += 1
                    with self._lock:
                        self.done += 1
                    if self._rate is not None:
                        ahead = began + count / self._rate - time.monotonic()
                        if ahead > 0:
                            self._stop.wait(ahead)
        except BaseException as exc:
            self.errors.append(exc)


# ---- the incidents ------------------------------------------------------------------------------


@contextlib.contextmanager
def large_transaction(
    lab: Lab,
    *,
    rows: int | None = None,
    lasting_s: float = LARGE_TRX_LASTING_S,
    replica: str = "replica1",
    table: str = "large_trx",
) -> Iterator[Incident]:
    """One ``UPDATE`` of every row of a table on the source; returns once ``replica``'s applier
    has the transaction open (its INNODB_TRX row), which it then applies for several seconds.
    ``rows=None``: as many rows as this machine's replicas take about ``lasting_s`` to apply
    (at least 300,000; with the index on n a quiet 2-core box applied a million in 5 s)."""
    _check_replica(lab, replica)
    table = _table_name(table)
    # The index on n makes each changed row cost more to apply than to fill (measured on the
    # lab: 1.8 times), so a long apply needs fewer rows filled first.
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, n INT NOT NULL, KEY (n)")
    with _table_lifetime(lab, table):
        if rows is None:
            rows = _fill_for(lab, table, lasting_s, cost=1.5, least=300_000)
        else:
            _fill_everywhere(lab, table, rows)
        began = time.monotonic()
        query(lab, "source", _sql("UPDATE {t} SET n = n + 1", table))
        source_s = time.monotonic() - began
        committed = time.time()  # replicated from its commit on
        gtid = _source_gtid(lab)
        trx = wait_for(
            lambda: next(
                (t for t in applier_transactions(lab, replica) if t["trx_rows_modified"]), None
            ),
            timeout_s=60,
            what=f"{replica}'s applier to start the {rows}-row transaction",
        )
        yield Incident(
            "large_transaction",
            "large_transaction",
            replica,
            SCHEMA,
            table,
            details={
                "rows": rows,
                "gtid": gtid,
                "source_seconds": round(source_s, 3),
                "applier_thread_id": int(trx["trx_mysql_thread_id"]),
            },
            started_at=committed,
        )


@contextlib.contextmanager
def long_alter(
    lab: Lab,
    *,
    rows: int | None = None,
    lasting_s: float = LONG_ALTER_LASTING_S,
    replica: str = "replica1",
    table: str = "long_alter",
) -> Iterator[Incident]:
    """``ALTER TABLE … ALGORITHM=COPY`` of a big table on the source; returns once ``replica``'s
    applier shows the ALTER (it copies the table for seconds). ``rows=None``: as many rows as
    this machine's replicas take about ``lasting_s`` to copy (at least 200,000)."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, n INT NOT NULL")
    with _table_lifetime(lab, table):
        if rows is None:
            rows = _fill_for(lab, table, lasting_s, cost=ALTER_COST, least=200_000)
        else:
            _fill_everywhere(lab, table, rows)
        statement = _sql(
            "ALTER TABLE {t} ADD COLUMN note CHAR(64) AS (SHA2(id, 256)) STORED, ALGORITHM=COPY",
            table,
        )
        query(lab, "source", statement)
        committed = time.time()  # binlogged once done on the source
        thread = wait_for(
            lambda: next(
                (
                    t
                    for t in applier_threads(lab, replica)
                    if str(t["INFO"] or "").upper().startswith("ALTER TABLE")
                ),
                None,
            ),
            timeout_s=60,
            what=f"{replica}'s applier to run the ALTER",
        )
        yield Incident(
            "long_alter",
            "ddl",
            replica,
            SCHEMA,
            table,
            details={"rows": rows, "statement": statement, "applier_thread_id": int(thread["ID"])},
            started_at=committed,
        )


@contextlib.contextmanager
def metadata_lock(
    lab: Lab, *, replica: str = "replica1", table: str = "mdl_held"
) -> Iterator[Incident]:
    """A session on ``replica`` in an open transaction that read the table (it holds the table's
    metadata lock), then an ALTER on the source: the applier waits for the metadata lock until
    the session ends. ``session_id`` is that session's CONNECTION_ID()."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, n INT NOT NULL")
    query(lab, "source", _sql("INSERT INTO {t} VALUES (1, 0), (2, 0), (3, 0)", table))
    lab.wait_caught_up(timeout_s=60)
    with _table_lifetime(lab, table), _session(lab, replica) as (session, session_id):
        with session.cursor() as cur:
            cur.execute("START TRANSACTION")
            cur.execute(_sql("SELECT COUNT(*) FROM {t}", table))
            cur.fetchall()
        began = time.time()
        query(lab, "source", _sql("ALTER TABLE {t} ADD COLUMN extra INT NULL", table))
        thread = wait_for(
            lambda: _state_shown(lab, replica, r"Waiting for table metadata lock"),
            timeout_s=30,
            what=f"{replica}'s applier to wait for the metadata lock",
        )
        yield Incident(
            "metadata_lock",
            "blocked_by_session",
            replica,
            SCHEMA,
            table,
            session_id,
            details={"lock": "metadata", "applier_thread_id": int(thread["ID"])},
            started_at=began,
        )


@contextlib.contextmanager
def row_lock(
    lab: Lab, *, replica: str = "replica1", table: str = "rows_held", rows: int = 10
) -> Iterator[Incident]:
    """A session on ``replica`` holding ``SELECT … FOR UPDATE`` locks on ``rows`` rows, then an
    UPDATE of those rows on the source: the applier's transaction waits in LOCK WAIT on the
    session's (the applier retries after ``innodb_lock_wait_timeout``, and waits again)."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, n INT NOT NULL")
    with _table_lifetime(lab, table):
        _fill_everywhere(lab, table, max(100, rows))
        with _session(lab, replica) as (session, session_id):
            with session.cursor() as cur:
                cur.execute("START TRANSACTION")
                cur.execute(_sql("SELECT id FROM {t} WHERE id <= %s FOR UPDATE", table), (rows,))
                cur.fetchall()
            began = time.time()
            query(lab, "source", _sql("UPDATE {t} SET n = n + 1 WHERE id <= %s", table), (rows,))
            waiting = wait_for(
                lambda: next(
                    (
                        t
                        for t in applier_transactions(lab, replica)
                        if t["trx_state"] == "LOCK WAIT"
                    ),
                    None,
                ),
                timeout_s=30,
                what=f"{replica}'s applier transaction to wait for the session's row locks",
            )
            blocker = query(
                lab,
                replica,
                "SELECT trx_id FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = %s",
                (session_id,),
            )
            yield Incident(
                "row_lock",
                "blocked_by_session",
                replica,
                SCHEMA,
                table,
                session_id,
                details={
                    "lock": "row",
                    "rows": rows,
                    "applier_thread_id": int(waiting["trx_mysql_thread_id"]),
                    "applier_trx_id": str(waiting["trx_id"]),
                    "blocking_trx_id": str(blocker[0]["trx_id"]) if blocker else None,
                },
                started_at=began,
            )


@contextlib.contextmanager
def no_primary_key(
    lab: Lab,
    *,
    rows: int | None = None,
    lasting_s: float = NO_KEY_LASTING_S,
    replica: str = "replica1",
    table: str = "no_key",
) -> Iterator[Incident]:
    """A table without any key, all its rows updated in one statement on the source (the lab's
    binlog_format is ROW): the replica looks up each row by scanning the table, about rows²/2
    row reads. ``rows=None``: as many rows as ``replica`` takes about ``lasting_s`` to scan
    through (a scan of the table on it is timed first; at least 4,000 rows). Returns once the
    applier shows ``find_row()`` on a RUNNING transaction."""
    _check_replica(lab, replica)
    table = _table_name(table)
    fmt = query(lab, "source", "SELECT @@global.binlog_format AS fmt")[0]["fmt"]
    if str(fmt).upper() != "ROW":
        raise LabError(f"the source's binlog_format is {fmt}, not ROW: no row events to scan for")
    _create(lab, table, "id INT UNSIGNED NOT NULL, n INT NOT NULL")
    with _table_lifetime(lab, table):
        if rows is None:
            least = 4_000
            _fill_everywhere(lab, table, least)
            # rows²/2 row reads at a scan's cost per row read (the applier's reads cost 1.3
            # times a SELECT's on the lab: the real scan lasts a little longer).
            per_read_s = _scan_s_per_row(lab, replica, table, least)
            rows = min(200_000, max(least, int(math.sqrt(2 * lasting_s / max(per_read_s, 1e-12)))))
            if rows > least:
                _fill_everywhere(lab, table, rows, first=least + 1)
        else:
            _fill_everywhere(lab, table, rows)
        query(lab, "source", _sql("UPDATE {t} SET n = n + 1", table))
        committed = time.time()

        def scanning() -> dict[str, Any] | None:
            thread = _state_shown(lab, replica, r"find_row\(\)")
            running = [t for t in applier_transactions(lab, replica) if t["trx_state"] == "RUNNING"]
            return thread if thread and running else None

        thread = wait_for(scanning, timeout_s=60, what=f"{replica}'s applier to scan for rows")
        yield Incident(
            "no_primary_key",
            "no_usable_key",
            replica,
            SCHEMA,
            table,
            details={"rows": rows, "applier_thread_id": int(thread["ID"])},
            started_at=committed,
        )


@contextlib.contextmanager
def serial_apply(
    lab: Lab,
    *,
    threads: int = 16,
    replica: str = "replica1",
    table: str = "group_commit",
    min_ratio: float = 1.5,
) -> Iterator[Incident]:
    """``threads`` sessions committing small inserts on the source with ``sync_binlog=1`` (so
    commits wait for the binlog's fsync together and group), while ``replica`` applies serially
    (``slave_parallel_threads=0``; set for the incident if it was not). Returns once the source's
    ``Binlog_commits / Binlog_group_commits`` over a second exceeds ``min_ratio`` and the
    replica's apply backlog grows; the load runs until leaving."""
    _check_replica(lab, replica)
    table = _table_name(table)
    if not 1 <= threads <= 64:
        raise InvalidInput(f"threads must be 1…64, not {threads}")
    _create(lab, table, "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL")
    sync_binlog = int(query(lab, "source", "SELECT @@global.sync_binlog AS v")[0]["v"])
    parallel = int(query(lab, replica, "SELECT @@global.slave_parallel_threads AS v")[0]["v"])
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        if parallel != 0:
            _set_parallel_threads(lab, replica, 0)
            undo.callback(_set_parallel_threads, lab, replica, parallel)
        query(lab, "source", "SET GLOBAL sync_binlog = 1")
        undo.callback(query, lab, "source", "SET GLOBAL sync_binlog = %s", (sync_binlog,))
        began = time.time()
        load = undo.enter_context(
            _Load(lab, _sql("INSERT INTO {t} (n) VALUES (1)", table), threads=threads)
        )
        ratio = wait_for(
            lambda: _group_commit_ratio(lab, load, window_s=1.0, above=min_ratio),
            timeout_s=60,
            what=f"the source to commit more than {min_ratio} transactions per binlog group",
        )
        # Grouped commits are not yet lag: with 8 committers a fast box's serial applier kept
        # within a second of the source. Returns once the backlog grows.
        wait_for(
            lambda: _grew(lambda: not_applied(lab, replica), by=200),
            timeout_s=60,
            what=f"{replica}'s apply backlog to grow",
        )
        yield Incident(
            "serial_apply",
            "serial_apply",
            replica,
            SCHEMA,
            table,
            details={"threads": threads, "commits_per_group": round(ratio, 2)},
            started_at=began,
        )


@contextlib.contextmanager
def relay_log_durability(
    lab: Lab, *, replica: str = "replica1", threads: int = 4, table: str = "relay_sync"
) -> Iterator[Incident]:
    """``sync_relay_log=1`` and ``sync_master_info=1`` on every replica (the IO thread fsyncs
    each event it queues) under a write load of ``threads`` committers on the source: the near
    and the far replica fall behind on receiving alike. Returns once ``replica`` has a receive
    backlog that grew over a poll; the settings and the load stay until leaving."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL")
    names = [r.name for r in lab.replicas if lab.is_running(r.name)]
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        for name in names:
            before = query(
                lab, name, "SELECT @@global.sync_relay_log AS r, @@global.sync_master_info AS m"
            )[0]
            undo.callback(_set_relay_sync, lab, name, int(before["r"]), int(before["m"]))
            _set_relay_sync(lab, name, 1, 1)
        began = time.time()
        undo.enter_context(
            _Load(lab, _sql("INSERT INTO {t} (n) VALUES (1)", table), threads=threads)
        )
        backlog = wait_for(
            lambda: _grew(lambda: not_received(lab, replica), by=20),
            timeout_s=60,
            what=f"{replica}'s receive backlog to grow with sync_relay_log=1",
        )
        yield Incident(
            "relay_log_durability",
            "relay_log_durability",
            replica,
            SCHEMA,
            table,
            details={"threads": threads, "not_received_at_start": backlog, "replicas": names},
            started_at=began,
        )


def _set_relay_sync(lab: Lab, replica: str, relay_log: int, master_info: int) -> None:
    with lab.connect(replica) as conn, conn.cursor() as cur:
        cur.execute("SET GLOBAL sync_relay_log = %s", (relay_log,))
        cur.execute("SET GLOBAL sync_master_info = %s", (master_info,))


def _grew(read: Callable[[], int], by: int) -> int | None:
    """``read()`` twice, a poll apart: the second value when it is ``by`` or more above the
    first (a backlog that grows, not one left over)."""
    first = read()
    time.sleep(0.5)  # the measuring interval of a growth rate, not a wait for a state
    second = read()
    return second if second >= first + by else None


@contextlib.contextmanager
def durable_apply(
    lab: Lab, *, replica: str = "replica1", threads: int = 4, table: str = "durable_apply"
) -> Iterator[Incident]:
    """The source commits cheaply (``innodb_flush_log_at_trx_commit=2``, ``sync_binlog=0``)
    from ``threads`` committers while ``replica`` applies serially and durably
    (``slave_parallel_threads=0``, ``innodb_flush_log_at_trx_commit=1``, ``sync_binlog=1``: each
    applied transaction waits for its fsyncs). Returns once its apply backlog grows."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL")
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        _override(lab, "source", undo, innodb_flush_log_at_trx_commit=2, sync_binlog=0)
        _override(lab, replica, undo, innodb_flush_log_at_trx_commit=1, sync_binlog=1)
        parallel = int(query(lab, replica, "SELECT @@global.slave_parallel_threads AS v")[0]["v"])
        if parallel != 0:
            _set_parallel_threads(lab, replica, 0)
            undo.callback(_set_parallel_threads, lab, replica, parallel)
        began = time.time()
        undo.enter_context(
            _Load(lab, _sql("INSERT INTO {t} (n) VALUES (1)", table), threads=threads)
        )
        backlog = wait_for(
            lambda: _grew(lambda: not_applied(lab, replica), by=50),
            timeout_s=60,
            what=f"{replica}'s apply backlog to grow under durable serial apply",
        )
        yield Incident(
            "durable_apply",
            "durable_apply",
            replica,
            SCHEMA,
            table,
            details={"threads": threads, "not_applied_at_start": backlog},
            started_at=began,
        )


_OVERRIDABLE = frozenset({"innodb_flush_log_at_trx_commit", "sync_binlog"})


def _override(lab: Lab, name: str, undo: contextlib.ExitStack, **settings: int) -> None:
    """SET GLOBAL each of ``settings`` on ``name``; the old values are put back by ``undo``."""
    for variable, value in settings.items():
        if variable not in _OVERRIDABLE:  # names go into SQL: only known ones
            raise InvalidInput(f"not a setting incidents change: {variable}")
        old = query(lab, name, f"SELECT @@global.{variable} AS v")[0]["v"]
        undo.callback(query, lab, name, f"SET GLOBAL {variable} = %s", (int(old),))
        query(lab, name, f"SET GLOBAL {variable} = %s", (int(value),))


def _group_commit_ratio(lab: Lab, load: _Load, window_s: float, above: float) -> float | None:
    if load.errors:
        raise LabError(f"the committers failed: {load.errors[0]}") from load.errors[0]
    first = binlog_commits(lab)
    # A measuring window, not a wait for state: the ratio is a rate over time.
    time.sleep(window_s)
    second = binlog_commits(lab)
    groups = second[1] - first[1]
    ratio = (second[0] - first[0]) / groups if groups > 0 else 0.0
    return ratio if ratio > above else None


def binlog_commits(lab: Lab) -> tuple[int, int]:
    """The source's ``(Binlog_commits, Binlog_group_commits)``."""
    rows = query(
        lab,
        "source",
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Binlog_commits', 'Binlog_group_commits')",
    )
    values = {str(r["Variable_name"]): int(r["Value"]) for r in rows}
    return values["Binlog_commits"], values["Binlog_group_commits"]


def _set_parallel_threads(lab: Lab, replica: str, threads: int) -> None:
    with lab.connect(replica) as conn, conn.cursor() as cur:
        cur.execute("STOP ALL SLAVES")
        cur.execute("SET GLOBAL slave_parallel_threads = %s", (threads,))
        cur.execute("START ALL SLAVES")


@contextlib.contextmanager
def delayed(
    lab: Lab, *, replica: str = "replica1", delay_s: int = 30, table: str = "delayed"
) -> Iterator[Incident]:
    """``CHANGE MASTER TO MASTER_DELAY=delay_s`` on ``replica``, and one write on the source so
    the applier has an event to hold back; undone with MASTER_DELAY=0 (and a catch-up wait)."""
    _check_replica(lab, replica)
    table = _table_name(table)
    if not 1 <= delay_s <= 3600:
        raise InvalidInput(f"delay_s must be 1…3600, not {delay_s}")
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, at DATETIME(6) NOT NULL")
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        _set_master_delay(lab, replica, delay_s)
        undo.callback(_set_master_delay, lab, replica, 0)
        began = time.time()
        query(lab, "source", _sql("INSERT INTO {t} VALUES (1, NOW(6))", table))
        status = wait_for(
            lambda: next(
                (
                    s
                    for s in query(lab, replica, "SHOW ALL SLAVES STATUS")
                    if int(s["SQL_Delay"] or 0) == delay_s
                    and "MASTER_DELAY" in str(s["Slave_SQL_Running_State"] or "")
                ),
                None,
            ),
            timeout_s=30,
            what=f"{replica} to hold events back by MASTER_DELAY",
        )
        yield Incident(
            "delayed",
            "delayed_by_design",
            replica,
            SCHEMA,
            table,
            details={"delay_s": delay_s, "sql_state": str(status["Slave_SQL_Running_State"])},
            started_at=began,
        )


def _set_master_delay(lab: Lab, replica: str, delay_s: int) -> None:
    with lab.connect(replica) as conn, conn.cursor() as cur:
        cur.execute("STOP SLAVE")
        cur.execute("CHANGE MASTER TO MASTER_DELAY = %s", (int(delay_s),))
        cur.execute("START SLAVE")


@contextlib.contextmanager
def stopped(lab: Lab, *, replica: str = "replica1", table: str = "stopped") -> Iterator[Incident]:
    """``STOP SLAVE SQL_THREAD`` on ``replica`` and one write on the source: received, not
    applied, and the SQL thread not running. ``START SLAVE`` on leaving."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, n INT NOT NULL")
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        began = time.time()
        query(lab, replica, "STOP SLAVE SQL_THREAD")
        undo.callback(query, lab, replica, "START SLAVE")
        query(lab, "source", _sql("INSERT INTO {t} VALUES (1, 0)", table))
        wait_for(
            lambda: not_received(lab, replica) == 0 and not_applied(lab, replica) > 0,
            timeout_s=30,
            what=f"{replica} to receive the write it does not apply",
        )
        yield Incident("stopped", "stopped", replica, SCHEMA, table, started_at=began)


@contextlib.contextmanager
def broken(lab: Lab, *, replica: str = "replica1", table: str = "broken") -> Iterator[Incident]:
    """A row written on ``replica`` alone (not logged), then the same key inserted on the
    source: the SQL thread stops with a duplicate-key error (1062). On leaving the replica's
    stray row is removed and the SQL thread started again, which applies the source's row."""
    _check_replica(lab, replica)
    table = _table_name(table)
    _create(lab, table, "id INT UNSIGNED NOT NULL PRIMARY KEY, n INT NOT NULL")
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        with lab.connect(replica) as conn, conn.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute(_sql("INSERT INTO {t} VALUES (1, -1)", table))
        undo.callback(_repair, lab, replica, table)
        began = time.time()
        query(lab, "source", _sql("INSERT INTO {t} VALUES (1, 0)", table))
        status = wait_for(
            lambda: next(
                (
                    s
                    for s in query(lab, replica, "SHOW ALL SLAVES STATUS")
                    if s["Slave_SQL_Running"] == "No" and s["Last_SQL_Errno"]
                ),
                None,
            ),
            timeout_s=30,
            what=f"{replica}'s SQL thread to stop on the duplicate key",
        )
        yield Incident(
            "broken",
            "broken",
            replica,
            SCHEMA,
            table,
            details={
                "errno": int(status["Last_SQL_Errno"]),
                "error": str(status["Last_SQL_Error"])[:500],
            },
            started_at=began,
        )


def _repair(lab: Lab, replica: str, table: str) -> None:
    with lab.connect(replica) as conn, conn.cursor() as cur:
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute(_sql("DELETE FROM {t} WHERE id = 1", table))
        cur.execute("START SLAVE")


@contextlib.contextmanager
def network_bound(
    lab: Lab,
    *,
    replica: str | None = None,
    bandwidth_bps: float = 50_000,
    write_bps: float = 250_000,
    table: str = "wide_rows",
    min_backlog: int = 50,
) -> Iterator[Incident]:
    """Limit the proxied ``replica``'s link (default: the lab's only proxied one) to
    ``bandwidth_bps`` and write about ``write_bps`` of row events on the source: the far replica
    falls behind on receiving while a near replica keeps up. Returns once the far replica has
    ``min_backlog`` transactions written on the source but not yet received."""
    if replica is None:
        if len(lab.config.proxied) != 1:
            raise InvalidInput(f"say which replica; proxied: {list(lab.config.proxied)}")
        replica = lab.config.proxied[0]
    _check_replica(lab, replica)
    table = _table_name(table)
    proxy = lab.proxy_for(replica)
    row_bytes = 2000
    _create(
        lab,
        table,
        "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, payload VARBINARY(4000) NOT NULL",
    )
    before = proxy.bandwidth_bps
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        began = time.time()
        proxy.set_bandwidth(bandwidth_bps)
        undo.callback(proxy.set_bandwidth, before)
        undo.enter_context(
            _Load(
                lab,
                _sql("INSERT INTO {t} (payload) VALUES (REPEAT('x', %s))", table),
                (row_bytes,),
                rate=write_bps / row_bytes,
            )
        )
        backlog = wait_for(
            lambda: (n := not_received(lab, replica)) >= min_backlog and n,
            timeout_s=60,
            what=f"{replica} to fall {min_backlog} transactions behind on receiving",
        )
        near = [r.name for r in lab.replicas if r.name not in lab.config.proxied]
        yield Incident(
            "network_bound",
            "network",
            replica,
            SCHEMA,
            table,
            details={
                "bandwidth_bps": bandwidth_bps,
                "write_bps": write_bps,
                "not_received_at_start": backlog,
                "near": near,
            },
            started_at=began,
        )


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
def clock_offset(
    lab: Lab, *, replica: str = "replica2", offset_s: float = 2.0
) -> Iterator[Incident]:
    """Restart ``replica`` with its clock ``offset_s`` ahead (libfaketime); restart it with the
    true clock on leaving. ``details["measured_offset_s"]`` is the server's ``NOW(6)`` minus the
    midpoint of the query's round trip."""
    _check_replica(lab, replica)
    lab.set_clock_offset(replica, offset_s)
    began = time.time()  # the server is back, its clock shifted
    try:
        lab.wait_caught_up(timeout_s=60)
        measured = measure_clock_offset(lab, replica)
        yield Incident(
            "clock_offset",
            "clock_skew",
            replica,
            details={"offset_s": offset_s, "measured_offset_s": round(measured, 4)},
            started_at=began,
        )
    finally:
        lab.set_clock_offset(replica, 0.0)
        lab.wait_caught_up(timeout_s=60)


def measure_clock_offset(lab: Lab, name: str) -> float:
    """Server clock minus ours, from the midpoint of the query's round trip."""
    with lab.connect(name) as conn, conn.cursor() as cur:
        sent = time.time()
        cur.execute("SELECT UNIX_TIMESTAMP(NOW(6))")
        received = time.time()
        row = cur.fetchone()
    assert row is not None
    return float(row[0]) - (sent + received) / 2


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


# ---- the catalogue (CLI, demo) ------------------------------------------------------------------

IncidentMaker = Callable[..., contextlib.AbstractContextManager[Incident]]

INCIDENTS: dict[str, IncidentMaker] = {
    "large_transaction": large_transaction,
    "long_alter": long_alter,
    "metadata_lock": metadata_lock,
    "row_lock": row_lock,
    "no_primary_key": no_primary_key,
    "serial_apply": serial_apply,
    "relay_log_durability": relay_log_durability,
    "durable_apply": durable_apply,
    "delayed": delayed,
    "stopped": stopped,
    "broken": broken,
    "network_bound": network_bound,
    "clock_offset": clock_offset,
}


def incident(lab: Lab, name: str, **options: Any) -> contextlib.AbstractContextManager[Incident]:
    """The incident ``name`` (a key of :data:`INCIDENTS`) on ``lab`` with ``options``."""
    try:
        maker = INCIDENTS[name]
    except KeyError:
        raise InvalidInput(f"no incident {name!r}; known: {sorted(INCIDENTS)}") from None
    return maker(lab, **options)
