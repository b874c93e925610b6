"""Collectors against the real MariaDB lab: every reading, every failure mode.

Each test leaves replication as it found it (threads running, caught up), even on failure.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pymysql
import pytest

from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.gtid import gtid_counts
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.poller import InstancePoller
from lagscope.collectors.snapshot import InstanceSnapshot, IoState
from lagscope.errors import AccessDenied, ServerUnreachable

from .waiting import wait_until

pytestmark = pytest.mark.integration

TIMEOUT_S = 1.5


def poller_for(
    lab, name: str, user: str = "monitor", heartbeat: bool = True, **kw
) -> InstancePoller:
    server = lab.server(name)
    login, password = getattr(lab.credentials, user)
    spec = ConnectionSpec(
        host=server.host,
        port=server.port,
        user=login,
        password=kw.pop("password", password),
        connect_timeout_s=TIMEOUT_S,
        read_timeout_s=TIMEOUT_S,
    )
    table = HeartbeatTable() if heartbeat else None
    return InstancePoller(PyMySQLExecutor(spec), heartbeat=table, **kw)


@pytest.fixture(scope="module")
def app_table(lab) -> str:
    with lab.connect("source") as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS app")
        cur.execute(
            "CREATE TABLE IF NOT EXISTS app.t (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(64))"
        )
    lab.wait_caught_up(timeout_s=30)
    return "app.t"


def write_rows(lab, n: int) -> None:
    with lab.connect("source") as conn, conn.cursor() as cur:
        for i in range(n):
            cur.execute("INSERT INTO app.t (v) VALUES (%s)", (f"row {i}",))


def counts(source: InstanceSnapshot, replica: InstanceSnapshot, channel: str = ""):
    status = replica.channel(channel)
    assert status is not None
    return gtid_counts(
        "mariadb", source.gtid.executed, status.retrieved_gtids, status.executed_gtids
    )


@pytest.fixture
def pollers(lab, app_table) -> Iterator[dict[str, InstancePoller]]:
    created = {name: poller_for(lab, name) for name in ("source", "replica1", "replica2")}
    yield created
    for poller in created.values():
        poller.close()


@pytest.fixture
def admin_replica1(lab) -> Iterator[pymysql.connections.Connection]:
    conn = lab.connect("replica1")
    yield conn
    # Whatever the test did, leave replica1 replicating and caught up.
    with conn.cursor() as cur:
        cur.execute("START SLAVE")
    conn.close()
    lab.wait_caught_up(timeout_s=30)


def test_caught_up_replica(lab, pollers):
    lab.wait_caught_up(timeout_s=30)
    source, replica = pollers["source"].poll(), pollers["replica1"].poll()
    assert source.source is not None and source.source.binlog_file
    assert not source.is_replica and source.server_id == 1
    (channel,) = replica.channels
    assert channel.channel == ""
    assert channel.io_state is IoState.YES and channel.sql_running
    assert channel.seconds_behind_source == 0
    assert channel.using_gtid == "Slave_Pos"
    assert channel.source_port is not None
    assert replica.read_only
    c = counts(source, replica)
    assert (c.trx_behind, c.not_received, c.received_not_applied, c.errant) == (0, 0, 0, 0)
    # Same machine, so the clocks agree within what one round trip can resolve.
    assert abs(replica.clock.offset_s) < replica.clock.resolution_s + 0.01


def test_sql_thread_stopped_under_writes(lab, pollers, admin_replica1):
    with admin_replica1.cursor() as cur:
        cur.execute("STOP SLAVE SQL_THREAD")
    write_rows(lab, 25)

    def backlog_received() -> bool:
        return (
            counts(pollers["source"].poll(), pollers["replica1"].poll()).received_not_applied >= 25
        )

    wait_until(backlog_received, timeout_s=15, message="25 trx received, none applied")
    source, replica = pollers["source"].poll(), pollers["replica1"].poll()
    channel = replica.channels[0]
    assert not channel.sql_running and channel.io_state is IoState.YES
    assert channel.seconds_behind_source is None  # NULL, not 0
    assert not channel.broken  # stopped by an operator, not by an error
    c = counts(source, replica)
    assert c.received_not_applied >= 25 and c.not_received == 0
    assert c.trx_behind == c.received_not_applied
    assert channel.relay_log_space and channel.relay_log_space > 0


def test_fsync_times_are_read_while_behind_and_not_while_caught_up(lab, pollers, admin_replica1):
    """performance_schema's file summary (the lab runs it with the file instruments only) is
    a behind-only reading: a caught-up poll sends nothing more, a poll after a behind one
    reads the binary and relay logs' fsync counts and times."""
    write_rows(lab, 1)
    lab.wait_caught_up(timeout_s=30)
    healthy = pollers["replica1"].poll()
    assert not any(name.startswith("fsync_") for name in healthy.counters)
    # Behind with the applier running (a stopped one is not "behind"): a replica session
    # holds the row the next replicated update needs.
    with admin_replica1.cursor() as cur:
        cur.execute("SELECT MAX(id) FROM app.t")
        (row_id,) = cur.fetchone()
        cur.execute("BEGIN")
        cur.execute("SELECT id FROM app.t WHERE id = %s FOR UPDATE", (row_id,))
    try:
        with lab.connect("source") as conn, conn.cursor() as cur:
            cur.execute("UPDATE app.t SET v = 'held' WHERE id = %s", (row_id,))

        def timed() -> InstanceSnapshot | None:
            snap = pollers["replica1"].poll()
            return snap if "fsync_relaylog_ops" in snap.counters else None

        snap = wait_until(timed, timeout_s=20, message="a poll after a behind one reads fsyncs")
    finally:
        admin_replica1.rollback()
    assert snap is not None and "file_io" not in snap.problems
    # The relay log was opened, written and synced by the receiver since the server started.
    assert snap.counters["fsync_relaylog_ops"] > 0 and snap.counters["fsync_relaylog_ps"] > 0
    assert snap.counters["fsync_binlog_ops"] > 0
    assert "fsync_redo_ops" not in snap.counters  # MariaDB does not instrument ib_logfile0


