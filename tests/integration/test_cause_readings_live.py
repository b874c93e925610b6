"""Cause readings on the live MariaDB lab: a session on replica1 holds what the applier needs,
and the poller names that session and the table (docs/causes.md, "The causes": a blocking
session, row lookups without a usable key).

Each test leaves replication as it found it: the blocking session rolls back and the replica
catches up, even on failure.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pytest

from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor, ResultSet
from lagscope.collectors.poller import InstancePoller
from lagscope.collectors.snapshot import CauseEvidence, InstanceSnapshot
from tests.sql_tables import joins_information_schema, tables_read

from .waiting import wait_until

pytestmark = pytest.mark.integration

SCHEMA = "causes_live"


class Recording(PyMySQLExecutor):
    """The real executor, keeping the statements of each batch."""

    def __init__(self, spec: ConnectionSpec) -> None:
        super().__init__(spec)
        self.batches: list[list[str]] = []

    def run(self, statements: Sequence[str]) -> list[ResultSet]:
        self.batches.append(list(statements))
        return super().run(statements)


def _poller(lab) -> tuple[Recording, InstancePoller]:
    params = lab.connection_params("replica1", "monitor")
    spec = ConnectionSpec(
        host=params["host"],
        port=params["port"],
        user=params["user"],
        password=params["password"],
        connect_timeout_s=2.0,
        read_timeout_s=5.0,
    )
    executor = Recording(spec)
    return executor, InstancePoller(executor)


@pytest.fixture(scope="module")
def tables(lab) -> Iterator[None]:
    with lab.connect("source") as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS {SCHEMA}")
        cur.execute(f"DROP TABLE IF EXISTS {SCHEMA}.orders, {SCHEMA}.audit_log")
        cur.execute(f"CREATE TABLE {SCHEMA}.orders (id INT PRIMARY KEY, qty INT NOT NULL)")
        cur.execute(f"INSERT INTO {SCHEMA}.orders VALUES (1, 0), (2, 0)")
        cur.execute(f"CREATE TABLE {SCHEMA}.audit_log (at INT, note VARCHAR(32))")  # no key
        cur.execute(f"INSERT INTO {SCHEMA}.audit_log VALUES (1, 'a'), (2, 'b')")
        # information_schema shows a table's indexes only to a user with a privilege on it.
        cur.execute(f"GRANT SELECT ON {SCHEMA}.* TO 'monitor'@'%'")
    lab.wait_caught_up(timeout_s=60)
    yield
    with lab.connect("source") as conn, conn.cursor() as cur:
        cur.execute(f"REVOKE SELECT ON {SCHEMA}.* FROM 'monitor'@'%'")
        cur.execute(f"DROP DATABASE IF EXISTS {SCHEMA}")
    lab.wait_caught_up(timeout_s=60)


@contextmanager
def holding(lab, statement: str) -> Iterator[int]:
    """A replica1 session in an open transaction that ran ``statement``; yields its id."""
    conn = lab.connect("replica1")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT CONNECTION_ID()")
            (thread_id,) = cur.fetchone()
            cur.execute("BEGIN")
            cur.execute(statement)
            cur.fetchall()
        yield int(thread_id)
    finally:
        conn.rollback()
        conn.close()
        lab.wait_caught_up(timeout_s=60)


def _is_cause(sql: str) -> bool:
    return any(
        word in sql
        for word in ("INNODB_TRX", "INNODB_LOCK_WAITS", "SHOW RELAYLOG", "METADATA_LOCK_INFO")
    )


def assert_no_server_side_join(executor: Recording) -> None:
    """What was sent to the live server, cause readings included, joins no table with another
    (MariaDB 10.11.19 crashed in the clean-up of information_schema joins' temporary tables)."""
    sent = {sql for batch in executor.batches for sql in batch}
    assert any("INNODB_TRX" in sql for sql in sent)
    assert [sql for sql in sent if joins_information_schema(sql) or len(tables_read(sql)) > 1] == []


def poll_until(poller: InstancePoller, done, timeout_s: float = 30.0) -> list[InstanceSnapshot]:
    """Poll about twice a second until ``done(snapshot)``; every snapshot taken, in order."""
    taken: list[InstanceSnapshot] = []

    def step() -> bool:
        taken.append(poller.poll())
        return bool(done(taken[-1]))

    wait_until(step, timeout_s=timeout_s, interval_s=0.5, message="the cause evidence")
    return taken


def _evidence(snapshot: InstanceSnapshot) -> CauseEvidence:
    assert snapshot.evidence is not None
    return snapshot.evidence


def test_a_healthy_replica_poll_sends_no_cause_reading(lab, tables) -> None:
    lab.wait_caught_up(timeout_s=60)
    executor, poller = _poller(lab)
    try:
        snapshots = [poller.poll() for _ in range(3)]
    finally:
        poller.close()
    assert all(s.evidence is None for s in snapshots)
    assert not any(_is_cause(sql) for batch in executor.batches for sql in batch)
    assert executor.batches[-1] == executor.batches[-2]


@pytest.mark.parametrize(
    ("table", "lock_sql", "update_sql", "keyed"),
    [
        (
            "orders",
            f"SELECT * FROM {SCHEMA}.orders WHERE id = 1 FOR UPDATE",
            f"UPDATE {SCHEMA}.orders SET qty = qty + 1 WHERE id = 1",
            True,
        ),
        (
            "audit_log",
            f"SELECT * FROM {SCHEMA}.audit_log FOR UPDATE",
            f"UPDATE {SCHEMA}.audit_log SET note = 'c' WHERE at = 2",
            False,
        ),
    ],
)
def test_a_session_holding_row_locks_is_named_with_the_table(
    lab, tables, table: str, lock_sql: str, update_sql: str, keyed: bool
) -> None:
    executor, poller = _poller(lab)
    try:
        poller.poll()
        with holding(lab, lock_sql) as blocker:
            with lab.connect("source") as conn, conn.cursor() as cur:
                cur.execute(update_sql)

            def named(s: InstanceSnapshot) -> bool:
                e = s.evidence
                return bool(
                    e
                    and any(b.thread_id == blocker for b in e.blockers)
                    and any(t.has_primary_key is not None for t in e.tables)
                )

            taken = poll_until(poller, named)
            evidence = _evidence(taken[-1])
            status = taken[-1].channels[0]
    finally:
        poller.close()
    (row_blocker,) = [b for b in evidence.blockers if b.lock == "row"]
    assert row_blocker.thread_id == blocker and row_blocker.certain
    assert row_blocker.object_name == f"{SCHEMA}.{table}"
    assert row_blocker.command == "Sleep"  # idle in its transaction
    (trx,) = evidence.transactions
    assert trx.thread_id == row_blocker.blocked_thread_id and trx.state == "LOCK WAIT"
    (event_table,) = evidence.tables
    assert (event_table.schema, event_table.table) == (SCHEMA, table)
    assert event_table.has_primary_key is keyed and event_table.has_usable_key is keyed
    assert event_table.event.startswith("Update_rows")
    # The live server's words for a row event waiting on a lock (docs/causes.md).
    assert status.sql_thread_state == "Update_rows_log_event::find_row()"
    assert any(_is_cause(sql) for sql in executor.batches[-1])
    assert_no_server_side_join(executor)


def test_a_session_holding_a_metadata_lock_is_a_candidate(lab, tables) -> None:
    """Without the METADATA_LOCK_INFO plugin (the lab default) MariaDB cannot say who holds a
    metadata lock: the sessions in a transaction begun before the wait are candidates."""
    executor, poller = _poller(lab)
    try:
        poller.poll()
        with holding(lab, f"SELECT * FROM {SCHEMA}.orders") as blocker:
            with lab.connect("source") as conn, conn.cursor() as cur:
                cur.execute(f"ALTER TABLE {SCHEMA}.orders ADD COLUMN extra INT")

            def named(s: InstanceSnapshot) -> bool:
                e = s.evidence
                return bool(e and any(b.thread_id == blocker for b in e.blockers))

            taken = poll_until(poller, named)
    finally:
        poller.close()
        with lab.connect("source") as conn, conn.cursor() as cur:
            cur.execute(f"ALTER TABLE {SCHEMA}.orders DROP COLUMN IF EXISTS extra")
        lab.wait_caught_up(timeout_s=60)
    mine = [b for b in _evidence(taken[-1]).blockers if b.thread_id == blocker]
    # A candidate twice: in a transaction begun before the wait (metadata_blockers), and in its
    # command since before it (lock_sessions, offered for any lock the server names).
    (candidate,) = [b for b in mine if b.lock == "metadata"]
    assert candidate.certain is False
    assert {b.lock for b in mine} <= {"metadata", "session"}
    assert candidate.user and candidate.trx_started_at is not None  # joined from its session
    assert taken[-1].channels[0].sql_thread_state == "Waiting for table metadata lock"
    assert_no_server_side_join(executor)
