"""Cause readings: what holds the applier, read only while the previous poll showed it behind.

MariaDB: batches recorded from a live 10.11.19 lab (tests/fixtures/causes/record.py) replayed in
order, so the statements the poller sends are checked against what the real server answered.
MySQL 8.0: result sets in the collector's alias shape built from the manuals' column lists
(tests/fixtures/causes/mysql80_causes.json), on top of the recorded mysql80_replica.json.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lagscope.collectors import applier_workers, cause_readings
from lagscope.collectors.cause_readings import (
    CauseMemory,
    behind,
    channel_behind,
    relay_events_statement,
    sql_string,
)
from lagscope.collectors.dialect import MARIADB, MYSQL_57, MYSQL_84
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.flavor import ServerFlavor
from lagscope.collectors.poller import InstancePoller
from lagscope.collectors.snapshot import (
    ApplierWorker,
    ChannelStatus,
    ClockReading,
    GtidState,
    InstanceSnapshot,
    IoState,
)
from lagscope.errors import AccessDenied, QueryFailed
from tests.unit.collectors.test_recorded_flavors import load, replay
from tests.unit.fakes.executor import CAUSE_STATEMENTS, FakeExecutor, no_cause_evidence, rs

CAUSES = Path(__file__).parent.parent.parent / "fixtures" / "causes"


def _recorded(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CAUSES / name).read_text())
    return loaded


MARIADB_FIXTURE = _recorded("mariadb1011_causes.json")
MYSQL_FIXTURE = _recorded("mysql80_causes.json")


class Replay:
    """Answers each batch with the recorded one, asserting the poller sent exactly its
    statements in the same order."""

    def __init__(self, batches: list[list[dict[str, Any]]]) -> None:
        self.server = "replica1:3306"
        self.batches = list(batches)
        self.sent: list[list[str]] = []

    def run(self, statements: Sequence[str]) -> list[ResultSet]:
        recorded = self.batches.pop(0)
        self.sent.append(list(statements))
        assert list(statements) == [r["statement"] for r in recorded]
        return [rs(r["columns"], *r["rows"]) for r in recorded]

    def close(self) -> None:
        pass


def replay_scenario(name: str) -> tuple[Replay, list[InstanceSnapshot]]:
    scenario = MARIADB_FIXTURE["scenarios"][name]
    executor = Replay(scenario["batches"])
    poller = InstancePoller(executor)
    snapshots = []
    while executor.batches:
        snapshots.append(poller.poll())
    return executor, snapshots


def _causes_in(batch: list[str]) -> list[str]:
    return [s for s in batch if s in CAUSE_STATEMENTS or s.startswith("SHOW RELAYLOG")]


@pytest.mark.parametrize("name", sorted(MARIADB_FIXTURE["scenarios"]))
def test_recorded_mariadb_healthy_poll_sends_no_cause_statement(name: str) -> None:
    executor, snapshots = replay_scenario(name)
    healthy, first_behind = executor.sent[2], executor.sent[3]
    assert _causes_in(healthy) == [] and snapshots[0].evidence is None
    assert _causes_in(first_behind) == [] and snapshots[1].evidence is None
    # The poll after the one that showed it behind takes them.
    assert _causes_in(executor.sent[4]) and snapshots[2].evidence is not None


@pytest.mark.parametrize("name", ["row_lock", "keyless_row_lock"])
def test_recorded_mariadb_row_lock_names_the_blocking_session_and_the_table(name: str) -> None:
    scenario = MARIADB_FIXTURE["scenarios"][name]
    _, snapshots = replay_scenario(name)
    evidence = snapshots[-1].evidence
    assert evidence is not None and not evidence.problems
    (trx,) = evidence.transactions
    assert trx.state == "LOCK WAIT" and trx.operation == "starting index read"
    assert trx.lock_wait_started_at is not None and trx.rows_modified == 0
    blocker, candidate = evidence.blockers
    assert blocker.thread_id == scenario["blocker_thread_id"]
    assert blocker.blocked_thread_id == trx.thread_id
    assert (blocker.lock, blocker.certain, blocker.command) == ("row", True, "Sleep")
    assert blocker.user == "admin" and blocker.trx_started_at is not None
    # The same session, idle the longest: a candidate for any lock (lock_sessions).
    assert (candidate.lock, candidate.certain) == ("session", False)
    assert (candidate.thread_id, candidate.blocked_thread_id) == (blocker.thread_id, trx.thread_id)
    assert candidate.trx_started_at == blocker.trx_started_at
    (table,) = evidence.tables
    keyless = name == "keyless_row_lock"
    assert (table.schema, table.table) == ("shop", "audit_log" if keyless else "orders")
    assert blocker.object_name == f"shop.{table.table}"
    assert table.event == "Update_rows_v1"
    assert table.has_primary_key is (not keyless) and table.has_usable_key is (not keyless)
    # The SQL thread's state as the live 10.11.19 server showed it.
    assert snapshots[-1].channels[0].sql_thread_state == "Update_rows_log_event::find_row()"


def test_recorded_mariadb_keys_are_read_once_per_table() -> None:
    executor, snapshots = replay_scenario("row_lock")
    sent = [s for b in executor.sent for s in b]
    # MariaDB: never the TABLES ⋈ STATISTICS check (it crashed a 10.11.19 replica), only
    # InnoDB's dictionary, once per table.
    assert not [s for s in sent if "information_schema.STATISTICS" in s]
    key_reads = [s for s in sent if "INNODB_SYS_INDEXES" in s]
    assert len(key_reads) == 1 and "'shop'" in key_reads[0] and "'orders'" in key_reads[0]
    # The first triggered poll names the table; its keys arrive with the next one.
    assert snapshots[2].evidence and snapshots[2].evidence.tables[0].has_primary_key is None
    assert snapshots[3].evidence and snapshots[3].evidence.tables[0].has_primary_key is True


@pytest.mark.parametrize(
    ("name", "certain", "object_name"),
    [("metadata_lock", False, ""), ("metadata_lock_plugin", True, "shop.orders")],
)
def test_recorded_mariadb_metadata_lock_blocker(name: str, certain: bool, object_name: str) -> None:
    scenario = MARIADB_FIXTURE["scenarios"][name]
    executor, snapshots = replay_scenario(name)
    evidence = snapshots[-1].evidence
    assert evidence is not None and evidence.transactions == () and evidence.tables == ()
    blocker, candidate = evidence.blockers
    assert blocker.thread_id == scenario["blocker_thread_id"]
    assert (blocker.lock, blocker.certain) == ("metadata", certain)
    assert blocker.object_name == object_name
    assert blocker.user == "admin" and blocker.command == "Sleep"
    assert blocker.trx_started_at is not None
    assert (candidate.thread_id, candidate.lock) == (blocker.thread_id, "session")
    assert snapshots[-1].channels[0].sql_thread_state == "Waiting for table metadata lock"
    # The plugin is probed once on the connection.
    probes = [s for b in executor.sent for s in b if s == cause_readings.MDL_PLUGIN_PROBE_SQL]
    assert len(probes) == 1


@pytest.mark.parametrize(("sbm", "hurried"), [(0, False), (12, True)])
def test_mariadb_workers_are_read_every_poll_while_behind(sbm: int, hurried: bool) -> None:
    """slow_every_s keeps MariaDB's worker reading slow, except while the trigger holds."""
    from tests.unit.collectors.test_poller import mariadb_answers

    status = rs(
        ("Connection_name", "Slave_IO_Running", "Slave_SQL_Running", "Seconds_Behind_Master",
         "Relay_Log_File", "Relay_Log_Pos"),
        ("", "Yes", "Yes", sbm, "relay-bin.000002", 4),
    )  # fmt: skip
    idle = rs(
        ("id", "user", "command", "state", "time_ms", "info"),
        (5, "system user", "Slave_SQL", "Slave has read all relay log; waiting for more updates",
         1500, None),
    )  # fmt: skip
    answers = mariadb_answers(**{"SHOW ALL SLAVES STATUS": status})
    answers[applier_workers.statement(MARIADB)] = idle
    fake = FakeExecutor(answers, fallback=no_cause_evidence)
    poller = InstancePoller(fake, slow_every_s=3600)
    first, second = poller.poll(), poller.poll()
    assert first.workers and second.params_read  # parameters: every poll
    assert bool(second.workers) is hurried
    assert (second.evidence is not None) is hurried


