"""One ``mariadbd`` of the lab: its command line, its start, and the lab's root channel to it.

Every server runs ``mariadbd --no-defaults`` so nothing in ``/etc/mysql`` leaks in, listens on
127.0.0.1 only, and keeps socket, pid file and error log beside its datadir (a copy of the
cached template: lab/template.py). The lab talks to its servers as ``root@localhost`` over the
unix socket (empty password; the socket lives in a 0700 directory), which is also how readiness
is detected: a server is ready when it answers there.
"""

from __future__ import annotations

import os
import re
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql
import pymysql.cursors

from lagscope.collectors.connection import ConnectionSpec, open_connection
from lagscope.lab.binaries import libfaketime_path, mariadbd_path
from lagscope.lab.errors import LabError, PortInUse
from lagscope.lab.processes import is_running, spawn
from lagscope.lab.template import INNODB_OPTIONS

# The lab's failures and binaries, where the lab's callers have always found them.
__all__ = [
    "LabError",
    "LabServer",
    "PortInUse",
    "describe",
    "error_log_tail",
    "gtid_positions",
    "libfaketime_path",
    "mariadbd_path",
    "root_connection",
    "start_server",
    "wait_ready",
]

# performance_schema with only the file-I/O instruments, sized to ~14 MB (not MariaDB's ~98 MB
# autosizing), on the replicas: the durability prediction reads their fsync costs from
# file_summary_by_event_name (the fsync cost), as on a MySQL server where it is on by default.
PERF_SCHEMA_OPTIONS = (
    "--performance-schema=ON",
    "--performance-schema-instrument=%=OFF",
    "--performance-schema-instrument=wait/io/file/%=ON",
    "--performance-schema-consumer-statements-digest=OFF",
    "--performance-schema-digests-size=0",
    "--performance-schema-max-digest-length=0",
    "--performance-schema-max-sql-text-length=0",
    "--performance-schema-events-statements-history-size=0",
    "--performance-schema-events-statements-history-long-size=0",
    "--performance-schema-events-waits-history-size=0",
    "--performance-schema-events-waits-history-long-size=0",
    "--performance-schema-events-stages-history-size=0",
    "--performance-schema-events-stages-history-long-size=0",
    "--performance-schema-events-transactions-history-size=0",
    "--performance-schema-events-transactions-history-long-size=0",
    "--performance-schema-max-table-instances=0",
    "--performance-schema-max-table-handles=0",
    "--performance-schema-max-index-stat=0",
    "--performance-schema-max-table-lock-stat=0",
    "--performance-schema-session-connect-attrs-size=0",
    "--performance-schema-max-memory-classes=0",
    "--performance-schema-max-statement-classes=0",
)
_PORT_CLASH = re.compile(r"Address already in use|errno: 98|another server running on port")


@dataclass
class LabServer:
    """One server of the lab; ``pid`` is ``None`` while it is not running."""

    name: str
    host: str
    port: int
    server_id: int
    datadir: Path
    socket: Path
    pid: int | None = None
    # Role-specific mariadbd flags (read_only, parallel applier …), fixed when the lab is made.
    options: tuple[str, ...] = field(default=())
    # Seconds this server's clock runs ahead (negative: behind), through libfaketime; 0: true.
    clock_offset_s: float = 0.0

    @property
    def dir(self) -> Path:
        return self.datadir.parent

    @property
    def pid_file(self) -> Path:
        return self.dir / "mysqld.pid"

    @property
    def error_log(self) -> Path:
        return self.dir / "error.log"

    @property
    def tmpdir(self) -> Path:
        """The server's own temporary directory: the internal temporary tables of its queries
        (information_schema's among them) live there, not in the machine's shared /tmp, where
        another program's clean-up could remove them under the server."""
        return self.dir / "tmp"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def argv(self) -> list[str]:
        """The full mariadbd command line for this server."""
        argv = [
            mariadbd_path(),
            "--no-defaults",
            f"--datadir={self.datadir}",
            f"--socket={self.socket}",
            f"--pid-file={self.pid_file}",
            f"--log-error={self.error_log}",
            f"--tmpdir={self.tmpdir}",
            f"--port={self.port}",
            f"--bind-address={self.host}",
            f"--server-id={self.server_id}",
            "--log-bin=mariadb-bin",
            "--relay-log=relay-bin",
            "--binlog-format=ROW",
            "--gtid-strict-mode=1",
            "--gtid-domain-id=0",
            "--log-slave-updates=1",
            "--skip-name-resolve",
            # Only the replicas' fsync costs are read: the source, the busiest, goes without.
            *(PERF_SCHEMA_OPTIONS if self.name != "source" else ("--performance-schema=OFF",)),
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
            *INNODB_OPTIONS,
            *self.options,
        ]
        if os.geteuid() == 0:
            argv.insert(2, "--user=root")
        if self.clock_offset_s:
            # env execs mariadbd in place: same pid, and the datadir marker stays in cmdline.
            # The monotonic clock stays true so timeouts and waits are not disturbed.
            argv[:0] = [
                "/usr/bin/env",
                f"LD_PRELOAD={libfaketime_path()}",
                f"FAKETIME={self.clock_offset_s:+.6f}",
                "FAKETIME_DONT_FAKE_MONOTONIC=1",
            ]
        return argv

    def to_state(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "host": self.host,
            "port": self.port,
            "server_id": self.server_id,
            "datadir": str(self.datadir),
            "socket": str(self.socket),
            "pid": self.pid,
            "options": list(self.options),
            "clock_offset_s": self.clock_offset_s,
        }

    @classmethod
    def from_state(cls, data: Mapping[str, Any]) -> LabServer:
        return cls(
            name=str(data["name"]),
            host=str(data["host"]),
            port=int(data["port"]),
            server_id=int(data["server_id"]),
            datadir=Path(data["datadir"]),
            socket=Path(data["socket"]),
            pid=None if data.get("pid") is None else int(data["pid"]),
            options=tuple(str(o) for o in data.get("options", ())),
            clock_offset_s=float(data.get("clock_offset_s", 0.0)),
        )


