"""The applier thread states' table: every string classified, both flavors' spellings, every
applier thread; and the waits read off one poll's threads (analysis/causes/waits.py)."""

from __future__ import annotations

import pytest

from lagscope.analysis.causes import states, waits
from lagscope.analysis.causes.states import APPLIER_STATES, Family
from lagscope.collectors import cause_readings
from lagscope.collectors.dialect import MARIADB, MYSQL_57, MYSQL_84
from lagscope.collectors.snapshot import ApplierWorker
from tests.factories.causes import status
from tests.unit.fakes.executor import rs

# What an operator expects each state to mean, written out independently of the table: a row
# missing from the table, or filed under another family, fails here.
EXPECTED: dict[str, tuple[Family, str | None]] = {
    # idle and the relay log
    "Slave has read all relay log; waiting for more updates": (Family.IDLE, None),
    "Replica has read all relay log; waiting for more updates": (Family.IDLE, None),
    "Waiting for work from SQL thread": (Family.IDLE, None),
    "Waiting for an event from Coordinator": (Family.IDLE, None),
    "Waiting for the next event in relay log": (Family.RELAY_LOG, None),
    "Reading event from the relay log": (Family.RELAY_LOG, None),
    # commit order
    "Waiting for prior transaction to commit": (Family.COMMIT_ORDER, None),
    "Waiting for prior transaction to start commit before starting next transaction": (
        Family.COMMIT_ORDER,
        None,
    ),
    "Waiting for preceding transaction to commit": (Family.COMMIT_ORDER, None),
    "Waiting for dependent transaction to commit": (Family.COMMIT_ORDER, None),
    "Waiting for its turn to commit": (Family.COMMIT_ORDER, None),
    "Waiting for worker threads to be idle": (Family.COMMIT_ORDER, None),
    "Waiting for Replica Worker to release partition": (Family.COMMIT_ORDER, None),
    # the workers are the limit: applying
    "Waiting for room in worker thread event queue": (Family.ROWS, None),
    "Waiting for Slave Workers to free pending events": (Family.ROWS, None),
    "Waiting for Replica Workers to free pending events": (Family.ROWS, None),
    # committing
    "Commit": (Family.FLUSH, None),
    "waiting for handler commit": (Family.FLUSH, None),
    # rows
    "Update_rows_log_event::find_row()": (Family.ROWS, None),
    "Delete_rows_log_event::find_row()": (Family.ROWS, None),
    "Write_rows_log_event::write_row()": (Family.ROWS, None),
    "Update_rows_log_event::ha_update_row()": (Family.ROWS, None),
    "Applying batch of row changes (update)": (Family.ROWS, None),
    "Applying batch of row changes (write)": (Family.ROWS, None),
    "System lock": (Family.ROWS, None),
    # DDL
    "copy to tmp table": (Family.DDL, None),
    "Enabling keys": (Family.DDL, None),
    "altering table": (Family.DDL, None),
    "creating index": (Family.DDL, None),
    # delay
    "Waiting until MASTER_DELAY seconds after master executed event": (Family.DELAY, None),
    "Waiting until SOURCE_DELAY seconds after master executed event": (Family.DELAY, None),
    # locks held by a session
    "Waiting for table metadata lock": (Family.LOCK, "metadata"),
    "Waiting for schema metadata lock": (Family.LOCK, "schema metadata"),
    "Waiting for stored function metadata lock": (Family.LOCK, "stored function metadata"),
    "Waiting for trigger metadata lock": (Family.LOCK, "trigger metadata"),
    "Waiting for global read lock": (Family.LOCK, "global read"),
    "Waiting for commit lock": (Family.LOCK, "global read"),
    "Waiting for backup lock": (Family.LOCK, "backup"),
    "Waiting for table level lock": (Family.LOCK, "table-level"),
    "Waiting for table flush": (Family.LOCK, "table flush"),
    "User lock": (Family.LOCK, "user"),
    # the steps of any statement
    "Opening tables": (Family.OTHER, None),
    "closing tables": (Family.OTHER, None),
    "freeing items": (Family.OTHER, None),
}


