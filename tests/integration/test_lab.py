"""The lab itself: replication works, the proxy really sits on replica2's link, a killed replica
comes back and catches up, the monitor user has exactly the monitoring privileges, and the CLI
drives a detached lab. Test data lives in its own ``lab_test`` database, one table per test.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pymysql
import pytest

from lagscope.lab import Lab, LabConfig
from lagscope.lab.topology import CRASH_DIR, sweep_abandoned

try:
    from .waiting import assert_never, wait_until
except ImportError:  # tests/integration has no __init__.py yet: pytest put its dir on sys.path
    from waiting import assert_never, wait_until  # type: ignore[import-not-found,no-redef]

pytestmark = pytest.mark.integration

REPLICAS = ("replica1", "replica2")


def query(lab: Lab, name: str, sql: str, args: tuple[Any, ...] = (), user: str = "admin") -> Any:
    with lab.connect(name, user=user) as conn, conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall()


def has_row(lab: Lab, name: str, table: str, row_id: int) -> bool:
    # Table names are constants of this file, never input.
    rows = query(lab, name, f"SELECT 1 FROM lab_test.{table} WHERE id = %s", (row_id,))
    return bool(rows)


@pytest.fixture
def table(lab: Lab, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh table ``lab_test.<test name>`` on the source, already on every running replica."""
    name = re.sub(r"\W", "_", request.node.name)[:60]
    query(lab, "source", "CREATE DATABASE IF NOT EXISTS lab_test")
    query(lab, "source", f"CREATE TABLE lab_test.{name} (id INT PRIMARY KEY, note VARCHAR(20))")
    lab.wait_caught_up(timeout_s=30)
    yield name
    if lab.is_running("source"):
        query(lab, "source", f"DROP TABLE IF EXISTS lab_test.{name}")


def test_lab_starts_quickly_enough(lab: Lab) -> None:
    assert lab.start_seconds is not None
    print(f"\nlab (source + 2 replicas, replica2 proxied) started in {lab.start_seconds:.2f} s")
    assert lab.start_seconds <= 30


def test_servers_are_what_the_lab_says(lab: Lab) -> None:
    rows = {
        s.name: query(lab, s.name, "SELECT @@server_id, @@port, @@read_only, @@gtid_strict_mode")
        for s in lab.servers
    }
    assert rows["source"] == ((1, lab.source.port, 0, 1),)
    for i, name in enumerate(REPLICAS, start=2):
        assert rows[name] == ((i, lab.server(name).port, 1, 1),)


def test_write_on_source_reaches_both_replicas(lab: Lab, table: str) -> None:
    query(lab, "source", f"INSERT INTO lab_test.{table} VALUES (1, 'hello')")
    for name in REPLICAS:
        wait_until(partial(has_row, lab, name, table, 1), message=f"row 1 on {name}")
    lab.wait_caught_up(timeout_s=10)


def test_replica2_replicates_through_the_proxy(lab: Lab, table: str) -> None:
    proxy = lab.proxy_for("replica2")
    status = query(lab, "replica2", "SHOW SLAVE STATUS")
    assert proxy.listen_port != lab.source.port
    with lab.connect("replica2") as conn, conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute("SHOW SLAVE STATUS")
        status = cur.fetchone()
    assert status is not None and status["Master_Port"] == proxy.listen_port

    proxy.pause()
    try:
        query(lab, "source", f"INSERT INTO lab_test.{table} VALUES (1, 'paused')")
        wait_until(lambda: has_row(lab, "replica1", table, 1), message="row on replica1")
        assert_never(
            lambda: has_row(lab, "replica2", table, 1), for_s=1.5, message="row on replica2"
        )
    finally:
        proxy.resume()
    wait_until(lambda: has_row(lab, "replica2", table, 1), message="row on replica2 after resume")


def test_cut_link_reconnects_by_itself(lab: Lab, table: str) -> None:
    lab.proxy_for("replica2").cut()
    query(lab, "source", f"INSERT INTO lab_test.{table} VALUES (1, 'after cut')")
    wait_until(lambda: has_row(lab, "replica2", table, 1), message="row on replica2 after cut")