def test_without_the_sessions_the_readings_that_join_them_say_so() -> None:
    """The sessions are read once for every MariaDB reading that joins them: when that read
    fails, those readings report what they miss rather than that nothing holds the applier."""
    from tests.unit.collectors.test_poller import mariadb_answers

    status = rs(
        ("Connection_name", "Slave_IO_Running", "Slave_SQL_Running", "Seconds_Behind_Master",
         "Relay_Log_File", "Relay_Log_Pos"),
        ("", "Yes", "Yes", 12, "relay-bin.000002", 4),
    )  # fmt: skip
    answers = mariadb_answers(**{"SHOW ALL SLAVES STATUS": status})
    sessions = cause_readings.sessions_statement(MARIADB)
    assert sessions is not None
    answers[sessions] = QueryFailed("db:3306", "Out of sort memory", 1038)
    fake = FakeExecutor(answers, fallback=no_cause_evidence)
    poller = InstancePoller(fake)
    poller.poll()
    snapshot = poller.poll()
    assert "Out of sort memory" in snapshot.problems["sessions"]
    assert snapshot.evidence is not None
    # Under the keys the rules ask (the row blockers' is "who blocks it").
    for key in ("transactions", "blockers", "metadata_blockers", "lock_sessions"):
        assert "sessions reading" in snapshot.evidence.problems[key], key


