"""Each lab incident (lagscope.lab.incidents) really happens on the live MariaDB lab, shows what
docs/causes.md says it shows, and is undone: every replica caught up, settings restored, table
gone."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from lagscope.lab import Lab
from lagscope.lab import incidents as inc
from lagscope.lab.cli import lab as lab_cli
from lagscope.lab.servers import libfaketime_path

try:
    from .waiting import wait_until
except ImportError:  # tests/integration has no __init__.py yet: pytest put its dir on sys.path
    from waiting import wait_until  # type: ignore[import-not-found,no-redef]

pytestmark = pytest.mark.integration


def one(lab: Lab, name: str, sql: str, args: tuple[Any, ...] = ()) -> dict[str, Any]:
    rows = inc.query(lab, name, sql, args)
    assert len(rows) == 1, rows
    return rows[0]


def assert_undone(lab: Lab, table: str | None) -> None:
    """Caught up everywhere and the incident's table gone (from the replicas too)."""
    for replica in lab.replicas:
        assert inc.not_applied(lab, replica.name) == 0, replica.name
        if table is not None:
            left = inc.query(
                lab,
                replica.name,
                "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s"
                " AND TABLE_NAME = %s",
                (inc.SCHEMA, table),
            )
            assert left == [], (replica.name, table)


def test_large_transaction_is_applied_for_seconds_with_rows_climbing(lab: Lab) -> None:
    with inc.large_transaction(lab, rows=1_048_576) as made:
        assert made.details["rows"] == 1_048_576
        seen: list[int] = []

        def climbed() -> bool:
            trx = [t for t in inc.applier_transactions(lab, made.replica) if t["trx_rows_modified"]]
            if trx:
                seen.append(int(trx[0]["trx_rows_modified"]))
            return len(seen) >= 2 and seen[-1] > seen[0]

        wait_until(climbed, timeout_s=60, interval_s=0.2, message="trx_rows_modified to climb")

        def in_a_row_event() -> list[dict[str, object]]:
            # Between two row events the SQL thread shows "Apply log event" for a moment, so
            # one look at its state can miss the row event it spends the transaction in.
            state = inc.applier_threads(lab, made.replica)
            return state if any("Update_rows_log_event" in str(t["STATE"]) for t in state) else []

        state = wait_until(
            in_a_row_event, timeout_s=30, interval_s=0.1, message="the applier in a row event"
        )
        assert any(str(t["INFO"] or "").startswith("UPDATE lab_incidents.large_trx") for t in state)
    assert_undone(lab, made.table)


def test_long_alter_is_applied_as_ddl(lab: Lab) -> None:
    with inc.long_alter(lab, rows=500_000) as made:
        thread = next(
            t
            for t in inc.applier_threads(lab, made.replica)
            if str(t["INFO"] or "").startswith("ALTER TABLE lab_incidents.long_alter")
        )
        assert made.details["applier_thread_id"] == thread["ID"]
    assert_undone(lab, made.table)


def test_metadata_lock_names_the_session_that_holds_it(lab: Lab) -> None:
    with inc.metadata_lock(lab) as made:
        assert made.session_id is not None and made.cause == "blocked_by_session"
        waiting = [
            t
            for t in inc.applier_threads(lab, made.replica)
            if t["STATE"] == "Waiting for table metadata lock"
        ]
        assert waiting, inc.applier_threads(lab, made.replica)
        holder = one(
            lab,
            made.replica,
            "SELECT COMMAND FROM information_schema.PROCESSLIST WHERE ID = %s",
            (made.session_id,),
        )
        assert holder["COMMAND"] == "Sleep"  # idle in its transaction
        trx = one(
            lab,
            made.replica,
            "SELECT trx_state, trx_rows_locked FROM information_schema.INNODB_TRX"
            " WHERE trx_mysql_thread_id = %s",
            (made.session_id,),
        )
        assert trx["trx_state"] == "RUNNING"
        assert (
            inc.query(lab, made.replica, "SELECT * FROM information_schema.INNODB_LOCK_WAITS") == []
        )
    session_left = inc.query(
        lab,
        made.replica,
        "SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = %s",
        (made.session_id,),
    )
    assert session_left == []
    assert_undone(lab, made.table)