@pytest.mark.parametrize("text", sorted(EXPECTED))
def test_each_state_an_operator_meets_is_in_its_family(text: str) -> None:
    row = states.lookup(text)
    assert row is not None, text
    assert (row.family, row.lock) == EXPECTED[text]


@pytest.mark.parametrize("row", APPLIER_STATES, ids=lambda r: r.text)
def test_every_string_of_the_table_reads_back_as_its_own_row(row: states.State) -> None:
    assert row.text == row.text.lower().strip()
    # The server's capitals, and surrounding blanks, do not matter.
    assert states.lookup(row.text) is row
    assert states.lookup(f"  {row.text.upper()} ") is row
    assert row.threads and row.threads <= states.ANY_APPLIER
    assert row.flavors and row.flavors <= states.BOTH
    assert row.source
    # A lock names its kind; nothing else has one.
    assert (row.lock is not None) == (row.family is Family.LOCK)


def test_the_table_spells_each_string_once() -> None:
    texts = [r.text for r in APPLIER_STATES]
    assert len(texts) == len(set(texts))


def test_each_applier_thread_and_flavor_has_its_idle_commit_order_and_lock_states() -> None:
    for flavor in ("mariadb", "mysql"):
        for thread in (states.SQL, states.COORDINATOR, states.WORKER):
            families = {
                r.family for r in APPLIER_STATES if flavor in r.flavors and thread in r.threads
            }
            assert Family.LOCK in families, (flavor, thread)
            assert Family.OTHER in families, (flavor, thread)
    for flavor in ("mariadb", "mysql"):
        worker = {
            r.family for r in APPLIER_STATES if flavor in r.flavors and states.WORKER in r.threads
        }
        assert {Family.IDLE, Family.COMMIT_ORDER, Family.ROWS, Family.FLUSH} <= worker, flavor


def test_prefixes_take_arguments_but_short_steps_match_whole() -> None:
    assert states.family("Update_rows_log_event::find_row(-1)") is Family.ROWS
    assert states.family("Waiting for prior transaction to commit") is Family.COMMIT_ORDER
    # "Commit" and "end" are whole states: a longer text starting so is not them.
    assert states.lookup("Commit_and_more") is None
    assert states.lookup("ending") is None
    assert states.lookup("Waiting for the lab's own invention") is None
    assert states.lookup("") is None and states.lookup(None) is None


def test_the_rules_subsets_are_read_off_the_table() -> None:
    assert states.is_commit("Commit") and states.is_commit("waiting for handler commit")
    assert not states.is_commit("Waiting for prior transaction to commit")
    assert states.matches("Update_rows_log_event::find_row()", states.ROW_LOOKUP)
    assert states.matches("Waiting for work from SQL thread", states.WORKER_IDLE)
    assert states.METADATA_LOCK_WAIT == "waiting for table metadata lock"
    assert "copy to tmp table" in states.DDL_STATES
    for subset in (
        states.SQL_IDLE,
        states.SQL_COMMIT,
        states.ROW_LOOKUP,
        states.DDL_STATES,
        states.WORKER_WAITING_FOR_PRIOR,
        states.WORKER_IDLE,
        states.DELAY_WAIT,
    ):
        assert subset and all(states.lookup(t) is not None for t in subset)


# --- the waits of one poll -------------------------------------------------------------------


def _worker(state: str, time_s: float | None, thread_id: int = 21) -> ApplierWorker:
    return ApplierWorker("", 0, thread_id, state, state_time_s=time_s)


def test_the_sql_thread_and_process_list_workers_are_classified_once_each() -> None:
    threads = waits.thread_states(
        status(sql_thread_state="Waiting for backup lock"),
        (
            _worker("Waiting for backup lock", 31.0, 17),
            _worker("Waiting for work from SQL thread", 4.0),
        ),
    )
    assert [(t.text, t.family, t.thread_id, t.for_s) for t in threads] == [
        ("Waiting for backup lock", Family.LOCK, 17, 31.0),
        ("Waiting for work from SQL thread", Family.IDLE, 21, 4.0),
    ]
    lock = waits.lock_wait(threads)
    assert lock is not None and lock.lock == "backup" and lock.for_s == 31.0


