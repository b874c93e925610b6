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
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from lagscope.errors import LagscopeError
from lagscope.lab import binaries, processes, servers, template
from lagscope.lab.servers import LabError, LabServer
from lagscope.lab.topology.bring_up import BringingUp
from lagscope.lab.topology.catch_up import CatchingUp
from lagscope.lab.topology.config import (
    HOST,
    Credentials,
    LabConfig,
    ProxyProcess,
    replica_options,
)
from lagscope.lab.topology.view import STATE_FILE

CRASH_DIR = Path("/tmp/lagscope-lab-crashes")
_log = logging.getLogger(__name__)


class Lab(CatchingUp, BringingUp):
    """A running lab. Make one with :meth:`start` (or reattach with :meth:`load`)."""

    # ---- making and finding labs ----------------------------------------------------------------

    @classmethod
    def start(cls, config: LabConfig | None = None) -> Lab:
        """Start a lab and wait until every replica has caught up; cleans up if anything fails."""
        began = time.monotonic()
        config = config or LabConfig()
        config.validate()
        sweep_abandoned()
        datadir_template = template.ensure_template()
        lab = cls._create(config)
        atexit.register(lab.stop)
        try:
            for server in lab.servers:
                template.create_datadir(server, datadir_template)
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
        ports = processes.free_ports(len(names) + len(config.proxied))
        made = [
            LabServer(
                name=name,
                host=HOST,
                port=ports[i],
                server_id=i + 1,
                datadir=lab_dir / name / "data",
                socket=lab_dir / name / "mysqld.sock",
                options=config.source_options if i == 0 else replica_options(config, ports[i]),
                clock_offset_s=dict(config.clock_offsets).get(name, 0.0),
            )
            for i, name in enumerate(names)
        ]
        proxies = {
            name: ProxyProcess(name, ports[len(names) + i], lab_dir / f"proxy-{name}.sock")
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
            p["replica"]: ProxyProcess(p["replica"], p["listen_port"], Path(p["control"]), p["pid"])
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
        processes.forget_children()
        self.owner_pid = None
        self._save_state()

    # ---- breaking it ----------------------------------------------------------------------------

    def kill(self, name: str) -> None:
        """SIGKILL the server (a crash); its port and datadir stay for :meth:`restart`."""
        server = self.server(name)
        if server.pid is not None:
            processes.kill_now(server.pid, str(server.datadir))
        server.pid = None
        self._save_state()

    def restart(self, name: str, timeout_s: float = 30.0) -> None:
        """Start a killed (or running: it is killed first) server again and wait until it answers.

        Replicas resume replication by themselves: the channel is in the datadir and slave
        threads start with the server.
        """
        server = self.server(name)
        if server.pid is not None:
            processes.kill_now(server.pid, str(server.datadir))
        servers.start_server(server)
        self._save_state()
        servers.wait_ready(server, timeout_s)

    def set_clock_offset(self, name: str, offset_s: float, timeout_s: float = 60.0) -> None:
        """Restart ``name`` (a clean shutdown) with its clock ``offset_s`` ahead (libfaketime;
        0 restores the true clock) and wait until it answers. Replication resumes by itself."""
        server = self.server(name)
        if offset_s:
            binaries.libfaketime_path()  # refuse before stopping anything
        if server.pid is not None:
            processes.terminate([(server.pid, str(server.datadir))], grace_s=timeout_s)
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
        processes.terminate(targets)
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
            if server.pid is None or processes.is_running(server.pid, str(server.datadir)):
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