def _answer(name: str) -> ResultSet:
    recorded = MYSQL_FIXTURE["results"][name]
    return rs(recorded["columns"], *recorded["rows"])


def _mysql_replay() -> tuple[FakeExecutor, InstancePoller]:
    fake, poller = replay(load("mysql80_replica.json"))
    d = MYSQL_84
    memory = CauseMemory()
    threads, trx = cause_readings.transactions_statements(d)
    (row_blockers, _) = cause_readings.row_blockers_statements(d)
    (mdl, _) = cause_readings.mdl_blockers_statements(d, memory)
    keys = cause_readings.table_keys_statements("shop", "orders")
    dictionary_reads = cause_readings.table_dictionary_statements(d, "shop", "orders")
    assert keys is not None and dictionary_reads is not None
    tables, statistics = keys
    table_id, dictionary = dictionary_reads
    (_, trx_with_query) = cause_readings.row_blockers_statements(d)
    answers = {
        threads: "applier_threads",
        trx_with_query: "innodb_trx",  # every reading's, each joins what it needs
        row_blockers: "row_blockers",
        mdl: "metadata_blockers",
        cause_readings.receive_statement(d): "receive",
        MYSQL_FIXTURE["results"]["relay_events"]["statement"]: "relay_events",
        tables: "tables",
        statistics: "statistics",
        table_id: "table_id",
        dictionary: "table_dictionary",
    }
    for sql, name in answers.items():
        assert sql
        fake.answers[sql] = _answer(name)
    # The readings other than the row blockers' leave out the transaction's statement.
    with_query = _answer("innodb_trx")
    assert with_query.columns[-1] == "query"
    fake.answers[trx] = rs(with_query.columns[:-1], *(r[:-1] for r in with_query.rows))
    return fake, poller


