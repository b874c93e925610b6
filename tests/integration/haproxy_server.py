"""A real HAProxy for tests (Debian's ``haproxy``): reads to the lab's replicas in TCP mode, each
replica's state decided by Lagscope's lag check.

The configuration is docs/proxies.md's: a ``reads`` backend whose servers ``track`` one check
backend per replica; each check backend health-checks Lagscope's API with ``option httpchk`` and
``http-check send … uri /api/v1/check/<cluster>/<replica>?max_lag=… hdr Authorization "Bearer
<token>"``. It listens on free loopback ports and answers ``show stat`` on a stats socket in its
working directory; ``stop()`` ends it.
"""

from __future__ import annotations

import csv
import io
import shutil
import socket
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .stack import free_port
from .waiting import wait_until


def haproxy_path() -> str | None:
    return shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy",) if Path(p).exists()), None
    )


def reads_config(
    *,
    reads_port: int,
    stats_socket: Path,
    api: tuple[str, int],
    cluster: str,
    replicas: Mapping[str, tuple[str, int]],
    token: str,
    max_lag_s: float,
    inter_ms: int = 500,
) -> str:
    """The configuration of docs/proxies.md, for ``replicas`` (name → host, port)."""
    api_host, api_port = api
    lines = [
        "global",
        f"    stats socket {stats_socket} mode 600 level admin",
        "    log stderr local0 warning",
        "",
        "defaults",
        "    mode tcp",
        "    log global",
        "    timeout connect 2s",
        "    timeout client 60s",
        "    timeout server 60s",
        "    timeout check 2s",
        "",
        "frontend reads",
        f"    bind 127.0.0.1:{reads_port}",
        "    default_backend reads",
        "",
        "backend reads",
        "    balance roundrobin",
    ]
    lines += [
        f"    server {name} {host}:{port} track check_{name}/{name}"
        for name, (host, port) in replicas.items()
    ]
    for name in replicas:
        lines += [
            "",
            f"backend check_{name}",
            "    option httpchk",
            f"    http-check send meth GET uri /api/v1/check/{cluster}/{name}?max_lag={max_lag_s:g}"
            f' ver HTTP/1.1 hdr Host {api_host} hdr Authorization "Bearer {token}"',
            "    http-check expect status 200",
            f"    server {name} {api_host}:{api_port} check inter {inter_ms}ms fall 1 rise 1",
        ]
    return "\n".join(lines) + "\n"


@dataclass
class HAProxy:
    proc: subprocess.Popen[bytes]
    reads_port: int
    stats_socket: Path
    log: Path

    def stat(self) -> dict[tuple[str, str], dict[str, str]]:
        """``show stat`` over the stats socket: (proxy, server) → its row."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(self.stats_socket))
            sock.sendall(b"show stat\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        text = b"".join(chunks).decode().lstrip("# ")
        return {(row["pxname"], row["svname"]): row for row in csv.DictReader(io.StringIO(text))}

    def status(self, backend: str, server: str) -> str:
        """``UP``, ``DOWN``, … as HAProxy shows it (a tracking server: the tracked one's)."""
        return self.stat()[(backend, server)]["status"]

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


@contextmanager
def start_haproxy(workdir: Path, **config: object) -> Iterator[HAProxy]:
    """HAProxy in the foreground with :func:`reads_config` (its keyword arguments but the
    ports and socket, chosen here); stopped on exit."""
    binary = haproxy_path()
    if binary is None:
        raise RuntimeError("haproxy is not installed (make system-deps installs it)")
    workdir.mkdir(parents=True, exist_ok=True)
    stats_socket = workdir / "haproxy.sock"
    reads_port = free_port()
    path = workdir / "haproxy.cfg"
    path.write_text(
        reads_config(reads_port=reads_port, stats_socket=stats_socket, **config)  # type: ignore[arg-type]
    )
    checked = subprocess.run(
        [binary, "-c", "-f", str(path)], capture_output=True, text=True, check=False
    )
    if checked.returncode != 0:
        raise RuntimeError(f"haproxy refused its configuration:\n{checked.stdout}{checked.stderr}")
    log = workdir / "haproxy.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([binary, "-db", "-f", str(path)], stdout=out, stderr=out)
    proxy = HAProxy(proc, reads_port, stats_socket, log)
    try:
        wait_until(
            lambda: proc.poll() is None and stats_socket.exists() and proxy.stat(),
            timeout_s=15,
            message="HAProxy's stats socket",
            ignore=(OSError,),
        )
        yield proxy
    finally:
        proxy.stop()
