"""One ``mariadbd`` of the lab: its datadir, its command line, and the processes the lab runs.

A fresh datadir is a copy of a template made once per MariaDB version by ``mariadb-install-db``
and cached under ``$XDG_CACHE_HOME/lagscope`` (``~/.cache/lagscope``): bootstrapping takes about a
second, a copy about a tenth of that, which is most of why a lab starts in a couple of seconds.

Every server runs ``mariadbd --no-defaults`` so nothing in ``/etc/mysql`` leaks in, listens on
127.0.0.1 only, and keeps socket, pid file and error log beside its datadir. The lab talks to its
servers as ``root@localhost`` over the unix socket (empty password; the socket lives in a 0700
directory), which is also how readiness is detected: a server is ready when it answers there.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql
import pymysql.cursors

from lagscope.collectors.connection import ConnectionSpec, open_connection
from lagscope.errors import LagscopeError

# Bump when the template's recipe changes, so stale caches are not reused.
TEMPLATE_RECIPE = 1
# Small on purpose: three servers share a 2-core box with the product under test. The redo log
# size is baked into the template and must match at every start, or InnoDB resizes it (slow).
INNODB_OPTIONS = ("--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M")
# mariadbd's own limit for sun_path is 107 bytes; stay clear of it with room for ".lock" suffixes.
MAX_SOCKET_PATH = 100
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
_TEMPLATE_CLEANUP_SQL = (
    # install-db also creates root@<hostname>, root@127.0.0.1 and root@::1 without a password;
    # only the socket account is wanted (the lab creates its own password users).
    "DELETE FROM mysql.global_priv WHERE User = 'root' AND Host <> 'localhost';\n"
    "DELETE FROM mysql.proxies_priv WHERE Host <> 'localhost';\n"
)
_PORT_CLASH = re.compile(r"Address already in use|errno: 98|another server running on port")


class LabError(LagscopeError):
    """The lab could not do what was asked: a server did not start, replicas did not catch up …"""


class PortInUse(LabError):
    """A server or proxy could not bind its port: someone took it between choosing and binding."""


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


# ---- binaries and the template ------------------------------------------------------------------


def _find_binary(*names: str) -> str:
    # /usr/sbin is not on a non-root PATH on Debian, which is where mariadbd lives.
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
    for name in names:
        found = shutil.which(name, path=search)
        if found:
            return found
    raise LabError(f"none of {', '.join(names)} is installed (MariaDB server binaries needed)")


@functools.cache
def mariadbd_path() -> str:
    return _find_binary("mariadbd", "mysqld")


@functools.cache
def mariadbd_version() -> str:
    """E.g. ``10.11.19-MariaDB-0+deb12u1`` (from ``mariadbd --version``)."""
    out = subprocess.run(
        [mariadbd_path(), "--version"], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    match = re.search(r"Ver\s+(\S+)", out)
    if not match:
        raise LabError(f"cannot read the version from {out!r}")
    return match.group(1)


_LIBFAKETIME_GLOBS = ("/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1")


def libfaketime_path() -> str:
    """Debian's libfaketime (package ``faketime``): shifts a whole process's clock."""
    for pattern in _LIBFAKETIME_GLOBS:
        found = sorted(Path("/").glob(pattern.lstrip("/")))
        if found:
            return str(found[0])
    raise LabError(
        "libfaketime is not installed (Debian package faketime, `make system-deps`):"
        " a lab server cannot run with a shifted clock"
    )


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lagscope"


def ensure_template() -> Path:
    """The cached, bootstrapped datadir for this MariaDB version; built on first use.

    Builders serialise on a lock file and publish with an atomic rename, so parallel test runs
    never copy a half-built template.
    """
    safe_version = re.sub(r"[^A-Za-z0-9.+-]", "_", mariadbd_version())
    final = cache_root() / f"lab-template-{safe_version}-r{TEMPLATE_RECIPE}"
    if (final / "mysql").is_dir():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.parent / ".lab-template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / "mysql").is_dir():
            return final
        for stale in final.parent.glob(".building-*"):  # left by a builder that died
            shutil.rmtree(stale, ignore_errors=True)
        build = Path(tempfile.mkdtemp(prefix=".building-", dir=final.parent))
        try:
            _bootstrap(build)
            shutil.rmtree(final, ignore_errors=True)
            os.rename(build / "data", final)
        finally:
            shutil.rmtree(build, ignore_errors=True)
    return final


def _bootstrap(build: Path) -> None:
    extra = build / "cleanup.sql"
    extra.write_text(_TEMPLATE_CLEANUP_SQL)
    argv = [
        _find_binary("mariadb-install-db", "mysql_install_db"),
        "--no-defaults",
        "--auth-root-authentication-method=normal",
        "--skip-test-db",
        f"--datadir={build / 'data'}",
        f"--extra-file={extra}",
        *INNODB_OPTIONS,
    ]
    if os.geteuid() == 0:
        argv.append("--user=root")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise LabError(
            f"mariadb-install-db failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        )


def create_datadir(server: LabServer, template: Path) -> None:
    if len(str(server.socket)) > MAX_SOCKET_PATH:
        raise LabError(f"socket path too long for a unix socket: {server.socket}")
    server.dir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(template, server.datadir, symlinks=True)


# ---- ports and processes ------------------------------------------------------------------------


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct free ports (all held open until all are chosen, so none repeats)."""
    with contextlib.ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((host, 0))
            ports.append(int(sock.getsockname()[1]))
        return ports