# ---- starting and talking to a server -----------------------------------------------------------


def start_server(server: LabServer) -> None:
    # A SIGKILLed server leaves its socket and pid file; mariadbd replaces both, but a stale
    # socket would make the readiness probe think an old server answers, so remove it first.
    server.socket.unlink(missing_ok=True)
    server.tmpdir.mkdir(exist_ok=True)  # a lab made before servers had their own
    server.pid = spawn(server.argv(), server.error_log)


def wait_ready(server: LabServer, timeout_s: float) -> None:
    """Return once ``server`` answers on its socket; :class:`PortInUse` or :class:`LabError`."""
    if server.pid is None:
        raise LabError(f"{server.name} is not started")
    deadline = time.monotonic() + timeout_s
    while True:
        if not is_running(server.pid, str(server.datadir)):
            tail = error_log_tail(server)
            error = PortInUse if _PORT_CLASH.search(tail) else LabError
            raise error(f"{server.name} ({server.address}) exited during startup:\n{tail}")
        try:
            root_connection(server, timeout_s=1.0).close()
            return
        except pymysql.err.OperationalError:
            if time.monotonic() >= deadline:
                tail = error_log_tail(server)
                raise LabError(
                    f"{server.name} ({server.address}) not ready after {timeout_s:.0f} s:\n{tail}"
                ) from None
            time.sleep(0.02)


def root_connection(server: LabServer, timeout_s: float = 5.0) -> pymysql.Connection[Any]:
    """root over the unix socket: the lab's own channel, never handed to code under test."""
    spec = ConnectionSpec(
        host="localhost",
        user="root",
        unix_socket=str(server.socket),
        connect_timeout_s=timeout_s,
        read_timeout_s=max(1, int(timeout_s)),
    )
    conn = open_connection(spec, autocommit=True, defer_connect=True)
    # Connect the socket ourselves: PyMySQL 1.2 leaks the unix socket when connect() fails
    # (a ResourceWarning per probe while a server starts up).
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        sock.connect(str(server.socket))
    except OSError as exc:
        sock.close()
        raise pymysql.err.OperationalError(2002, f"{server.socket}: {exc}") from exc
    conn.connect(sock)
    return conn


def error_log_tail(server: LabServer, lines: int = 25) -> str:
    try:
        text = server.error_log.read_text(errors="replace")
    except OSError:
        return "(no error log)"
    return "\n".join(text.splitlines()[-lines:])


def gtid_positions(server: LabServer) -> dict[str, str]:
    """``gtid_binlog_pos`` and ``gtid_slave_pos`` of ``server``."""
    with root_connection(server) as conn, conn.cursor() as cur:
        cur.execute("SELECT @@global.gtid_binlog_pos, @@global.gtid_slave_pos")
        row = cur.fetchone()
    assert row is not None
    return {"gtid_binlog_pos": str(row[0]), "gtid_slave_pos": str(row[1])}


_REPLICATION_COLUMNS = {
    "Connection_name": "channel",
    "Master_Port": "source_port",
    "Slave_IO_Running": "io_running",
    "Slave_SQL_Running": "sql_running",
    "Seconds_Behind_Master": "seconds_behind_master",
    "Gtid_IO_Pos": "gtid_io_pos",
    "Last_IO_Error": "last_io_error",
    "Last_SQL_Error": "last_sql_error",
}


def describe(server: LabServer) -> dict[str, Any]:
    """GTID positions, read_only and each replication channel's threads, for ``lab status``."""
    report: dict[str, Any] = dict(gtid_positions(server))
    with root_connection(server) as conn, conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute("SELECT @@global.read_only AS read_only")
        flags = cur.fetchone()
        cur.execute("SHOW ALL SLAVES STATUS")
        rows = cur.fetchall()
    report["read_only"] = bool(flags and flags["read_only"])
    report["replication"] = [
        {ours: row.get(theirs) for theirs, ours in _REPLICATION_COLUMNS.items()} for row in rows
    ]
    return report