def test_mysql80_cause_readings_from_performance_schema() -> None:
    fake, poller = _mysql_replay()
    first, second, third = poller.poll(), poller.poll(), poller.poll()
    assert first.evidence is None  # no previous poll yet
    sent = fake.batches[-2]
    assert any("performance_schema.data_lock_waits" in s for s in sent)
    assert any("performance_schema.metadata_locks" in s for s in sent)
    assert not any("INNODB_LOCK_WAITS" in s for s in sent)  # removed in 8.0
    assert MYSQL_FIXTURE["results"]["relay_events"]["statement"] in sent
    evidence = third.evidence
    assert evidence is not None and second.evidence is not None
    expected = MYSQL_FIXTURE["expected"]
    by_lock = {b.lock: b for b in evidence.blockers}
    assert by_lock["row"].thread_id == expected["blockers"]["row"]
    assert by_lock["row"].blocked_thread_id == 18 and by_lock["row"].time_s == 1200
    assert by_lock["metadata"].thread_id == expected["blockers"]["metadata"]
    assert by_lock["metadata"].certain and by_lock["metadata"].object_name == "shop.orders"
    # INNODB_TRX joined in Python: the row blocker's by its transaction id, the metadata
    # lock holder's by its session; its statement is its session's.
    assert by_lock["row"].trx_started_at == expected["trx_started"]["row"]
    assert by_lock["metadata"].trx_started_at == expected["trx_started"]["metadata"]
    assert by_lock["row"].statement == "" and "SLEEP(600)" in by_lock["metadata"].statement
    # Only the applier threads' transactions, each with what its worker applies.
    assert [t.thread_id for t in evidence.transactions] == expected["applier_threads"]
    waiting = next(t for t in evidence.transactions if t.state == "LOCK WAIT")
    assert waiting.gtid == expected["applying_gtid"] and waiting.trx_id == "421941"
    (table,) = evidence.tables
    assert f"{table.schema}.{table.table}" == expected["table"] and table.event == "Update_rows"
    assert table.has_primary_key is True and table.has_usable_key is True
    (receive,) = evidence.receive
    assert receive.queueing_trx == "" and receive.queueing_start_ts is None
    assert receive.last_queued_end_ts == pytest.approx(1732225247.308871)


def test_mysql57_uses_information_schema_lock_waits_and_reads_no_receive_side() -> None:
    statements = cause_readings.row_blockers_statements(MYSQL_57)
    assert any("information_schema.INNODB_LOCK_WAITS" in s for s in statements)
    assert cause_readings.sessions_statement(MYSQL_57) is not None
    assert cause_readings.receive_statement(MYSQL_57) is None
    assert cause_readings.receive_statement(MARIADB) is None
    assert "SHOW RELAYLOG EVENTS IN" in (relay_events_statement(MYSQL_57, _channel()) or "")


def test_a_refused_cause_reading_says_which_privilege() -> None:
    fake, poller = _mysql_replay()
    (threads, _) = cause_readings.transactions_statements(MYSQL_84)
    denied = AccessDenied("db:3306", "SELECT command denied to user 'lagscope'", 1142)
    fake.answers[threads] = denied
    poller.poll()
    snapshot = poller.poll()
    assert "needs PROCESS" in snapshot.problems["transactions"]
    assert snapshot.evidence is not None and snapshot.evidence.blockers  # the others arrive


def test_without_process_every_reading_of_innodb_trx_is_refused_and_names_it() -> None:
    """INNODB_TRX is read by each reading that joins it: without PROCESS each one is refused
    with its own problem (what the rules report as unknown), as when each was one join."""
    fake, poller = _mysql_replay()
    denied = AccessDenied("db:3306", "Access denied; you need the PROCESS privilege", 1227)
    fake.answers[cause_readings.TRX_STATEMENT] = denied
    fake.answers[cause_readings.TRX_WITH_QUERY_STATEMENT] = denied
    poller.poll()
    snapshot = poller.poll()
    for reading in ("transactions", "row_blockers", "metadata_blockers", "lock_sessions"):
        assert "needs PROCESS" in snapshot.problems[reading], reading
    assert snapshot.evidence is not None and snapshot.evidence.tables  # the relay log's table
    assert snapshot.evidence.transactions == () and snapshot.evidence.blockers == ()


# --- the trigger ----------------------------------------------------------------------------


def _channel(**kw: Any) -> ChannelStatus:
    base: dict[str, Any] = {
        "channel": "",
        "io_state": IoState.YES,
        "sql_running": True,
        "seconds_behind_source": 0,
        "relay_log_file": "relay-bin.000002",
        "relay_log_pos": 4,
        "sql_thread_state": "Slave has read all relay log; waiting for more updates",
    }
    return ChannelStatus(**{**base, **kw})


