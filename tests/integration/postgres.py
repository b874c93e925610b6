"""A throwaway PostgreSQL for tests: its own datadir, a free loopback port, gone after ``stop()``.

Never the machine's own PostgreSQL (which may listen on 5432): the cluster is made by ``initdb``
in a fresh temporary directory and listens on 127.0.0.1 only, on a port chosen free, with its unix
socket inside that directory. Durability is switched off (``--no-sync``, ``fsync=off`` …): the
data lives for one test session, and an fsync per commit would only slow the suite down.

PostgreSQL refuses to run as root, and the suite may well run as root (CI, containers). Then the
server runs as an unprivileged system user: ``postgres`` when Debian's package created it,
otherwise ``lagscope-pg``, created once with ``useradd --system``. The temporary directory is
chowned to that user and initdb/pg_ctl run under it through ``subprocess``'s ``user=``/``group=``
(a setuid/setgid in the child, what ``setpriv`` does, without a PAM session as ``runuser`` opens).

``stop()`` is idempotent and also registered with :mod:`atexit`, so a pytest that dies between
start and the fixture's ``finally`` still leaves no postmaster and no directory behind.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

DATABASE = "lagscope"
SUPERUSER = "postgres"
# Used only when we run as root and Debian's ``postgres`` account does not exist.
FALLBACK_OS_USER = "lagscope-pg"
# Throwaway data: nothing needs to survive a crash, so skip every flush to disk.
_FAST_SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")
# Each row's commit time (pg_xact_commit_timestamp): lets a test say two transactions did not
# overlap without guessing how long one takes.
_TEST_SETTINGS = ("track_commit_timestamp=on",)
_PORT_CLASH = re.compile(r"could not bind|Address already in use")
# A bind race (another process takes the port between choosing and binding) is rare; three
# tries make it vanishingly so without hiding a server that fails for another reason.
_START_ATTEMPTS = 3


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries here, or the throwaway server did not come up."""


def find_bin_dir() -> Path:
    """The ``bin`` directory of the highest installed major version (Debian's layout)."""
    found = [p.parent for p in Path("/usr/lib/postgresql").glob("*/bin/initdb")]
    found = [p for p in found if (p / "pg_ctl").exists() and p.parent.name.isdigit()]
    if not found:
        raise PostgresUnavailable(
            "no /usr/lib/postgresql/*/bin/initdb: install Debian's postgresql package "
            "(scripts/ensure-system-deps.sh does)"
        )
    return max(found, key=lambda p: int(p.parent.name))


