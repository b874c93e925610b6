"""A lab as its processes see it: the servers and proxied links, connections to them, their
status, and the state file another process reattaches from.

The base of :class:`~lagscope.lab.topology.lab.Lab`: everything here reads or records a lab and
none of it starts or stops a process.
"""

from __future__ import annotations

import json
import os
from dataclasses import fields
from pathlib import Path
from typing import Any

import pymysql

from lagscope.collectors.connection import ConnectionSpec, TlsMode, open_connection
from lagscope.errors import InvalidInput, LagscopeError
from lagscope.lab import processes, servers
from lagscope.lab.proxy_control import ProxyControl
from lagscope.lab.servers import LabServer
from lagscope.lab.topology.config import Credentials, LabConfig, ProxyProcess

STATE_FILE = "lab.json"


class LabView:
    """A lab's servers, links and accounts, and its state file."""

    def __init__(
        self,
        config: LabConfig,
        lab_dir: Path,
        owns_dir: bool,
        source: LabServer,
        replicas: list[LabServer],
        credentials: Credentials,
        proxies: dict[str, ProxyProcess],
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
        return server.pid is not None and processes.is_running(server.pid, str(server.datadir))

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