def _snapshot(channels: Sequence[ChannelStatus], workers: Sequence[ApplierWorker] = ()) -> Any:
    return InstanceSnapshot(
        server="r",
        flavor=ServerFlavor("mariadb", (10, 11, 19)),
        dialect="mariadb",
        taken_at=datetime(2026, 1, 1, tzinfo=UTC),
        round_trip_s=0.001,
        server_id=2,
        server_uuid=None,
        read_only=True,
        clock=ClockReading(0.0, 0.001),
        gtid=GtidState(),
        channels=tuple(channels),
        workers=tuple(workers),
    )


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, False),
        ({"seconds_behind_source": 3}, True),
        ({"seconds_behind_source": None}, True),  # unknown while running
        ({"seconds_behind_source": None, "io_state": IoState.CONNECTING}, False),
        ({"sql_running": False, "seconds_behind_source": None}, False),  # stopped: no applier
        ({"sql_delay": 3600, "seconds_behind_source": 3600}, False),  # delayed by design
        ({"sql_delay": 3600, "seconds_behind_source": 3700}, True),
        ({"sql_thread_state": "Commit"}, False),  # a busy state at SBM 0 has no duration
    ],
)
def test_channel_behind(changes: dict[str, Any], expected: bool) -> None:
    assert channel_behind(_channel(**changes)) is expected


def test_a_worker_busy_on_one_transaction_for_a_poll_triggers() -> None:
    worker = ApplierWorker("", 1, 7, "Update_rows_log_event::find_row()", busy=True)
    healthy = _snapshot([_channel()])
    assert not behind(_snapshot([_channel()], [replace(worker, state_time_s=0.2)]))
    assert behind(_snapshot([_channel()], [replace(worker, state_time_s=2.5)]))
    started = healthy.taken_at.timestamp() - 5
    assert behind(_snapshot([_channel()], [replace(worker, applying_start_apply_ts=started)]))
    assert not behind(_snapshot([_channel()], [replace(worker, busy=False, state_time_s=9.0)]))


def _healthy_replica() -> tuple[FakeExecutor, InstancePoller]:
    """A caught-up, idle MariaDB replica; cause readings (if sent) find nothing."""
    from tests.unit.collectors.test_poller import HEARTBEAT, mariadb_answers

    healthy = rs(
        ("Connection_name", "Slave_IO_Running", "Slave_SQL_Running", "Seconds_Behind_Master",
         "Slave_SQL_State", "Relay_Log_File", "Relay_Log_Pos"),
        ("", "Yes", "Yes", 0, "Slave has read all relay log; waiting for more updates",
         "relay-bin.000002", 4),
    )  # fmt: skip
    answers = mariadb_answers(**{"SHOW ALL SLAVES STATUS": healthy})
    fake = FakeExecutor(answers, fallback=no_cause_evidence)
    return fake, InstancePoller(fake, heartbeat=HEARTBEAT)


def test_a_healthy_poll_batch_is_unchanged() -> None:
    """Two polls of a caught-up, idle replica: the same batch twice, no cause statement."""
    fake, poller = _healthy_replica()
    first, second = poller.poll(), poller.poll()
    assert fake.batches[-1] == fake.batches[-2]
    assert _causes_in(fake.batches[-1]) == []
    assert first.evidence is None and second.evidence is None


def test_behind_elsewhere_takes_the_cause_readings_after_a_healthy_poll() -> None:
    """Two worker processes take turns: this one's previous poll was healthy, the other's (in
    the store) was behind; the readings ride in this poll, not one later."""
    fake, poller = _healthy_replica()
    poller.poll(behind_elsewhere=True)  # a first poll has nothing to build the readings from
    assert _causes_in(fake.batches[-1]) == []
    poller.poll()
    assert _causes_in(fake.batches[-1]) == []
    poller.poll(behind_elsewhere=True)
    assert _causes_in(fake.batches[-1])


# --- names from the server back into SQL ----------------------------------------------------


def test_sql_string_quotes_or_refuses() -> None:
    assert sql_string("relay-bin.000002") == "'relay-bin.000002'"
    assert sql_string("o'brien") == "'o''brien'"
    assert sql_string("a\\b") is None and sql_string("a\nb") is None
    assert relay_events_statement(MARIADB, _channel(channel="eu'x")) == (
        "SHOW RELAYLOG 'eu''x' EVENTS IN 'relay-bin.000002' FROM 4 LIMIT 10"
    )
    assert relay_events_statement(MARIADB, _channel(relay_log_file="r\\x")) is None
    assert cause_readings.table_keys_statements("shop", "a\\b") is None


