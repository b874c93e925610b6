"""What a lab is made of: the request (LabConfig), its accounts (Credentials), a proxied link's
process, and the flags a replica starts with.

Kept apart from the running Lab so the CLI and the incidents can describe a lab, and the state
file can rebuild one, without the code that starts and stops processes.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, fields
from pathlib import Path

from lagscope.errors import InvalidInput
from lagscope.lab.proxy_control import ProxyClient

HOST = "127.0.0.1"
PARALLEL_MODES = ("none", "minimal", "conservative", "optimistic", "aggressive")


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
class ProxyProcess:
    """A proxied replica's link: the proxy's port, its control socket and process."""

    replica: str
    listen_port: int
    control: Path
    pid: int | None = None

    @property
    def client(self) -> ProxyClient:
        return ProxyClient(self.control, self.listen_port)


def replica_options(config: LabConfig, port: int) -> tuple[str, ...]:
    return (
        "--read-only=1",
        f"--slave-net-timeout={config.slave_net_timeout_s}",
        f"--slave-parallel-threads={config.parallel_threads}",
        f"--slave-parallel-mode={config.parallel_mode}",
        # So SHOW SLAVE HOSTS on the source names replicas by an address that works.
        f"--report-host={HOST}",
        f"--report-port={port}",
    )
