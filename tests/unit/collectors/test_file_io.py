"""The fsync-cost reading and the applier's relay-log waits."""

from __future__ import annotations

from lagscope.analysis.workers import RELAY_READ_STATE, summarize
from lagscope.collectors import file_io
from lagscope.collectors.snapshot import ApplierWorker
from tests.unit.fakes.executor import rs

COLUMNS = ("EVENT_NAME", "COUNT_MISC", "SUM_TIMER_MISC")


def test_the_timed_classes_become_pseudo_counters() -> None:
    # A MySQL 8.0 answer: all three classes (its redo log is instrumented), picoseconds.
    result = rs(COLUMNS,
                ("wait/io/file/sql/binlog", 1200, 420_000_000_000),
                ("wait/io/file/sql/relaylog", "8800", "2200000000000"),
                ("wait/io/file/innodb/innodb_log_file", 1300, 390_000_000_000))  # fmt: skip
    assert dict(file_io.parse(result)) == {
        "fsync_binlog_ops": 1200, "fsync_binlog_ps": 420_000_000_000,
        "fsync_relaylog_ops": 8800, "fsync_relaylog_ps": 2_200_000_000_000,
        "fsync_redo_ops": 1300, "fsync_redo_ps": 390_000_000_000,
    }  # fmt: skip


def test_performance_schema_off_or_unknown_rows_give_nothing() -> None:
    assert dict(file_io.parse(rs(COLUMNS))) == {}
    stray = rs(COLUMNS, ("wait/io/file/sql/FRM", 60, 709625488),
               ("wait/io/file/sql/binlog", None, 5))  # fmt: skip
    assert dict(file_io.parse(stray)) == {}


def test_the_statement_names_only_constant_classes() -> None:
    sql = file_io.statement()
    assert "performance_schema.file_summary_by_event_name" in sql
    for name in file_io.FILE_CLASSES:
        assert f"'{name}'" in sql


def _sql_thread(state: str, busy: bool) -> ApplierWorker:
    return ApplierWorker(channel="", worker_id=0, thread_id=7, state=state, busy=busy)


def test_a_serial_applier_reading_the_relay_log_counts_as_waiting_for_it() -> None:
    (waiting,) = summarize([_sql_thread(RELAY_READ_STATE, True)], {}, None)
    assert waiting.relay_waiting == 1 and waiting.busy == 1
    (committing,) = summarize([_sql_thread("Commit", True)], {}, None)
    assert committing.relay_waiting == 0 and committing.busy == 1