# Processes this interpreter started, so they can be reaped (no zombies, no ResourceWarning).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
_CHILDREN_LOCK = threading.Lock()


def spawn(argv: list[str], log_path: Path) -> int:
    """Start a detached process (own session: a Ctrl-C in the terminal is for us, not for it)."""
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
    with _CHILDREN_LOCK:
        _CHILDREN[proc.pid] = proc
    return proc.pid


def forget_children() -> None:
    """Stop tracking children (the lab outlives this process); they are reparented on our exit."""
    with _CHILDREN_LOCK:
        _DETACHED.extend(_CHILDREN.values())
        _CHILDREN.clear()


# Kept referenced so the Popen objects are not finalised while their processes still run.
_DETACHED: list[subprocess.Popen[bytes]] = []


def is_running(pid: int, marker: str) -> bool:
    """True if ``pid`` is alive and is ours: its command line contains ``marker`` (a path).

    The marker guards against a recycled pid when a state file outlived its processes.
    """
    with _CHILDREN_LOCK:
        proc = _CHILDREN.get(pid)
    if proc is not None:
        if proc.poll() is None:
            return True
        with _CHILDREN_LOCK:
            _CHILDREN.pop(pid, None)
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    if stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X"):
        return False
    return marker.encode() in cmdline


def terminate(targets: Iterable[tuple[int, str]], grace_s: float = 5.0) -> None:
    """SIGTERM every ``(pid, marker)`` still running, SIGKILL what remains after ``grace_s``."""
    live = [(pid, marker) for pid, marker in targets if is_running(pid, marker)]
    _signal_all(live, signal.SIGTERM)
    live = _wait_gone(live, grace_s)
    _signal_all(live, signal.SIGKILL)
    if _wait_gone(live, 5.0):
        raise LabError(f"processes survived SIGKILL: {[pid for pid, _ in live]}")


def kill_now(pid: int, marker: str) -> None:
    """SIGKILL and wait until the process is gone (a crash, as far as the server can tell)."""
    terminate([(pid, marker)], grace_s=0.0)


def _signal_all(targets: list[tuple[int, str]], signum: signal.Signals) -> None:
    for pid, _ in targets:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


def _wait_gone(targets: list[tuple[int, str]], timeout_s: float) -> list[tuple[int, str]]:
    deadline = time.monotonic() + timeout_s
    while True:
        targets = [(pid, marker) for pid, marker in targets if is_running(pid, marker)]
        if not targets or time.monotonic() >= deadline:
            return targets
        time.sleep(0.02)


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