def test_relay_events_of_several_channels_in_one_result() -> None:
    eu = _channel(channel="eu", relay_log_file="relay-bin-eu.000003", relay_log_pos=100)
    us = _channel(channel="us", relay_log_file="relay-bin-us.000007", relay_log_pos=200)
    memory = CauseMemory(keys={("app", "t"): (False, True)})
    result = rs(
        ("Log_name", "Pos", "Event_type", "Server_id", "End_log_pos", "Info"),
        ("relay-bin-eu.000003", 100, "Gtid", 1, 0, "BEGIN GTID 1-1-5"),
        ("relay-bin-eu.000003", 140, "Table_map", 1, 0, "table_id: 18 (shop.orders)"),
        ("relay-bin-eu.000003", 190, "Delete_rows_v1", 1, 0, "table_id: 18 flags: STMT_END_F"),
        ("relay-bin-us.000007", 200, "Gtid", 1, 0, "BEGIN GTID 2-1-9"),
        ("relay-bin-us.000007", 240, "Annotate_rows", 1, 0, "UPDATE app.t SET v = 1"),
        ("relay-bin-us.000007", 290, "Table_map", 1, 0, "table_id: 21 (app.t)"),
    )
    eu_table, us_table = cause_readings.parse_relay_events(result, [eu, us], memory)
    assert (eu_table.channel, eu_table.table, eu_table.event) == ("eu", "orders", "Delete_rows_v1")
    assert eu_table.has_primary_key is None  # not checked yet
    assert (us_table.schema, us_table.table, us_table.event) == ("app", "t", "")
    assert (us_table.has_primary_key, us_table.has_usable_key) == (False, True)


def test_table_keys_usable_key_needs_not_null_columns() -> None:
    memory = CauseMemory()
    result = rs(
        ("table_schema", "table_name", "index_name", "non_unique", "nullable"),
        ("app", "a", "uk", 0, ""), ("app", "a", "uk", 0, "YES"),  # unique over a NULL column
        ("app", "b", "uk", 0, ""), ("app", "b", "uk", 0, ""),
        ("app", "c", None, None, None),  # no index at all
    )  # fmt: skip
    asked = [("app", "a"), ("app", "b"), ("app", "c"), ("app", "hidden")]
    cause_readings.parse_table_keys(result, asked, memory)
    assert memory.keys == {
        ("app", "a"): (False, False),
        ("app", "b"): (False, True),
        ("app", "c"): (False, False),
        ("app", "hidden"): None,
    }


def test_innodb_dictionary_answers_for_tables_the_user_cannot_see() -> None:
    """A monitoring user without SELECT on the application's tables: information_schema.TABLES
    hides them, InnoDB's dictionary (PROCESS) still tells a keyless table (clustered on its
    hidden row id) from one with a primary key or a unique NOT NULL key (clustered on it)."""
    memory = CauseMemory()
    asked = [("app", "keyless"), ("app", "pk"), ("app", "uk"), ("app", "visible")]
    cause_readings.parse_table_keys(
        rs(
            ("table_schema", "table_name", "index_name", "non_unique", "nullable"),
            ("app", "visible", "PRIMARY", 0, ""),
        ),
        asked,
        memory,
    )
    assert memory.keys[("app", "keyless")] is None
    cause_readings.parse_table_dictionary(
        rs(
            ("table_schema", "table_name", "index_name", "non_unique", "nullable"),
            ("app", "keyless", "GEN_CLUST_INDEX", 1, "NO"),
            ("app", "pk", "PRIMARY", 0, "NO"),
            ("app", "uk", "uk_code", 0, "NO"),
            ("app", "visible", "GEN_CLUST_INDEX", 1, "NO"),  # TABLES answered: kept
            ("app", "never_asked", "PRIMARY", 0, "NO"),
        ),
        memory,
    )
    assert memory.keys == {
        ("app", "keyless"): (False, False),
        ("app", "pk"): (True, True),
        ("app", "uk"): (False, True),
        ("app", "visible"): (True, True),
    }


