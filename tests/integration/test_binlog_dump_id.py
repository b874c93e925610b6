"""The binlog window's dump never takes a replica's server id (the real lab, MariaDB 10.11).

A source ends an older dump connection when a new one arrives with the same server id: with a
replica's id, Lagscope's read would end that replica's replication (error 4052 on it), and its
reconnect would end Lagscope's read in turn. So the id is compared with the replicas the source
lists (the admin login may list them; MariaDB wants REPLICATION MASTER ADMIN) and the ids
Lagscope knows before a dump is sent."""

from __future__ import annotations

import time
from typing import Any

import pytest

from lagscope.collectors.binlog_dump import read_dump_window
from lagscope.collectors.binlog_sample import read_mark
from lagscope.collectors.connection import ConnectionSpec
from lagscope.collectors.executor import PyMySQLExecutor

from .waiting import wait_until

pytestmark = pytest.mark.integration


def spec(lab: Any, user: str) -> ConnectionSpec:
    server = lab.server("source")
    login, password = lab.credentials.of(user)
    return ConnectionSpec(server.host, server.port, login, password, connect_timeout_s=3.0,
                          read_timeout_s=6.0)  # fmt: skip


def io_state(lab: Any, name: str) -> dict[str, Any]:
    conn = lab.connect(name)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW SLAVE STATUS")
            names = [d[0] for d in cur.description or ()]
            row = cur.fetchone()
            return dict(zip(names, row or (), strict=False))
    finally:
        conn.close()


def test_a_replicas_server_id_is_refused_and_the_replica_keeps_replicating(lab: Any) -> None:
    replica = lab.server("replica1")
    monitor = PyMySQLExecutor(spec(lab, "monitor"))
    try:
        mark = read_mark(monitor)
    finally:
        monitor.close()
    assert mark is not None
    before = io_state(lab, "replica1")
    assert before["Slave_IO_Running"] == "Yes"
    window = read_dump_window(spec(lab, "admin"), mark, mariadb=True, server_id=replica.server_id)
    assert window.problem is not None
    assert window.problem.startswith(
        f"not read: server id {replica.server_id} is a replica's the source lists"
    )
    # The replica's own dump was never ended: same connection, nothing in its error fields,
    # and a row written now reaches it.
    marker = f"dump-id-{time.time_ns()}"
    conn = lab.connect("source")
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS dumpid")
            cur.execute("CREATE TABLE IF NOT EXISTS dumpid.t (v VARCHAR(64) PRIMARY KEY)")
            cur.execute("INSERT INTO dumpid.t VALUES (%s)", (marker,))
    finally:
        conn.close()

    def arrived() -> bool:
        reader = lab.connect("replica1")
        try:
            with reader.cursor() as cur:
                cur.execute("SELECT COUNT(*) FROM dumpid.t WHERE v = %s", (marker,))
                row = cur.fetchone()
                return bool(row and row[0])
        finally:
            reader.close()

    wait_until(arrived, timeout_s=30, message="the row on replica1", ignore=(Exception,))
    after = io_state(lab, "replica1")
    assert after["Slave_IO_Running"] == "Yes"
    assert after["Last_IO_Errno"] == 0, after["Last_IO_Error"]


def test_a_monitored_servers_id_is_refused_without_the_list_privilege(lab: Any) -> None:
    """The replication login may dump but not list replicas: the ids Lagscope read from the
    cluster's servers are what it is compared with."""
    replica = lab.server("replica2")
    monitor = PyMySQLExecutor(spec(lab, "monitor"))
    try:
        mark = read_mark(monitor)
    finally:
        monitor.close()
    assert mark is not None
    window = read_dump_window(
        spec(lab, "repl"), mark, True, server_id=replica.server_id, known_ids=[replica.server_id]
    )
    assert window.problem is not None and "a server Lagscope monitors" in window.problem
    free = read_dump_window(spec(lab, "repl"), mark, True, server_id=0x4C53_0FFF)
    assert free.problem is None
