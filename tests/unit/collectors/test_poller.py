"""The poller: round trips per poll, optional readings, error paths, clock offset."""

from __future__ import annotations

import itertools

import pytest

from lagscope.collectors import (
    applier_workers,
    counters,
    replica_status,
    server_state,
    source_status,
)
from lagscope.collectors.dialect import MARIADB
from lagscope.collectors.flavor import FLAVOR_SQL
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.params import ParamPlan, discovery_statement
from lagscope.collectors.poller import InstancePoller
from lagscope.errors import AccessDenied, QueryFailed, ServerUnreachable, UnsupportedServer
from tests.unit.fakes.executor import FakeExecutor, rs

STATE = rs(
    (
        "now_ts",
        "server_id",
        "read_only",
        "gtid_binlog_pos",
        "gtid_slave_pos",
        "gtid_current_pos",
        "gtid_strict_mode",
        "gtid_domain_id",
    ),
    ("1700000000.500000", 2, 1, "", "0-1-42", "0-1-42", 1, 0),
)
CATALOG = rs(
    ("VARIABLE_NAME", "VARIABLE_VALUE"), ("SLAVE_PARALLEL_THREADS", "0"), ("SYNC_BINLOG", "0")
)
REPLICA = rs(
    (
        "Connection_name",
        "Slave_IO_Running",
        "Slave_SQL_Running",
        "Seconds_Behind_Master",
        "Gtid_IO_Pos",
    ),
    ("", "Yes", "No", None, "0-1-50"),
)
HEARTBEAT = HeartbeatTable()
PARAMS_SQL = ParamPlan(("slave_parallel_threads", "sync_binlog"), frozenset(), ()).statement()


def mariadb_answers(**overrides):
    answers = {
        FLAVOR_SQL: rs(("@@version", "@@version_comment"), ("10.11.6-MariaDB", "MariaDB Server")),
        discovery_statement(MARIADB): CATALOG,
        server_state.statement(MARIADB): STATE,
        replica_status.statement(MARIADB): REPLICA,
        source_status.statement(MARIADB): rs(("File", "Position"), ("bin.000002", 1234)),
        PARAMS_SQL: rs(("p",), ("4\x1f0",)),
        counters.statement(MARIADB): rs(
            ("VARIABLE_NAME", "VARIABLE_VALUE"), ("BINLOG_COMMITS", "7")
        ),
        applier_workers.statement(MARIADB): rs(
            ("id", "user", "command", "state", "time_ms", "info"),
            (5, "system user", "Slave_SQL", "Waiting for work from SQL thread", 1500, None),
            (6, "system user", "Slave_worker", "Waiting for work from SQL thread", 2500.5, None),
            (7, "system user", "Killed", "Commit", 3, None),
            (8, "system user", "Slave_IO", "Waiting for master to send event", 9, None),
        ),
        HEARTBEAT.statement(): rs(("server_id", "us"), (1, 1_700_000_000_000_000)),
    }
    answers.update(overrides)
    return answers


def fixed_clock(*times: float):
    values = itertools.chain(times, itertools.repeat(times[-1]))
    return lambda: next(values)


def test_one_round_trip_per_poll_after_two_per_connection():
    fake = FakeExecutor(mariadb_answers())
    poller = InstancePoller(fake, heartbeat=HEARTBEAT)
    poller.poll()
    assert [len(b) for b in fake.batches] == [1, 1, 7]
    poller.poll()
    assert len(fake.batches) == 4
    assert fake.batches[-1][0] == server_state.statement(MARIADB)  # clock is read first
    assert fake.batches[-1][1] == "SHOW ALL SLAVES STATUS"


def test_snapshot_is_normalized():
    fake = FakeExecutor(mariadb_answers())
    poller = InstancePoller(
        fake, heartbeat=HEARTBEAT, clock=fixed_clock(1700000000.0, 1700000000.002)
    )
    snap = poller.poll()
    assert snap.server_id == 2 and snap.read_only
    assert snap.gtid.slave_pos == "0-1-42" and snap.gtid.strict_mode
    (channel,) = snap.channels
    assert channel.seconds_behind_source is None  # NULL stays NULL
    assert not channel.sql_running and channel.io_running
    assert channel.retrieved_gtids == "0-1-50"
    assert snap.source is not None and snap.source.binlog_position == 1234
    assert snap.params == {"slave_parallel_threads": "4", "sync_binlog": "0"}
    assert snap.counters == {"Binlog_commits": 7}
    # Neither the SQL nor the IO thread is a parallel worker; a worker being retried ('Killed') is.
    assert [(w.worker_id, w.thread_id) for w in snap.workers] == [(1, 6), (2, 7)]
    assert snap.workers[0].state_time_s == pytest.approx(2.5005)
    assert snap.heartbeat is not None and snap.heartbeat.rows[0].ts == 1_700_000_000.0
    assert snap.round_trip_s == pytest.approx(0.002, abs=1e-6)
    assert snap.clock.offset_s == pytest.approx(0.499, abs=1e-6)
    assert snap.clock.resolution_s == pytest.approx(0.001, abs=1e-6)
    assert snap.problems == {}