def test_innodb_dictionary_statements_by_flavor() -> None:
    maria = cause_readings.table_dictionary_statements(MARIADB, "shop", "audit_log")
    mysql = cause_readings.table_dictionary_statements(MYSQL_84, "shop", "audit_log")
    assert maria is not None and mysql is not None
    # The table's id, then its clustered index by that id: each dictionary table read alone.
    assert "INNODB_SYS_TABLES" in maria[0] and "CONCAT('shop', '/', 'audit_log')" in maria[0]
    assert maria[0].startswith("SET @lagscope_table_id = (")
    assert "INNODB_SYS_INDEXES" in maria[1] and "TABLE_ID = @lagscope_table_id" in maria[1]
    assert "information_schema.INNODB_TABLES" in mysql[0]
    assert "information_schema.INNODB_INDEXES" in mysql[1]
    assert cause_readings.table_dictionary_statements(MARIADB, "shop", "a\\b") is None


def test_the_dictionary_answer_ignores_the_table_id_statements_empty_answer() -> None:
    memory = CauseMemory()
    dictionary = rs(
        ("table_schema", "table_name", "index_name", "non_unique", "nullable"),
        ("shop", "orders", "PRIMARY", 0, "NO"),
    )
    answers = ResultSet(
        (),
        (),
        (
            rs(
                (),
            ),
            dictionary,
            rs(()),
            rs(dictionary.columns),
        ),
    )
    cause_readings.parse_table_dictionary(answers, memory, [("shop", "orders"), ("shop", "gone")])
    assert memory.keys == {("shop", "orders"): (True, True), ("shop", "gone"): None}


def test_table_keys_join_tables_and_their_indexes_in_python() -> None:
    """TABLES LEFT JOIN STATISTICS, from each table's own answer: a table shown without an
    index has no key; one not shown is hidden from this user."""
    memory = CauseMemory()
    columns = ("table_schema", "table_name", "index_name", "non_unique", "nullable")
    answers = ResultSet(
        (),
        (),
        (
            rs(("table_schema", "table_name"), ("app", "a")),
            rs(columns, ("app", "a", "PRIMARY", 0, ""), ("app", "a", "k", 1, "YES")),
            rs(("table_schema", "table_name"), ("app", "bare")),
            rs(columns),
            rs(("table_schema", "table_name")),
            rs(columns, ("app", "hidden", "PRIMARY", 0, "")),  # no TABLES row: not joined
        ),
    )
    cause_readings.parse_table_keys(
        answers, [("app", "a"), ("app", "bare"), ("app", "hidden")], memory
    )
    assert memory.keys == {
        ("app", "a"): (True, True),
        ("app", "bare"): (False, False),
        ("app", "hidden"): None,
    }


def test_server_text_is_bounded() -> None:
    long = "x" * 2000
    result = rs(
        ("thread_id", "blocked_thread_id", "user", "host", "statement"), (9, 7, long, long, long)
    )
    (blocker,) = cause_readings.row_blockers(result.records())
    assert len(blocker.user) == len(blocker.host) == len(blocker.statement) == 500


def test_an_unexplained_metadata_lock_wait_says_what_would_show_the_holder() -> None:
    waiting = [_channel(sql_thread_state="Waiting for table metadata lock")]
    no_plugin, plugin = CauseMemory(mdl_plugin=False), CauseMemory(mdl_plugin=True)
    assert cause_readings.mdl_problem(MARIADB, waiting, True, no_plugin) is None
    assert cause_readings.mdl_problem(MARIADB, [_channel()], False, no_plugin) is None
    assert "INSTALL SONAME" in (
        cause_readings.mdl_problem(MARIADB, waiting, False, no_plugin) or ""
    )
    assert "METADATA_LOCK_INFO shows" in (
        cause_readings.mdl_problem(MARIADB, waiting, False, plugin) or ""
    )
    assert "instrument" in (cause_readings.mdl_problem(MYSQL_57, waiting, False, plugin) or "")


def test_a_refused_relay_log_reading_gives_nothing_and_names_the_privilege() -> None:
    fake, poller = _mysql_replay()
    sql = MYSQL_FIXTURE["results"]["relay_events"]["statement"]
    fake.answers[sql] = AccessDenied("db:3306", "Access denied; you need REPLICATION SLAVE", 1227)
    poller.poll()
    snapshot = poller.poll()
    assert "REPLICATION SLAVE (MySQL)" in snapshot.problems["relay_events"]
    assert snapshot.evidence is not None and snapshot.evidence.tables == ()
    assert snapshot.evidence.blockers  # the other cause readings still arrive