def test_row_lock_wait_names_the_sessions_transaction(lab: Lab) -> None:
    with inc.row_lock(lab) as made:
        assert made.session_id is not None
        applier = next(
            t for t in inc.applier_transactions(lab, made.replica) if t["trx_state"] == "LOCK WAIT"
        )
        blocker = one(
            lab,
            made.replica,
            "SELECT trx_id FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = %s",
            (made.session_id,),
        )
        waits = inc.query(
            lab,
            made.replica,
            "SELECT requesting_trx_id, blocking_trx_id FROM information_schema.INNODB_LOCK_WAITS",
        )
        assert {
            "requesting_trx_id": applier["trx_id"],
            "blocking_trx_id": blocker["trx_id"],
        } in waits
        assert made.details["blocking_trx_id"] == str(blocker["trx_id"])
        assert made.details["applier_thread_id"] == applier["trx_mysql_thread_id"]
    assert_undone(lab, made.table)


def test_keyless_bulk_update_scans_on_the_replica(lab: Lab) -> None:
    with inc.no_primary_key(lab, rows=6000) as made:
        keys = inc.query(
            lab,
            made.replica,
            "SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s"
            " AND TABLE_NAME = %s",
            (made.schema, made.table),
        )
        assert keys == []
        seen: list[Any] = []

        def scanning_or_done() -> bool:
            # Between two events the applier shows "Reading event from the relay log" with its
            # transaction open: look again until it is seen in the scan, or has applied it all.
            states = [str(t["STATE"]) for t in inc.applier_threads(lab, made.replica)]
            trx = inc.applier_transactions(lab, made.replica)
            seen[:] = [states, trx]
            return "Update_rows_log_event::find_row()" in states or not trx

        wait_until(scanning_or_done, timeout_s=30, interval_s=0.05, message="the applier's scan")
        states, trx = seen
        # Scanning, not waiting on a lock: the same state string, a RUNNING transaction.
        assert all(t["trx_state"] == "RUNNING" for t in trx), (states, trx)
    assert_undone(lab, made.table)


def test_serial_apply_while_the_source_groups_commits(lab: Lab) -> None:
    with inc.serial_apply(lab) as made:
        assert made.details["commits_per_group"] > 1.5
        first = inc.binlog_commits(lab)
        wait_until(
            lambda: inc.binlog_commits(lab)[1] > first[1] + 50,
            timeout_s=30,
            message="50 more binlog groups",
        )
        second = inc.binlog_commits(lab)
        assert (second[0] - first[0]) / (second[1] - first[1]) > 1.5
        threads = one(lab, made.replica, "SELECT @@global.slave_parallel_threads AS n")
        assert threads["n"] == 0
        assert wait_until(lambda: inc.not_applied(lab, made.replica) > 0, timeout_s=30)
    assert one(lab, "source", "SELECT @@global.sync_binlog AS v")["v"] == 0
    assert_undone(lab, made.table)


def test_relay_log_durability_slows_receiving_on_near_and_far_alike(lab: Lab) -> None:
    sync = "SELECT @@global.sync_relay_log AS r, @@global.sync_master_info AS m"
    before = {name: one(lab, name, sync) for name in ("replica1", "replica2")}
    with inc.relay_log_durability(lab) as made:
        for name in ("replica1", "replica2"):
            assert one(lab, name, sync) == {"r": 1, "m": 1}
            wait_until(
                lambda name=name: inc.not_received(lab, name) > 100,
                timeout_s=30,
                message=f"{name} behind on receiving",
            )
        wait_until(
            lambda: any(
                t["STATE"] == "Queueing master event to the relay log"
                for t in inc.applier_threads(lab, made.replica)
            ),
            timeout_s=10,
            message="the IO thread queueing (writing, not waiting for the source)",
        )
    assert {name: one(lab, name, sync) for name in ("replica1", "replica2")} == before
    assert_undone(lab, made.table)


def test_durable_serial_apply_falls_behind_committing(lab: Lab) -> None:
    with inc.durable_apply(lab) as made:
        flags = one(
            lab,
            made.replica,
            "SELECT @@global.innodb_flush_log_at_trx_commit AS f, @@global.sync_binlog AS s,"
            " @@global.slave_parallel_threads AS p",
        )
        assert (flags["f"], flags["s"], flags["p"]) == (1, 1, 0)
        assert made.details["not_applied_at_start"] >= 50
        assert one(lab, "source", "SELECT @@global.innodb_flush_log_at_trx_commit AS f")["f"] == 2
    assert one(lab, "source", "SELECT @@global.innodb_flush_log_at_trx_commit AS f")["f"] == 1
    assert one(lab, made.replica, "SELECT @@global.sync_binlog AS s")["s"] == 0
    assert_undone(lab, made.table)