def test_io_thread_stopped(lab, pollers, admin_replica1):
    with admin_replica1.cursor() as cur:
        cur.execute("STOP SLAVE IO_THREAD")
    write_rows(lab, 10)
    source, replica = pollers["source"].poll(), pollers["replica1"].poll()
    channel = replica.channels[0]
    assert channel.io_state is IoState.NO and channel.sql_running
    assert channel.seconds_behind_source is None  # MariaDB: NULL as soon as IO is not Yes
    c = counts(source, replica)
    assert c.not_received >= 10 and c.received_not_applied == 0


# One way. Wide, so that the polls below fit inside it on a busy box (0.6 s did not leave room
# for three polls and a wait: the direct replica had to be done within 0.5 s).
PROXY_DELAY_S = 2.0


def test_proxied_replica_receives_later(lab, pollers):
    proxy = lab.proxy_for("replica2")
    lab.wait_caught_up(timeout_s=30)
    proxy.set_delay(PROXY_DELAY_S)
    try:
        write_rows(lab, 1)
        started = time.monotonic()
        source = pollers["source"].poll()
        far = counts(source, pollers["replica2"].poll())
        assert far.not_received >= 1  # still on the wire
        wait_until(
            lambda: counts(source, pollers["replica1"].poll()).trx_behind == 0,
            timeout_s=30,
            message="the direct replica applies",
        )
        # Ordered by what the servers say, not by how fast this machine is: when the direct
        # replica had applied it, the proxied one had not received it yet.
        assert counts(source, pollers["replica2"].poll()).not_received >= 1
        wait_until(
            lambda: counts(source, pollers["replica2"].poll()).not_received == 0,
            timeout_s=30,
            message="the proxied replica receives eventually",
        )
        assert time.monotonic() - started >= PROXY_DELAY_S - 0.1  # held by the proxy
    finally:
        proxy.set_delay(0.0)


def test_replication_broken_by_duplicate_key(lab, pollers, admin_replica1, app_table):
    with admin_replica1.cursor() as cur:
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute("INSERT INTO app.t (id, v) VALUES (900001, 'replica only')")
    with lab.connect("source") as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO app.t (id, v) VALUES (900001, 'from source')")

    wait_until(
        lambda: not pollers["replica1"].poll().channels[0].sql_running,
        timeout_s=15,
        message="SQL thread stops on the duplicate key",
    )
    channel = pollers["replica1"].poll().channels[0]
    assert channel.broken
    assert channel.last_sql_errno == 1062
    assert "Duplicate entry '900001'" in channel.last_sql_error
    assert channel.seconds_behind_source is None
    # Repair the way an operator would: drop the conflicting row, restart the applier.
    with admin_replica1.cursor() as cur:
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute("DELETE FROM app.t WHERE id = 900001")
        cur.execute("START SLAVE SQL_THREAD")
    wait_until(lambda: pollers["replica1"].poll().channels[0].sql_running, timeout_s=15)