def test_killed_replica_restarts_and_catches_up(lab: Lab, table: str) -> None:
    pid = lab.server("replica1").pid
    lab.kill("replica1")
    assert not lab.is_running("replica1")
    assert lab.server("replica1").pid is None
    assert pid is not None
    assert not Path(f"/proc/{pid}/cmdline").exists() or _zombie(pid)
    with pytest.raises(pymysql.err.OperationalError):
        lab.connect("replica1", connect_timeout=2)

    query(lab, "source", f"INSERT INTO lab_test.{table} VALUES (1, 'while dead'), (2, 'too')")
    lab.restart("replica1")
    assert lab.is_running("replica1")
    wait_until(lambda: has_row(lab, "replica1", table, 2), message="rows on restarted replica1")
    lab.wait_caught_up(timeout_s=30)
    with lab.connect("replica1") as conn, conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute("SHOW SLAVE STATUS")
        status = cur.fetchone()
    assert status is not None
    assert (status["Slave_IO_Running"], status["Slave_SQL_Running"]) == ("Yes", "Yes")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] == "Z"
    except OSError:
        return True


EXPECTED_MONITOR_GRANTS = {
    "GRANT PROCESS, BINLOG MONITOR, SLAVE MONITOR ON *.* TO `monitor`@`%`",
    "GRANT SELECT ON `lagscope`.* TO `monitor`@`%`",
    "GRANT SELECT ON `performance_schema`.* TO `monitor`@`%`",
}


# On a read_only replica MariaDB 10.11 checks read_only before table privileges, so the INSERT
# fails with 1290 (ER_OPTION_PREVENTS_STATEMENT) there, 1142 (ER_TABLEACCESS_DENIED) on the source.
@pytest.mark.parametrize(("name", "insert_errno"), [("source", 1142), ("replica1", 1290)])
def test_monitor_user_has_exactly_least_privilege(lab: Lab, name: str, insert_errno: int) -> None:
    grants = {
        re.sub(r" IDENTIFIED BY PASSWORD '[^']*'", "", row[0])
        for row in query(lab, name, "SHOW GRANTS", user="monitor")
    }
    assert grants == EXPECTED_MONITOR_GRANTS

    with lab.connect(name, user="monitor") as conn, conn.cursor() as cur:
        # What it is for: all of these work.
        cur.execute("SHOW ALL SLAVES STATUS")
        cur.execute("SHOW MASTER STATUS")
        cur.execute("SELECT @@global.gtid_binlog_pos, @@global.gtid_slave_pos")
        cur.execute("SELECT COUNT(*) FROM lagscope.heartbeat")
        # What it must not do.
        with pytest.raises(pymysql.err.OperationalError) as denied:
            cur.execute("INSERT INTO lagscope.heartbeat VALUES (1, UTC_TIMESTAMP(6))")
        assert denied.value.args[0] == insert_errno
        with pytest.raises(pymysql.err.OperationalError) as denied:
            cur.execute("SET GLOBAL slave_parallel_threads = 8")
        assert denied.value.args[0] == 1227  # ER_SPECIFIC_ACCESS_DENIED_ERROR


def test_heartbeat_user_writes_the_source_only(lab: Lab) -> None:
    sql = "REPLACE INTO lagscope.heartbeat VALUES (999, UTC_TIMESTAMP(6))"
    with pytest.raises(pymysql.err.OperationalError):  # REPLACE needs DELETE: not granted
        query(lab, "source", sql, user="heartbeat")
    upsert = (
        "INSERT INTO lagscope.heartbeat (server_id, ts) VALUES (1, UTC_TIMESTAMP(6))"
        " ON DUPLICATE KEY UPDATE ts = VALUES(ts)"
    )
    query(lab, "source", upsert, user="heartbeat")
    with pytest.raises(pymysql.err.OperationalError) as refused:
        query(lab, "replica1", upsert, user="heartbeat")
    assert refused.value.args[0] == 1290  # ER_OPTION_PREVENTS_STATEMENT: --read-only
    lab.wait_caught_up(timeout_s=10)
    assert query(lab, "replica1", "SELECT server_id FROM lagscope.heartbeat") == ((1,),)