def test_delayed_replica_shows_its_delay_and_is_undone(lab: Lab) -> None:
    with inc.delayed(lab, delay_s=40) as made:
        status = inc.query(lab, made.replica, "SHOW ALL SLAVES STATUS")[0]
        assert status["SQL_Delay"] == 40
        assert "MASTER_DELAY" in status["Slave_SQL_Running_State"]
        assert inc.not_applied(lab, made.replica) >= 1
    assert inc.query(lab, made.replica, "SHOW ALL SLAVES STATUS")[0]["SQL_Delay"] == 0
    assert_undone(lab, made.table)


def test_stopped_replica_receives_but_does_not_apply(lab: Lab) -> None:
    with inc.stopped(lab) as made:
        status = inc.query(lab, made.replica, "SHOW ALL SLAVES STATUS")[0]
        assert (status["Slave_IO_Running"], status["Slave_SQL_Running"]) == ("Yes", "No")
        assert inc.not_applied(lab, made.replica) >= 1
    assert inc.query(lab, made.replica, "SHOW ALL SLAVES STATUS")[0]["Slave_SQL_Running"] == "Yes"
    assert_undone(lab, made.table)


def test_broken_replica_stops_on_a_duplicate_key_and_is_repaired(lab: Lab) -> None:
    with inc.broken(lab) as made:
        assert made.details["errno"] == 1062
        assert "Duplicate entry" in made.details["error"]
    status = inc.query(lab, made.replica, "SHOW ALL SLAVES STATUS")[0]
    assert status["Slave_SQL_Running"] == "Yes"
    assert_undone(lab, made.table)


def test_network_bound_far_replica_lags_while_the_near_one_keeps_up(lab: Lab) -> None:
    far, near = "replica2", "replica1"
    with inc.network_bound(lab, replica=far) as made:
        assert lab.proxy_for(far).bandwidth_bps == made.details["bandwidth_bps"]
        backlog = [inc.not_received(lab, far)]
        near_backlog = [inc.not_applied(lab, near)]

        def grew() -> bool:
            backlog.append(inc.not_received(lab, far))
            near_backlog.append(inc.not_applied(lab, near))
            return backlog[-1] >= backlog[0] + 100

        wait_until(grew, timeout_s=30, interval_s=0.2, message="the far replica's backlog to grow")
        # The near replica, on the same source and the same load, stays within a few
        # transactions (the load writes ~125 per second).
        assert max(near_backlog) < 60, near_backlog
    assert lab.proxy_for(far).bandwidth_bps is None
    assert_undone(lab, made.table)


def test_cli_plays_an_incident(lab: Lab) -> None:
    result = CliRunner().invoke(
        lab_cli,
        ["incident", "delayed", "--state", str(lab.state_path), "--hold", "0", "-o", "delay_s=5"],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert '"cause": "delayed_by_design"' in lines[0]
    assert lines[-1] == '{"undone": "delayed"}'
    assert inc.query(lab, "replica1", "SHOW ALL SLAVES STATUS")[0]["SQL_Delay"] == 0


def test_clock_offset_shifts_the_replicas_whole_clock(lab: Lab) -> None:
    try:
        libfaketime_path()
    except Exception:
        pytest.skip("libfaketime (Debian faketime) is not installed")
    with inc.clock_offset(lab, replica="replica2", offset_s=3.0) as made:
        assert abs(made.details["measured_offset_s"] - 3.0) < 0.5
        # Server-wide, not one session's NOW(): a fresh session sees it too.
        assert abs(inc.measure_clock_offset(lab, "replica2") - 3.0) < 0.5
        # Replication still works across the skew.
        inc.query(lab, "source", "CREATE DATABASE IF NOT EXISTS lab_incidents")
        lab.wait_caught_up(timeout_s=60)
    assert abs(inc.measure_clock_offset(lab, "replica2")) < 0.5
    assert_undone(lab, None)