def test_second_channel_is_reported_separately(lab, pollers, admin_replica1):
    with admin_replica1.cursor() as cur:
        # A real second connection whose source does not answer: IO keeps connecting.
        cur.execute(
            "CHANGE MASTER 'aux' TO MASTER_HOST='127.0.0.1', MASTER_PORT=9, "
            "MASTER_USER='nobody', MASTER_PASSWORD='x', MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=no"
        )
        cur.execute("START SLAVE 'aux'")
    try:
        wait_until(
            lambda: io_errno(pollers["replica1"].poll(), "aux") != 0,
            timeout_s=15,
            message="aux reports its connection error",
        )
        snap = pollers["replica1"].poll()
        assert [c.channel for c in snap.channels] == ["", "aux"]
        aux, default = snap.channel("aux"), snap.channel("")
        assert aux is not None and default is not None
        assert aux.io_state is IoState.CONNECTING and aux.seconds_behind_source is None
        assert aux.last_io_errno == 2003 and aux.source_port == 9
        assert default.io_state is IoState.YES and default.seconds_behind_source == 0
    finally:
        with admin_replica1.cursor() as cur:
            cur.execute("STOP SLAVE 'aux'")
            cur.execute("RESET SLAVE 'aux' ALL")


def io_errno(snapshot: InstanceSnapshot, channel: str) -> int:
    status = snapshot.channel(channel)
    return status.last_io_errno if status else 0


def test_killed_replica_is_unreachable_within_the_timeout(lab, pollers):
    poller = pollers["replica1"]
    poller.poll()
    lab.kill("replica1")
    try:
        started = time.monotonic()
        with pytest.raises(ServerUnreachable) as info:
            poller.poll()
        assert time.monotonic() - started < TIMEOUT_S + 0.5
        assert info.value.server.endswith(f":{lab.server('replica1').port}")
    finally:
        lab.restart("replica1")
    wait_until(lambda: poller.poll().channels[0].sql_running, timeout_s=20)
    lab.wait_caught_up(timeout_s=30)


def test_frozen_server_times_out_instead_of_hanging(lab, pollers):
    """SIGSTOP: the kernel still accepts TCP connections, the server never answers."""
    pid = lab.server("replica2").pid
    assert pid
    poller = poller_for(lab, "replica2")
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises(ServerUnreachable, match=r"timed out|Lost connection|2013"):
            poller.poll()
        assert time.monotonic() - started < 2 * TIMEOUT_S + 0.5
    finally:
        os.kill(pid, signal.SIGCONT)
        poller.close()
    wait_until(lambda: pollers["replica2"].poll().channels[0].sql_running, timeout_s=20)


def test_wrong_password_is_access_denied(lab):
    poller = poller_for(lab, "replica1", password="definitely-wrong")
    with pytest.raises(AccessDenied) as info:
        poller.poll()
    assert info.value.code == 1045


def test_monitor_user_is_least_privilege_and_reads_everything(lab, pollers):
    with lab.connect("replica1", user="monitor") as conn, conn.cursor() as cur:
        cur.execute("SHOW GRANTS")
        grants = " ".join(row[0] for row in cur.fetchall()).upper()
        for refused in (
            "INSERT INTO app.t (v) VALUES ('x')",
            "SET GLOBAL slave_parallel_threads = 2",
            "STOP SLAVE",
            "SELECT * FROM mysql.user",
        ):
            with pytest.raises(pymysql.err.MySQLError):
                cur.execute(refused)
    assert "ALL PRIVILEGES" not in grants and "SUPER" not in grants
    with lab.connect("source") as conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO lagscope.heartbeat (server_id, ts) VALUES (1, UTC_TIMESTAMP(6)) "
            "ON DUPLICATE KEY UPDATE ts = UTC_TIMESTAMP(6)"
        )
    lab.wait_caught_up(timeout_s=30)
    for name in ("source", "replica1"):
        snap = pollers[name].poll()
        assert snap.problems == {}, snap.problems
        assert snap.params and snap.counters
        assert snap.heartbeat is not None and snap.heartbeat.newest(1) is not None
    replica = pollers["replica1"].poll()
    assert replica.workers, "PROCESS lets the monitor see the applier threads"
    newest = replica.heartbeat.newest(1) if replica.heartbeat else None
    assert newest is not None and abs(replica.heartbeat.server_now - newest.ts) < 60


def test_parallel_threads_change_is_visible_in_the_next_read(lab, pollers, admin_replica1):
    poller = pollers["replica1"]
    assert poller.poll().params["slave_parallel_threads"] == "0"
    with admin_replica1.cursor() as cur:
        cur.execute("STOP SLAVE")  # the pool can only be resized with replica threads stopped
        cur.execute("SET GLOBAL slave_parallel_threads = 4")
        cur.execute("SET GLOBAL slave_parallel_mode = 'aggressive'")
        cur.execute("START SLAVE")
    try:
        snap = poller.poll()
        assert snap.params["slave_parallel_threads"] == "4"
        assert snap.params["slave_parallel_mode"] == "aggressive"
        wait_until(lambda: len(poller.poll().workers) == 4, timeout_s=10, message="4 workers")
    finally:
        with admin_replica1.cursor() as cur:
            cur.execute("STOP SLAVE")
            cur.execute("SET GLOBAL slave_parallel_threads = 0")
            cur.execute("SET GLOBAL slave_parallel_mode = 'optimistic'")
            cur.execute("START SLAVE")
