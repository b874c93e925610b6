"""The demo's tuning scenario as data: the plan, the statements each phase runs, the report."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lagscope.demo.scenario import (
    DEFAULT_PHASE_SECONDS,
    RELAXED_FLUSH,
    STRICT_FLUSH,
    Parallel,
    Phase,
    parse_phase_seconds,
    plan_for,
    replica_statements,
    tuning_plan,
)
from lagscope.demo.scenario_figures import phase_report, replica_figures
from lagscope.demo.scenario_runner import ScenarioRunner
from lagscope.errors import InvalidInput

SERIAL = {"slave_parallel_threads": "0", "slave_parallel_mode": "optimistic"}
PARALLEL4 = {"slave_parallel_threads": "4", "slave_parallel_mode": "optimistic"}
FLUSH_NAMES = {
    "innodb_flush_log_at_trx_commit",
    "sync_binlog",
    "sync_relay_log",
    "sync_relay_log_info",
    "sync_master_info",
}


def test_the_tuning_plan_tells_a_b_c_within_ten_minutes():
    plan = tuning_plan()
    assert [p.name for p in plan] == ["A", "B", "C"]
    assert sum(p.seconds for p in plan) <= 600
    # The journal's defaults: settle 30 s, then at least 10 samples at 1 Hz in each window.
    assert all(p.seconds >= 30 + 10 for p in plan)
    a, b, c = plan
    assert dict(a.settings) == {name: 1 for name in FLUSH_NAMES}
    assert a.parallel == Parallel(0)
    assert dict(b.settings) == {
        "innodb_flush_log_at_trx_commit": 2,
        "sync_binlog": 0,
        "sync_relay_log": 0,
        "sync_relay_log_info": 0,
        "sync_master_info": 0,
    }
    assert b.parallel is None  # B changes one thing: the flush settings
    assert c.settings == () and c.parallel == Parallel(4, "optimistic")


def test_each_phase_writes_a_note_naming_what_it_changes():
    a, b, c = tuning_plan()
    assert b.note.startswith("phase B: relax flush on replicas (")
    assert "innodb_flush_log_at_trx_commit=2" in b.note and "sync_master_info=0" in b.note
    assert c.note.startswith("phase C: parallel apply on replicas (")
    assert "slave_parallel_threads=4" in c.note and "slave_parallel_mode=optimistic" in c.note
    assert c.note.endswith(
        "; on MySQL: replica_parallel_workers=4, replica_parallel_type=LOGICAL_CLOCK)"
    )
    assert "MySQL" not in a.note and "MySQL" not in c.note_for("mysql")
    assert a.note.startswith("phase A: strict durability")


def test_relaxing_changes_only_dynamic_settings_without_touching_the_applier():
    _, b, _ = tuning_plan()
    assert replica_statements(b, SERIAL) == [
        f"SET GLOBAL {name} = {value}" for name, value in RELAXED_FLUSH
    ]


def test_parallel_apply_restarts_only_the_sql_thread():
    _, _, c = tuning_plan()
    assert replica_statements(c, SERIAL) == [
        "STOP SLAVE SQL_THREAD",
        "SET GLOBAL slave_parallel_threads = 4",
        "SET GLOBAL slave_parallel_mode = 'optimistic'",
        "START SLAVE SQL_THREAD",
    ]
    # Already so (a loop, or a restarted demo): the applier is left running.
    assert replica_statements(c, PARALLEL4) == []


def test_phase_a_goes_back_to_serial_apply_after_a_loop():
    a, _, _ = tuning_plan()
    strict = [f"SET GLOBAL {name} = {value}" for name, value in STRICT_FLUSH]
    assert replica_statements(a, SERIAL) == strict  # the lab starts serial: nothing to restart
    # The mode does not matter while serial: 0 threads in any mode is serial.
    assert replica_statements(a, {**SERIAL, "slave_parallel_mode": "conservative"}) == strict
    assert replica_statements(a, PARALLEL4) == [
        *strict,
        "STOP SLAVE SQL_THREAD",
        "SET GLOBAL slave_parallel_threads = 0",
        "SET GLOBAL slave_parallel_mode = 'optimistic'",
        "START SLAVE SQL_THREAD",
    ]


@pytest.mark.parametrize(
    "phase",
    [
        Phase("X", "typo", 60, (("sync_binlogs", 0),)),
        Phase("X", "injection", 60, (("sync_binlog = 0; DROP DATABASE x; --", 0),)),
        Phase("X", "mode", 60, parallel=Parallel(4, "fast'; DROP DATABASE x; --")),
        Phase("X", "threads", 60, parallel=Parallel(-1)),
    ],
)
def test_no_sql_is_built_from_names_outside_the_plan(phase):
    with pytest.raises(InvalidInput):
        replica_statements(phase, SERIAL)


def test_phase_seconds_one_for_all_or_one_each():
    assert parse_phase_seconds("45") == (45.0, 45.0, 45.0)
    assert parse_phase_seconds("60,90,150") == (60.0, 90.0, 150.0)
    assert tuning_plan(parse_phase_seconds("30,40,50"))[1].seconds == 40.0
    assert parse_phase_seconds("60,90,150") == DEFAULT_PHASE_SECONDS
    for bad in ("", "a", "60,90", "1,2,3,4", "60,0,60", "60,90,99999", "nan"):
        with pytest.raises(InvalidInput):
            parse_phase_seconds(bad)


def test_steady_has_no_phases_and_unknown_scenarios_are_refused():
    assert plan_for("steady") == ()
    assert [p.name for p in plan_for("tuning")] == ["A", "B", "C"]
    with pytest.raises(InvalidInput):
        plan_for("chaos")


def test_figures_and_the_console_line():
    figures = replica_figures([None, 40.0, 50.0, 45.0], [220.0, None, 240.0], [2000.0, 1990.0])
    assert (figures.samples, figures.lag_p50, figures.lag_max, figures.lag_last) == (
        3,
        45.0,
        50.0,
        45.0,
    )
    assert figures.apply_rate == 230.0 and figures.source_rate == 1995.0
    empty = replica_figures([], [], [])
    assert empty.lag_p50 is None and empty.samples == 0 and empty.caught_up_after_s is None
    times = [1.0, 2.0, 3.0, 4.0, 5.0]
    draining = replica_figures([0.5, 40.0, None, 1.5, 0.2], [], [], times)
    assert draining.caught_up_after_s == 4.0  # the first sample under 2 s after the peak
    rising = replica_figures([0.5, 1.0, 9.0, 20.0, 30.0], [], [], times)
    assert rising.caught_up_after_s is None
    steady = replica_figures([0.2, 0.1, 1.4, 0.3, 0.2], [], [], times)
    assert steady.caught_up_after_s == 1.0  # never behind: caught up from the start
    a = tuning_plan()[0]
    line = phase_report(a, 60.2, {"replica2": empty, "replica1": figures})
    assert line.startswith("scenario: phase A (strict durability")
    assert "60 s" in line
    assert line.index("replica1: lag p50 45.0 s, max 50.0 s") < line.index("replica2: lag p50 n/a")


class FakeConnection:
    def __init__(self, log: list[str], current: tuple[int, str]) -> None:
        self.log, self.current, self.closed = log, current, False

    def cursor(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql):
        self.log.append(sql)

    def fetchone(self):
        return self.current

    def close(self):
        self.closed = True


def test_the_runner_notes_each_phase_then_sets_every_replica():
    log: dict[str, list[str]] = {"replica1": [], "replica2": []}
    notes: list[tuple[str, datetime]] = []
    lines: list[str] = []
    connections: list[FakeConnection] = []

    def connect(name):
        connections.append(FakeConnection(log[name], (0, "optimistic")))
        return connections[-1]

    runner = ScenarioRunner(
        tuning_plan(),
        ["replica1", "replica2"],
        connect,  # type: ignore[arg-type]
        lambda note, at: notes.append((note, at)),
        emit=lines.append,
    )
    at = datetime(2026, 1, 1, tzinfo=UTC)
    runner.enter(tuning_plan()[1], at)
    assert notes == [(tuning_plan()[1].note, at)]
    expected = ["SELECT @@global.slave_parallel_threads, @@global.slave_parallel_mode"] + [
        f"SET GLOBAL {name} = {value}" for name, value in RELAXED_FLUSH
    ]
    assert log == {"replica1": expected, "replica2": expected}
    assert all(c.closed for c in connections)
    assert lines == [f"scenario: {tuning_plan()[1].note}"]
    assert runner.entered == [("B", at)]


def test_a_failing_note_or_replica_does_not_end_the_story():
    import pymysql

    lines: list[str] = []

    def broken_note(note, at):
        from sqlalchemy.exc import OperationalError

        raise OperationalError("INSERT", {}, Exception("database is locked"))

    def connect(name):
        raise pymysql.err.OperationalError(2003, f"cannot reach {name}")

    runner = ScenarioRunner(tuning_plan(), ["replica1"], connect, broken_note, emit=lines.append)
    runner.enter(tuning_plan()[2], datetime(2026, 1, 1, tzinfo=UTC))
    assert any("could not write the note of phase C" in line for line in lines)
    assert any("phase C on replica1 failed" in line for line in lines)


def test_a_stopped_runner_ends_within_its_phase():
    import threading

    noted = threading.Event()
    plan = tuning_plan((3600, 3600, 3600))
    runner = ScenarioRunner(plan, [], None, lambda p, at: noted.set(), emit=lambda _: None)  # type: ignore[arg-type]
    runner.start()
    assert noted.wait(timeout=30)
    runner.stop(timeout_s=10)
    assert runner._thread is not None and not runner._thread.is_alive()
    assert [name for name, _ in runner.entered] == ["A"]


MYSQL_SERIAL = {"replica_parallel_workers": "1", "replica_parallel_type": "LOGICAL_CLOCK"}


def test_mysql_names_for_the_same_story():
    a, b, c = tuning_plan()
    relaxed = replica_statements(b, MYSQL_SERIAL, "mysql")
    assert "SET GLOBAL sync_source_info = 0" in relaxed  # sync_master_info's 8.0.26 name
    assert not any("sync_master_info" in s for s in relaxed)
    assert replica_statements(c, MYSQL_SERIAL, "mysql") == [
        "STOP REPLICA SQL_THREAD",
        "SET GLOBAL replica_parallel_workers = 4",
        "SET GLOBAL replica_parallel_type = 'LOGICAL_CLOCK'",
        "START REPLICA SQL_THREAD",
    ]
    # MySQL 8.0.27+ starts with 4 LOGICAL_CLOCK workers: phase A makes it serial with 1, as
    # 0 is deprecated since 8.0.30.
    parallel = {"replica_parallel_workers": "4", "replica_parallel_type": "LOGICAL_CLOCK"}
    assert replica_statements(a, parallel, "mysql")[-3] == "SET GLOBAL replica_parallel_workers = 1"
    assert replica_statements(a, MYSQL_SERIAL, "mysql")[-1] == "SET GLOBAL sync_source_info = 1"
    assert "replica_parallel_workers=4, replica_parallel_type=LOGICAL_CLOCK" in c.note_for("mysql")
    assert "sync_source_info=0" in b.note_for("mysql")
