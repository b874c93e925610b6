"""Bringing a lab's processes up: each server waited for (moved to another port if its port
was taken meanwhile), the proxies spawned and waited for, the source's accounts and heartbeat
table created, and every replica pointed at the source or its proxy.
"""

from __future__ import annotations

import contextlib
import sys
import time

from lagscope.errors import LagscopeError
from lagscope.lab import processes, servers
from lagscope.lab.servers import LabError, LabServer, PortInUse
from lagscope.lab.topology.config import ProxyProcess, replica_options
from lagscope.lab.topology.view import LabView

_PORT_ATTEMPTS = 3

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


class BringingUp(LabView):
    """The steps of :meth:`Lab.start` between the processes' spawn and the wait to catch up."""

    def _ready(self, server: LabServer) -> None:
        """Wait for ``server``; if its port was taken meanwhile, move it to another port."""
        for attempt in range(_PORT_ATTEMPTS):
            try:
                servers.wait_ready(server, self.config.start_timeout_s)
                return
            except PortInUse:
                if attempt == _PORT_ATTEMPTS - 1:
                    raise
            server.port = processes.free_ports(1)[0]
            if server is not self.source:
                server.options = replica_options(self.config, server.port)
            servers.start_server(server)
            self._save_state()

    def _spawn_proxy(self, proxy: ProxyProcess) -> None:
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
        proxy.pid = processes.spawn(argv, self.dir / f"proxy-{proxy.replica}.log")

    def _proxy_ready(self, proxy: ProxyProcess) -> None:
        for _ in range(_PORT_ATTEMPTS):
            deadline = time.monotonic() + self.config.start_timeout_s
            while proxy.pid is not None and processes.is_running(proxy.pid, str(proxy.control)):
                # The control socket's file appears at bind(), before listen(): "connection
                # refused" (a LagscopeError from the client) means not ready yet.
                with contextlib.suppress(LagscopeError, OSError):
                    if proxy.control.exists() and proxy.client.status():
                        return
                if time.monotonic() > deadline:
                    raise LabError(f"proxy for {proxy.replica} not answering on {proxy.control}")
                time.sleep(0.02)
            # It exited: most likely its port was taken after we chose it. Try another.
            proxy.listen_port = processes.free_ports(1)[0]
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