def test_serial_apply_reports_the_sql_thread_as_worker_zero():
    workers = rs(
        ("id", "user", "command", "state", "time_ms", "info"),
        (5, "system user", "Slave_SQL", "Slave has read all relay log", 10, None),
    )
    fake = FakeExecutor(mariadb_answers(**{applier_workers.statement(MARIADB): workers}))
    snap = InstancePoller(fake).poll()
    assert [(w.worker_id, w.state) for w in snap.workers] == [(0, "Slave has read all relay log")]


def test_a_refused_optional_reading_is_a_problem_and_the_rest_still_arrive():
    missing = QueryFailed("db:3306", "Table 'lagscope.heartbeat' doesn't exist", 1146)
    denied = AccessDenied("db:3306", "Access denied; you need the BINLOG MONITOR privilege", 1227)
    answers = mariadb_answers(
        **{HEARTBEAT.statement(): missing, source_status.statement(MARIADB): denied}
    )
    fake = FakeExecutor(answers)
    poller = InstancePoller(fake, heartbeat=HEARTBEAT)
    snap = poller.poll()
    assert snap.source is None and snap.heartbeat is None
    assert snap.params["slave_parallel_threads"] == "4"  # sent again after the refusal
    assert snap.counters == {"Binlog_commits": 7}
    assert "BINLOG MONITOR" in snap.problems["source_status"]
    assert "doesn't exist" in snap.problems["heartbeat"]
    # Later polls skip what was refused on this connection and keep reporting it.
    before = len(fake.batches)
    snap2 = poller.poll()
    assert len(fake.batches) == before + 1
    assert set(snap2.problems) == {"source_status", "heartbeat"}


def test_a_refused_required_reading_fails_the_poll_with_a_hint():
    denied = AccessDenied(
        "db:3306", "Access denied; you need (at least one of) the SLAVE MONITOR privilege(s)", 1227
    )
    fake = FakeExecutor(mariadb_answers(**{"SHOW ALL SLAVES STATUS": denied}))
    with pytest.raises(AccessDenied, match="REPLICA MONITOR"):
        InstancePoller(fake).poll()


def test_unreachable_resets_what_was_learned_on_the_connection():
    fake = FakeExecutor(mariadb_answers())
    poller = InstancePoller(fake)
    poller.poll()
    fake.down = True
    with pytest.raises(ServerUnreachable):
        poller.poll()
    fake.down = False
    poller.poll()
    assert fake.batches[-3] == [FLAVOR_SQL]  # learned again after the outage


def test_unsupported_and_unparseable_servers():
    old = FakeExecutor({FLAVOR_SQL: rs(("v", "c"), ("10.4.32-MariaDB", ""))})
    with pytest.raises(UnsupportedServer, match=r"older than 10\.5"):
        InstancePoller(old).poll()
    odd = FakeExecutor({FLAVOR_SQL: rs(("v", "c"), ("weird", ""))})
    with pytest.raises(UnsupportedServer, match="cannot parse"):
        InstancePoller(odd).poll()


def test_missing_extra_params_are_reported():
    fake = FakeExecutor(mariadb_answers())
    snap = InstancePoller(fake, extra_params=["no_such_variable"]).poll()
    assert "no_such_variable" in snap.problems["params"]


def test_parameters_every_poll_and_mariadb_workers_at_the_slow_cadence():
    """A parameter change shows at the next poll (one cheap column); MariaDB's processlist
    workers are read at the slow cadence."""
    fake = FakeExecutor(mariadb_answers())
    times = iter([100.0, 100.001, 101.0, 101.001, 105.0, 105.001])
    poller = InstancePoller(fake, clock=lambda: next(times), slow_every_s=5.0)
    first, second, third = poller.poll(), poller.poll(), poller.poll()
    workers_sql = applier_workers.statement(MARIADB)
    assert first.params_read and PARAMS_SQL in fake.batches[2] and workers_sql in fake.batches[2]
    assert second.params_read and second.params["sync_binlog"] == "0"
    assert PARAMS_SQL in fake.batches[3] and second.workers == ()
    assert workers_sql not in fake.batches[3]
    assert third.params_read and third.params["slave_parallel_threads"] == "4"
    assert workers_sql in fake.batches[4]