def server_os_user() -> str | None:
    """The OS user to run the server as, or None to run as ourselves (we are not root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", FALLBACK_OS_USER):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    nologin = "/usr/sbin/nologin"
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", nologin, FALLBACK_OS_USER],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return FALLBACK_OS_USER


def _free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class ThrowawayPostgres:
    """One running server. ``url`` is a SQLAlchemy URL to its ``lagscope`` database."""

    root: Path
    port: int
    bin_dir: Path
    os_user: str | None
    startup_s: float = 0.0
    _stopped: bool = field(default=False, repr=False)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def log_file(self) -> Path:
        return self.root / "server.log"

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{DATABASE}"

    def new_database(self, prefix: str) -> str:
        """An empty database of the caller's own on this server (``prefix`` and a random part);
        its URL."""
        name = f"{prefix}_{secrets.token_hex(4)}"
        with psycopg.connect(self.conninfo(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url.rpartition("/")[0] + f"/{name}"

    def conninfo(self, dbname: str = DATABASE) -> str:
        return f"host=127.0.0.1 port={self.port} user={SUPERUSER} dbname={dbname} connect_timeout=5"

    def run(self, *argv: str, timeout_s: float = 60.0) -> subprocess.CompletedProcess[str]:
        """Run a server binary as the server's OS user; raise with its output if it fails."""
        uid = gid = None
        if self.os_user is not None:
            account = pwd.getpwnam(self.os_user)
            uid, gid = account.pw_uid, account.pw_gid
        # PG* variables (PGPORT, PGDATA, PGHOST …) would point the tools at another server.
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        done = subprocess.run(
            [str(self.bin_dir / argv[0]), *argv[1:]],
            # Our own cwd may not be readable by the server's user; its own directory is.
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            user=uid,
            group=gid,
            # Drop root's supplementary groups too, not only uid and gid.
            extra_groups=[] if uid is not None else None,
        )
        if done.returncode != 0:
            raise PostgresUnavailable(
                f"{argv[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}\n"
                f"{self._log_tail()}"
            )
        return done

    def pause(self) -> None:
        """Stop the server and keep its data (the store gone for a while); :meth:`resume`."""
        self.run("pg_ctl", "-D", str(self.data_dir), "stop", "-m", "fast", "-w", "-t", "30")

    def resume(self, timeout_s: float = 60.0) -> None:
        self._pg_ctl_start()
        self._wait_accepting(timeout_s)

    def stop(self) -> None:
        """Fast shutdown (rolls back open transactions, no checkpoint wait), then remove all."""
        if self._stopped:
            return
        self._stopped = True
        atexit.unregister(self.stop)
        try:
            if (self.data_dir / "postmaster.pid").exists():
                self.run("pg_ctl", "-D", str(self.data_dir), "stop", "-m", "fast", "-w", "-t", "30")
        except PostgresUnavailable:
            # Wedged, or already dead with a stale pid file: either way no postmaster may outlive
            # the test run. Backends exit on their own once they see the postmaster gone.
            self._kill_postmaster()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def _kill_postmaster(self) -> None:
        try:
            pid = int((self.data_dir / "postmaster.pid").read_text().split()[0])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            return
        # A stale pid may have been reused by an unrelated process: only kill our postmaster.
        if str(self.data_dir).encode() in cmdline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def _log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no server log)"
        return "server log:\n" + "\n".join(text.splitlines()[-lines:])

    def _pg_ctl_start(self) -> None:
        options = [f"-k {self.root}", f"-p {self.port}", "-c listen_addresses=127.0.0.1"]
        options += [f"-c {setting}" for setting in (*_FAST_SETTINGS, *_TEST_SETTINGS)]
        # A fresh log per attempt, so a port clash is judged on this attempt's lines only.
        self.log_file.unlink(missing_ok=True)
        self.run(
            "pg_ctl", "-D", str(self.data_dir), "-l", str(self.log_file),
            "-o", " ".join(options), "-w", "-t", "60", "start",
        )  # fmt: skip

    def _wait_accepting(self, timeout_s: float) -> None:
        """pg_ctl -w already waited for the socket; make sure TCP on our port answers too."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with psycopg.connect(self.conninfo("postgres")):
                    return
            except psycopg.OperationalError as exc:
                if time.monotonic() >= deadline:
                    raise PostgresUnavailable(
                        f"not accepting connections after {timeout_s:g} s: {exc}\n"
                        + self._log_tail()
                    ) from exc
            time.sleep(0.05)


def start_postgres(timeout_s: float = 60.0) -> ThrowawayPostgres:
    """initdb a fresh cluster, start it on a free loopback port, create ``lagscope``."""
    began = time.monotonic()
    bin_dir = find_bin_dir()
    os_user = server_os_user()
    # Short prefix under /tmp: the unix socket path must stay under ~107 bytes.
    root = Path(tempfile.mkdtemp(prefix="lagscope-pg-"))
    if os_user is not None:
        account = pwd.getpwnam(os_user)
        os.chown(root, account.pw_uid, account.pw_gid)
    server = ThrowawayPostgres(root=root, port=_free_port(), bin_dir=bin_dir, os_user=os_user)
    atexit.register(server.stop)
    try:
        server.run(
            "initdb", "-D", str(server.data_dir), "-U", SUPERUSER, "--auth=trust",
            "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions",
            timeout_s=timeout_s,
        )  # fmt: skip
        for attempt in range(1, _START_ATTEMPTS + 1):
            try:
                server._pg_ctl_start()
                break
            except PostgresUnavailable as exc:
                if attempt == _START_ATTEMPTS or not _PORT_CLASH.search(str(exc)):
                    raise
                server.port = _free_port()
        server._wait_accepting(timeout_s)
        with psycopg.connect(server.conninfo("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
    except BaseException:
        server.stop()
        raise
    server.startup_s = time.monotonic() - began
    return server