def test_replica_processlist_shows_the_parallel_applier(lab: Lab) -> None:
    sql = (
        "SELECT USER, COMMAND FROM information_schema.PROCESSLIST"
        " WHERE USER = 'system user' ORDER BY ID"
    )
    assert sorted(query(lab, "replica1", sql, user="monitor")) == [
        ("system user", "Slave_IO"),
        ("system user", "Slave_SQL"),
    ]
    with lab.connect("replica1") as admin, admin.cursor() as cur:
        cur.execute("STOP SLAVE")  # the worker pool can only be resized while stopped
        cur.execute("SET GLOBAL slave_parallel_threads = 4")
        cur.execute("START SLAVE")

        expected = ["Slave_IO", "Slave_SQL"] + ["Slave_worker"] * 4

        def applier_threads() -> list[str]:
            # Right after START SLAVE the IO thread may still show COMMAND 'Connect' while it
            # logs in to the source (seen once in four runs): wait for the settled state.
            return sorted(command for _, command in query(lab, "replica1", sql, user="monitor"))

        try:
            wait_until(lambda: applier_threads() == expected, message="IO, SQL and 4 workers")
        finally:
            cur.execute("STOP SLAVE")
            cur.execute("SET GLOBAL slave_parallel_threads = 0")
            cur.execute("START SLAVE")


def test_state_file_reattaches(lab: Lab) -> None:
    other = Lab.load(lab.state_path)
    assert [s.port for s in other.servers] == [s.port for s in lab.servers]
    assert other.credentials == lab.credentials
    assert other.proxy_for("replica2").listen_port == lab.proxy_for("replica2").listen_port
    status = other.status()
    assert all(entry["up"] for entry in status["servers"].values())
    assert status["servers"]["replica2"]["replication"][0]["source_port"] == (
        lab.proxy_for("replica2").listen_port
    )
    assert (lab.state_path.stat().st_mode & 0o777) == 0o600  # it holds passwords


def run_cli(*args: str, env: dict[str, str]) -> Any:
    done = subprocess.run(
        [sys.executable, "-c", "from lagscope.lab.cli import lab; lab()", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_cli_up_status_proxy_down(tmp_path: Path) -> None:
    env = {**os.environ, "LAGSCOPE_LAB_DIR": str(tmp_path)}
    env.pop("LAGSCOPE_LAB_STATE", None)
    up = run_cli("up", "--replicas", "1", "--proxied", "replica1", "--delay-ms", "5", env=env)
    try:
        assert set(up["servers"]) == {"source", "replica1"}
        assert set(up["credentials"]) >= {"monitor", "admin"}
        status = run_cli("status", env=env)
        assert status["servers"]["replica1"]["replication"][0]["io_running"] == "Yes"
        assert run_cli("proxy", "--delay-ms", "20", env=env)["delay_ms"] == 20
        assert run_cli("proxy", "--pause", env=env)["paused"] is True
        assert run_cli("proxy", "--resume", env=env)["paused"] is False
    finally:
        down = run_cli("down", env=env)
    assert down["stopped"] == up["state_path"]
    assert not Path(up["state_path"]).exists()
    for server in up["servers"].values():
        assert not Path(f"/proc/{server['pid']}/cmdline").exists() or _zombie(server["pid"])


def test_lab_of_a_killed_process_is_swept_by_the_next_start() -> None:
    script = (
        "import os, signal\n"
        "from lagscope.lab import Lab, LabConfig\n"
        "lab = Lab.start(LabConfig(replicas=0))\n"
        "print(lab.state_path, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"  # no atexit, no finally: a killed test run
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    state_path = Path(done.stdout.strip())
    pid = json.loads(state_path.read_text())["servers"][0]["pid"]
    assert Path(f"/proc/{pid}/cmdline").exists() and not _zombie(pid), "the orphan runs on"

    assert state_path in sweep_abandoned()  # what Lab.start does first
    assert not state_path.parent.exists()
    assert not Path(f"/proc/{pid}/cmdline").exists() or _zombie(pid)


def test_a_server_that_crashed_leaves_its_error_log(caplog: pytest.LogCaptureFixture) -> None:
    small = Lab.start(LabConfig(replicas=0))
    try:
        pid = small.source.pid
        assert pid is not None
        os.kill(pid, signal.SIGSEGV)  # mariadbd writes a backtrace, then dies
        wait_until(lambda: not small.is_running("source"), message="source gone")
    finally:
        small.stop()
    kept = CRASH_DIR / f"{small.dir.name}-source.log"
    try:
        assert "got signal 11" in kept.read_text()
        assert str(kept) in caplog.text
    finally:
        kept.unlink(missing_ok=True)
