"""The lab: a MariaDB GTID source with N replicas on loopback, some behind a latency proxy.

``Lab.start(LabConfig(...))`` copies a cached template datadir per server, starts all servers at
once, creates the users and the ``lagscope.heartbeat`` table on the source, points every replica
at the source (or at its proxy) with ``MASTER_USE_GTID=slave_pos`` and waits until all have
caught up. Users are created on the source only: replicas start from an empty ``gtid_slave_pos``
and so replay them. Everything lives in one directory with a JSON state file, so another process
(``lagscope lab down``) can find and stop the lab with ``Lab.load``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pymysql

from lagscope.collectors.connection import ConnectionSpec, TlsMode, open_connection
from lagscope.errors import InvalidInput, LagscopeError
from lagscope.lab import servers
from lagscope.lab.proxy_control import ProxyClient, ProxyControl
from lagscope.lab.servers import LabError, LabServer, PortInUse

STATE_FILE = "lab.json"
CRASH_DIR = Path("/tmp/lagscope-lab-crashes")
HOST = "127.0.0.1"
PARALLEL_MODES = ("none", "minimal", "conservative", "optimistic", "aggressive")
_PORT_ATTEMPTS = 3
_log = logging.getLogger(__name__)

# Identifiers are constants; passwords go in as parameters (the monitor user's grants:
# docs/replication.md, "Privileges").
_SOURCE_SETUP = (
    ("CREATE USER 'admin'@'%%' IDENTIFIED BY %s", "admin"),
    ("GRANT ALL PRIVILEGES ON *.* TO 'admin'@'%%' WITH GRANT OPTION", None),
    ("CREATE USER 'repl'@'%%' IDENTIFIED BY %s", "repl"),
    ("GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%%'", None),
    ("CREATE DATABASE lagscope", None),
    (
        "CREATE TABLE lagscope.heartbeat (server_id INT UNSIGNED NOT NULL PRIMARY KEY,"
        " ts DATETIME(6) NOT NULL) ENGINE=InnoDB",
        None,
    ),
    ("CREATE USER 'monitor'@'%%' IDENTIFIED BY %s", "monitor"),
    ("GRANT BINLOG MONITOR, REPLICA MONITOR, PROCESS ON *.* TO 'monitor'@'%%'", None),
    ("GRANT SELECT ON performance_schema.* TO 'monitor'@'%%'", None),
    ("GRANT SELECT ON lagscope.* TO 'monitor'@'%%'", None),
    ("CREATE USER 'heartbeat'@'%%' IDENTIFIED BY %s", "heartbeat"),
    ("GRANT INSERT, UPDATE, SELECT ON lagscope.heartbeat TO 'heartbeat'@'%%'", None),
)
# Connect retry 1 s and heartbeat 1 s so a restarted source or a healed link is picked up fast;
# slave_net_timeout (10 s, on the command line) is what notices a paused link.
_CHANGE_MASTER = (
    "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%s, MASTER_USER='repl',"
    " MASTER_PASSWORD=%s, MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1,"
    " MASTER_HEARTBEAT_PERIOD=1"
)


@dataclass(frozen=True)
class LabConfig:
    """What to start. ``proxied`` names replicas whose replication link goes through a proxy."""

    replicas: int = 2
    proxied: tuple[str, ...] = ()
    proxy_delay_s: float = 0.0
    # bytes/s per direction on each proxied link; None: unlimited (lab/proxy.py's bandwidth).
    proxy_bandwidth_bps: float | None = None
    base_dir: Path | str | None = None
    # MariaDB's defaults (serial applier); the usual lab recipe is parallel_threads=4, optimistic.
    parallel_threads: int = 0
    parallel_mode: str = "optimistic"
    slave_net_timeout_s: int = 10
    start_timeout_s: float = 30.0
    # Extra mariadbd flags for the source, e.g. ServerCertificate.mariadbd_options() (lab/certs.py)
    # for a source that offers TLS with a test CA's certificate.
    source_options: tuple[str, ...] = ()
    # (server name, seconds) pairs: start that server with its clock shifted (libfaketime).
    clock_offsets: tuple[tuple[str, float], ...] = ()

    def validate(self) -> None:
        names = {f"replica{i}" for i in range(1, self.replicas + 1)}
        if not 0 <= self.replicas <= 9:
            raise InvalidInput(f"replicas must be 0…9, not {self.replicas}")
        if unknown := sorted(set(self.proxied) - names):
            raise InvalidInput(f"proxied names no replica of this lab: {unknown}")
        if not 0 <= self.proxy_delay_s <= 3600:
            raise InvalidInput(f"proxy_delay_s must be 0…3600, not {self.proxy_delay_s}")
        if not 0 <= self.parallel_threads <= 256:
            raise InvalidInput(f"parallel_threads must be 0…256, not {self.parallel_threads}")
        if self.parallel_mode not in PARALLEL_MODES:
            raise InvalidInput(f"parallel_mode must be one of {PARALLEL_MODES}")
        if not 1 <= self.slave_net_timeout_s <= 3600:
            raise InvalidInput("slave_net_timeout_s must be 1…3600")
        for name, offset_s in self.clock_offsets:
            if name not in names | {"source"}:
                raise InvalidInput(f"clock_offsets names no server of this lab: {name!r}")
            if not -86400 <= offset_s <= 86400:
                raise InvalidInput(f"a clock offset must be within a day, not {offset_s}")


@dataclass(frozen=True)
class Credentials:
    """(user, password) per lab account; passwords are random per lab."""

    admin: tuple[str, str]
    monitor: tuple[str, str]
    repl: tuple[str, str]
    heartbeat: tuple[str, str]

    @classmethod
    def generate(cls) -> Credentials:
        return cls(**{f.name: (f.name, secrets.token_urlsafe(18)) for f in fields(cls)})

    def of(self, user: str) -> tuple[str, str]:
        if user not in {f.name for f in fields(self)}:
            raise InvalidInput(f"no lab user {user!r}")
        value: tuple[str, str] = getattr(self, user)
        return value

    def to_state(self) -> dict[str, list[str]]:
        return {f.name: list(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_state(cls, data: dict[str, list[str]]) -> Credentials:
        return cls(**{f.name: (data[f.name][0], data[f.name][1]) for f in fields(cls)})


@dataclass
class _ProxyProcess:
    replica: str
    listen_port: int
    control: Path
    pid: int | None = None

    @property
    def client(self) -> ProxyClient:
        return ProxyClient(self.control, self.listen_port)


class Lab:
    """A running lab. Make one with :meth:`start` (or reattach with :meth:`load`)."""

    def __init__(
        self,
        config: LabConfig,
        lab_dir: Path,
        owns_dir: bool,
        source: LabServer,
        replicas: list[LabServer],
        credentials: Credentials,
        proxies: dict[str, _ProxyProcess],
    ) -> None:
        self.config = config
        self.dir = lab_dir
        self.state_path = lab_dir / STATE_FILE
        self.source = source
        self.replicas = replicas
        self.credentials = credentials
        self.start_seconds: float | None = None
        self._owns_dir = owns_dir
        # The process whose exit ends the lab; None once detached (`lagscope lab up`).
        self.owner_pid: int | None = os.getpid()
        self._proxies = proxies
        self._stopped = False

    # ---- making and finding labs ----------------------------------------------------------------

    @classmethod
    def start(cls, config: LabConfig | None = None) -> Lab:
        """Start a lab and wait until every replica has caught up; cleans up if anything fails."""
        began = time.monotonic()
        config = config or LabConfig()
        config.validate()
        sweep_abandoned()
        template = servers.ensure_template()
        lab = cls._create(config)
        atexit.register(lab.stop)
        try:
            for server in lab.servers:
                servers.create_datadir(server, template)
                servers.start_server(server)
            lab._save_state()
            lab._ready(lab.source)
            for proxy in lab._proxies.values():
                lab._spawn_proxy(proxy)
            lab._setup_source()
            for replica in lab.replicas:
                lab._ready(replica)
            for proxy in lab._proxies.values():
                lab._proxy_ready(proxy)
            for replica in lab.replicas:
                lab._setup_replica(replica)
            lab._save_state()
            lab.wait_caught_up(timeout_s=max(1.0, config.start_timeout_s - lab._elapsed(began)))
        except BaseException:
            lab.stop()
            raise
        lab.start_seconds = lab._elapsed(began)
        lab._save_state()
        return lab

    @classmethod
    def _create(cls, config: LabConfig) -> Lab:
        if config.base_dir is None:
            # Under /tmp and short: unix socket paths must stay under ~100 bytes.
            lab_dir, owns = Path(tempfile.mkdtemp(prefix="lagscope-lab-", dir="/tmp")), True
        else:
            lab_dir = Path(config.base_dir).absolute()
            owns = not lab_dir.exists()
            lab_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            if (lab_dir / STATE_FILE).exists():
                raise LabError(f"{lab_dir} already holds a lab ({STATE_FILE}); stop it first")
        names = ["source"] + [f"replica{i}" for i in range(1, config.replicas + 1)]
        ports = servers.free_ports(len(names) + len(config.proxied))
        made = [
            LabServer(
                name=name,
                host=HOST,
                port=ports[i],
                server_id=i + 1,
                datadir=lab_dir / name / "data",
                socket=lab_dir / name / "mysqld.sock",
                options=config.source_options if i == 0 else _replica_options(config, ports[i]),
                clock_offset_s=dict(config.clock_offsets).get(name, 0.0),
            )
            for i, name in enumerate(names)
        ]
        proxies = {
            name: _ProxyProcess(name, ports[len(names) + i], lab_dir / f"proxy-{name}.sock")
            for i, name in enumerate(config.proxied)
        }
        return cls(config, lab_dir, owns, made[0], made[1:], Credentials.generate(), proxies)

    @classmethod
    def load(cls, state_path: Path | str) -> Lab:
        """Reattach to a lab started by another process (no atexit stop: it is not ours)."""
        path = Path(state_path).resolve()
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise LabError(f"no readable lab state at {state_path}: {exc}") from exc
        made = [LabServer.from_state(s) for s in state["servers"]]
        settings: dict[str, Any] = dict(state["config"])
        settings["proxied"] = tuple(settings["proxied"])
        settings["source_options"] = tuple(settings.get("source_options", ()))
        settings["clock_offsets"] = tuple(
            (str(name), float(offset)) for name, offset in settings.get("clock_offsets", ())
        )
        config = LabConfig(**settings)
        proxies = {
            p["replica"]: _ProxyProcess(
                p["replica"], p["listen_port"], Path(p["control"]), p["pid"]
            )
            for p in state["proxies"]
        }
        credentials = Credentials.from_state(state["credentials"])
        lab = cls(config, path.parent, state["owns_dir"], made[0], made[1:], credentials, proxies)
        lab.owner_pid = state.get("owner_pid")
        lab.start_seconds = state.get("start_seconds")
        return lab

    def detach(self) -> None:
        """Leave the lab running after this process exits (``lagscope lab up``)."""
        atexit.unregister(self.stop)
        servers.forget_children()
        self.owner_pid = None
        self._save_state()

    # ---- looking at it --------------------------------------------------------------------------

    @property
    def servers(self) -> list[LabServer]:
        return [self.source, *self.replicas]

    def server(self, name: str) -> LabServer:
        for server in self.servers:
            if server.name == name:
                return server
        raise InvalidInput(f"no server {name!r} in this lab")

    def proxy_for(self, name: str) -> ProxyControl:
        if name not in self._proxies:
            raise InvalidInput(f"{name!r} is not behind a proxy in this lab")
        return self._proxies[name].client

    def connection_params(self, name: str, user: str = "admin") -> dict[str, Any]:
        """host/port/user/password for ``user`` on server ``name`` (TCP, never through a proxy)."""
        server = self.server(name)
        login, password = self.credentials.of(user)
        return {"host": server.host, "port": server.port, "user": login, "password": password}

    def connect(
        self,
        name: str,
        user: str = "admin",
        database: str | None = None,
        tls: TlsMode = "preferred",
        tls_ca_path: str | None = None,
        **options: Any,
    ) -> pymysql.Connection[Any]:
        """A new autocommit connection; ``user`` is a lab account name (admin, monitor …).

        Through :func:`open_connection` like every Lagscope connection; ``options`` go to PyMySQL
        (``connect_timeout``/``read_timeout`` in seconds: 5 s and none by default, the load
        generators block on a busy server on purpose)."""
        params = self.connection_params(name, user)
        spec = ConnectionSpec(
            host=params["host"],
            port=params["port"],
            user=params["user"],
            password=params["password"],
            connect_timeout_s=options.pop("connect_timeout", 5),
            read_timeout_s=options.pop("read_timeout", None),
            tls=tls,
            tls_ca_path=tls_ca_path,
        )
        return open_connection(spec, autocommit=True, database=database, **options)

    def is_running(self, name: str) -> bool:
        server = self.server(name)
        return server.pid is not None and servers.is_running(server.pid, str(server.datadir))

    def wait_caught_up(self, timeout_s: float = 30.0, max_wait_s: float | None = None) -> None:
        """Until every running replica has applied all the source had written when the wait
        began (MASTER_GTID_WAIT's meaning). Not "positions equal at one instant": under a
        steady write load on a saturated machine the replicas were always a few transactions
        behind the moving source position, and the wait timed out with nothing wrong.

        ``timeout_s`` bounds the time *without progress*: while a replica is still applying
        (its position moves) the wait goes on, up to ``max_wait_s`` (default ten times
        ``timeout_s``, at least 10 minutes). A backlog a test built drains at whatever speed a
        shared 2-core machine has; a stopped or broken replica still fails after ``timeout_s``."""
        started = time.monotonic()
        cap = max_wait_s if max_wait_s is not None else max(600.0, 10 * timeout_s)
        deadline = started + timeout_s
        target: dict[str, str] | None = None
        progress = _Progress()
        while behind := self._replicas_behind(target, progress):
            if target is None:
                target = self._source_position()
            now = time.monotonic()
            if progress.moved:
                progress.moved = False
                deadline = min(now + timeout_s, started + cap)
            if now >= deadline:
                details = [self._explain(name) for name in behind]
                if not self.is_running("source"):
                    details.insert(0, self._explain("source"))
                waited = f"{now - started:.0f} s, the last {timeout_s:g} s without progress"
                if now >= started + cap:
                    waited = f"{now - started:.0f} s (the cap), still applying"
                raise LabError(f"not caught up after {waited}: " + "; ".join(details))
            time.sleep(0.02)

    def status(self) -> dict[str, Any]:
        """Every server's port, liveness, GTID positions and replication threads; the proxies."""
        report: dict[str, Any] = {"dir": str(self.dir), "state_path": str(self.state_path)}
        report["servers"] = {}
        for server in self.servers:
            entry: dict[str, Any] = {
                "port": server.port,
                "server_id": server.server_id,
                "pid": server.pid,
                "up": self.is_running(server.name),
            }
            if entry["up"]:
                try:
                    entry.update(servers.describe(server))
                except pymysql.err.MySQLError as exc:
                    entry.update(up=False, error=str(exc))
            report["servers"][server.name] = entry
        report["proxies"] = {}
        for name, proxy in self._proxies.items():
            try:
                report["proxies"][name] = {"up": True, **proxy.client.status()}
            except LagscopeError as exc:
                report["proxies"][name] = {"up": False, "error": str(exc)}
        return report

    # ---- breaking it ----------------------------------------------------------------------------

    def kill(self, name: str) -> None:
        """SIGKILL the server (a crash); its port and datadir stay for :meth:`restart`."""
        server = self.server(name)
        if server.pid is not None:
            servers.kill_now(server.pid, str(server.datadir))
        server.pid = None
        self._save_state()

    def restart(self, name: str, timeout_s: float = 30.0) -> None:
        """Start a killed (or running: it is killed first) server again and wait until it answers.

        Replicas resume replication by themselves: the channel is in the datadir and slave
        threads start with the server.
        """
        server = self.server(name)
        if server.pid is not None:
            servers.kill_now(server.pid, str(server.datadir))
        servers.start_server(server)
        self._save_state()
        servers.wait_ready(server, timeout_s)

    def set_clock_offset(self, name: str, offset_s: float, timeout_s: float = 60.0) -> None:
        """Restart ``name`` (a clean shutdown) with its clock ``offset_s`` ahead (libfaketime;
        0 restores the true clock) and wait until it answers. Replication resumes by itself."""
        server = self.server(name)
        if offset_s:
            servers.libfaketime_path()  # refuse before stopping anything
        if server.pid is not None:
            servers.terminate([(server.pid, str(server.datadir))], grace_s=timeout_s)
        server.clock_offset_s = float(offset_s)
        servers.start_server(server)
        self._save_state()
        servers.wait_ready(server, timeout_s)

    # ---- stopping -------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop every process of the lab and remove its files. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        atexit.unregister(self.stop)
        self._keep_crash_logs()
        targets = [(s.pid, str(s.datadir)) for s in self.servers if s.pid is not None]
        targets += [(p.pid, str(p.control)) for p in self._proxies.values() if p.pid is not None]
        servers.terminate(targets)
        if self._owns_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            return
        for server in self.servers:
            shutil.rmtree(server.dir, ignore_errors=True)
        for proxy in self._proxies.values():
            proxy.control.unlink(missing_ok=True)
            (self.dir / f"proxy-{proxy.replica}.log").unlink(missing_ok=True)
        self.state_path.unlink(missing_ok=True)

    def _keep_crash_logs(self) -> None:
        """Copy the error log of any server that died without :meth:`kill` or :meth:`stop`.

        A crashing mariadbd writes its backtrace there, and the lab directory is about to go.
        """
        for server in self.servers:
            if server.pid is None or servers.is_running(server.pid, str(server.datadir)):
                continue
            kept = CRASH_DIR / f"{self.dir.name}-{server.name}.log"
            with contextlib.suppress(OSError):
                CRASH_DIR.mkdir(mode=0o700, exist_ok=True)
                shutil.copyfile(server.error_log, kept)
                _log.warning(
                    "lab server %s had died (crashed or killed from outside); error log kept at %s",
                    server.name,
                    kept,
                )

    # ---- internals ------------------------------------------------------------------------------

    @staticmethod
    def _elapsed(began: float) -> float:
        return time.monotonic() - began

    def _source_position(self) -> dict[str, str] | None:
        try:
            return _gtid_set(servers.gtid_positions(self.source)["gtid_binlog_pos"])
        except pymysql.err.MySQLError:
            return None

    def _replicas_behind(
        self, target: dict[str, str] | None = None, progress: _Progress | None = None
    ) -> list[str]:
        """Names of running replicas that have not applied ``target`` (by default the source's
        current position); all of them if the source is down. ``progress`` notes whether a
        replica's position moved since the previous call."""
        running = [r for r in self.replicas if self.is_running(r.name)]
        if target is None and (target := self._source_position()) is None:
            return [r.name for r in running]
        behind = []
        for replica in running:
            position = self._replica_position(replica)
            if progress is not None:
                progress.note(replica.name, position)
            if position is None or not _gtid_reached(_gtid_set(position), target):
                behind.append(replica.name)
        return behind

    def _replica_position(self, replica: LabServer) -> str | None:
        try:
            return servers.gtid_positions(replica)["gtid_slave_pos"]
        except pymysql.err.MySQLError:
            return None

    def _explain(self, name: str) -> str:
        server = self.server(name)
        if not self.is_running(name):
            return f"{name} is not running; its error log ends:\n{servers.error_log_tail(server)}"
        try:
            return f"{name}: {servers.describe(self.server(name))}"
        except pymysql.err.MySQLError as exc:
            return f"{name}: unreachable ({exc})"

    def _ready(self, server: LabServer) -> None:
        """Wait for ``server``; if its port was taken meanwhile, move it to another port."""
        for attempt in range(_PORT_ATTEMPTS):
            try:
                servers.wait_ready(server, self.config.start_timeout_s)
                return
            except PortInUse:
                if attempt == _PORT_ATTEMPTS - 1:
                    raise
            server.port = servers.free_ports(1)[0]
            if server is not self.source:
                server.options = _replica_options(self.config, server.port)
            servers.start_server(server)
            self._save_state()

    def _spawn_proxy(self, proxy: _ProxyProcess) -> None:
        argv = [
            sys.executable,
            "-m",
            "lagscope.lab.proxy",
            f"--listen-port={proxy.listen_port}",
            f"--target-port={self.source.port}",
            f"--delay-ms={self.config.proxy_delay_s * 1000:.3f}",
            f"--bandwidth={self.config.proxy_bandwidth_bps or 0:.0f}",
            f"--control={proxy.control}",
        ]
        proxy.pid = servers.spawn(argv, self.dir / f"proxy-{proxy.replica}.log")

    def _proxy_ready(self, proxy: _ProxyProcess) -> None:
        for _ in range(_PORT_ATTEMPTS):
            deadline = time.monotonic() + self.config.start_timeout_s
            while proxy.pid is not None and servers.is_running(proxy.pid, str(proxy.control)):
                # The control socket's file appears at bind(), before listen(): "connection
                # refused" (a LagscopeError from the client) means not ready yet.
                with contextlib.suppress(LagscopeError, OSError):
                    if proxy.control.exists() and proxy.client.status():
                        return
                if time.monotonic() > deadline:
                    raise LabError(f"proxy for {proxy.replica} not answering on {proxy.control}")
                time.sleep(0.02)
            # It exited: most likely its port was taken after we chose it. Try another.
            proxy.listen_port = servers.free_ports(1)[0]
            self._spawn_proxy(proxy)
        log = (self.dir / f"proxy-{proxy.replica}.log").read_text(errors="replace")
        raise LabError(f"proxy for {proxy.replica} did not start:\n{log[-2000:]}")

    def _setup_source(self) -> None:
        with servers.root_connection(self.source) as conn, conn.cursor() as cur:
            for sql, user in _SOURCE_SETUP:
                # Always with a tuple, so "%%" is formatted to "%" in every statement alike.
                cur.execute(sql, () if user is None else (self.credentials.of(user)[1],))

    def _setup_replica(self, replica: LabServer) -> None:
        proxy = self._proxies.get(replica.name)
        port = proxy.listen_port if proxy else self.source.port
        with servers.root_connection(replica) as conn, conn.cursor() as cur:
            cur.execute(_CHANGE_MASTER, (port, self.credentials.repl[1]))
            cur.execute("START SLAVE")

    def _save_state(self) -> None:
        config = {f.name: getattr(self.config, f.name) for f in fields(self.config)}
        config["base_dir"] = None if config["base_dir"] is None else str(config["base_dir"])
        config["proxied"] = list(self.config.proxied)
        config["source_options"] = list(self.config.source_options)
        config["clock_offsets"] = [list(pair) for pair in self.config.clock_offsets]
        state = {
            "version": 1,
            "dir": str(self.dir),
            "owns_dir": self._owns_dir,
            "owner_pid": self.owner_pid,
            "config": config,
            "servers": [s.to_state() for s in self.servers],
            "proxies": [
                {
                    "replica": p.replica,
                    "listen_port": p.listen_port,
                    "control": str(p.control),
                    "pid": p.pid,
                }
                for p in self._proxies.values()
            ],
            "credentials": self.credentials.to_state(),
            "start_seconds": self.start_seconds,
        }
        # Atomic and private: the file holds passwords, and a reader must never see half of it.
        tmp = self.state_path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(state, out, indent=2)
        os.replace(tmp, self.state_path)


def _replica_options(config: LabConfig, port: int) -> tuple[str, ...]:
    return (
        "--read-only=1",
        f"--slave-net-timeout={config.slave_net_timeout_s}",
        f"--slave-parallel-threads={config.parallel_threads}",
        f"--slave-parallel-mode={config.parallel_mode}",
        # So SHOW SLAVE HOSTS on the source names replicas by an address that works.
        f"--report-host={HOST}",
        f"--report-port={port}",
    )


def _gtid_set(text: str) -> dict[str, str]:
    """``"0-1-7,1-5-3"`` → ``{"0": "1-7", "1": "5-3"}``: order-free comparison per domain."""
    return dict(part.strip().split("-", 1) for part in text.split(",") if part.strip())


@dataclass(slots=True)
class _Progress:
    """Each replica's last applied position seen by :meth:`Lab.wait_caught_up`."""

    positions: dict[str, str | None] = field(default_factory=dict)
    moved: bool = False

    def note(self, name: str, position: str | None) -> None:
        if name in self.positions and self.positions[name] != position:
            self.moved = True
        self.positions[name] = position


def _gtid_reached(position: dict[str, str], target: dict[str, str]) -> bool:
    """Whether ``position`` holds every domain of ``target`` at the same or a later sequence
    number (MariaDB numbers transactions per domain, whichever server wrote them)."""
    for domain, server_seq in target.items():
        if domain not in position:
            return False
        if int(position[domain].rsplit("-", 1)[1]) < int(server_seq.rsplit("-", 1)[1]):
            return False
    return True


def sweep_abandoned(root: Path = Path("/tmp")) -> list[Path]:
    """Stop labs under ``root`` whose owning process died without stopping them.

    A test run killed outright (SIGKILL, OOM) never runs its atexit hooks, and its servers run in
    their own sessions, so they would stay forever on this shared box. Detached labs (no owner)
    and labs whose owner still lives are left alone; a recycled owner pid only delays the sweep.
    """
    swept = []
    for state_path in root.glob("lagscope-lab-*/" + STATE_FILE):
        try:
            owner = json.loads(state_path.read_text()).get("owner_pid")
        except (OSError, ValueError):
            continue
        if owner is None or Path(f"/proc/{owner}").exists():
            continue
        with contextlib.suppress(LagscopeError, OSError, KeyError, ValueError):
            Lab.load(state_path).stop()
            swept.append(state_path)
    return swept