def test_mysql_worker_service_states_are_not_thread_states() -> None:
    """MySQL's worker rows carry SERVICE_STATE ("ON"): not a state the table should know."""
    threads = waits.thread_states(
        status(sql_thread_state="Replica has read all relay log; waiting for more updates"),
        (ApplierWorker("", 1, 57, "ON"),),
    )
    assert waits.unknown_states(threads) == ()


def test_a_table_metadata_lock_is_left_to_its_own_rule() -> None:
    threads = waits.thread_states(status(sql_thread_state="Waiting for table metadata lock"), ())
    assert waits.lock_wait(threads) is None


def test_an_unknown_state_is_a_wait_at_its_second_poll_whatever_the_servers_time() -> None:
    """An applier thread's TIME is its lag (counted from its event's timestamp), not its time in
    the state: 300 s of it on a state first seen now is no wait yet."""
    odd = "Waiting for the lab's own invention"
    threads = waits.thread_states(status(sql_thread_state=odd), (_worker(odd, 300.0),))
    assert waits.unknown_wait(threads, None) is None
    assert waits.unknown_wait(threads, "Waiting for something else") is None
    found = waits.unknown_wait(threads, odd)  # the previous poll showed it too
    assert found is not None and found.text == odd


# --- the cause readings name locks in the table's words ----------------------------------------


def test_the_collectors_lock_kinds_are_the_tables() -> None:
    kinds = {r.lock for r in APPLIER_STATES if r.lock}
    assert set(cause_readings.MDL_KINDS.values()) <= kinds


def test_metadata_lock_holders_carry_their_kind_and_sessions_come_once() -> None:
    columns = ["thread_id", "blocked_thread_id", "user", "command", "time_s", "certain"]
    mdl = cause_readings.parse_mdl_blockers(
        (
            rs(
                [*columns, "object_type"],
                [9, 17, "bk", "Sleep", 40, 1, "GLOBAL"],
                [8, 17, "a", "Sleep", 9, 1, "TABLE"],
            ),
        ),
        None,
        None,
    )
    assert [(b.thread_id, b.lock) for b in mdl] == [(9, "global read"), (8, "metadata")]
    sessions = cause_readings.parse_lock_sessions(
        (
            rs(
                columns,
                [12, 17, "backup", "Sleep", 31, 0],
                [12, 18, "backup", "Sleep", 31, 0],
                [13, 17, "app", "Query", 35, 0],
            ),
        ),
        None,
    )
    assert [(b.thread_id, b.blocked_thread_id, b.lock, b.certain) for b in sessions] == [
        (12, 17, "session", False),
        (13, 17, "session", False),
    ]


def test_the_lock_sessions_statement_leaves_out_the_servers_threads_and_the_monitoring_user() -> (
    None
):
    # MariaDB and MySQL 5.7 read the sessions once (the sessions reading) and pick them in
    # Python (test_cause_joins.py); MySQL 8.0+ asks performance_schema.
    for dialect in (MARIADB, MYSQL_57):
        sql = cause_readings.sessions_statement(dialect)
        assert sql is not None
        assert "CONNECTION_ID()" in sql and "'Binlog Dump'" in sql
        assert "CURRENT_USER()" in sql  # the monitoring user's own sessions take no lock
    assert "TIME_MS" in (cause_readings.sessions_statement(MARIADB) or "")
    (mysql, _) = cause_readings.lock_sessions_statements(MYSQL_84)
    assert "CONNECTION_ID()" in mysql and "'Binlog Dump'" in mysql and "LIMIT 20" in mysql
    assert "CURRENT_USER()" in mysql and "performance_schema.threads" in mysql
