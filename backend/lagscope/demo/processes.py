"""Child processes the demo, the benchmarks and the tests start: Redis and Lagscope's own.

Each runs in its own session with its log in a work directory; ``stop()`` sends SIGTERM to the
whole process group and SIGKILL after a grace period, so nothing outlives its owner.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from lagscope.config import Settings
from lagscope.errors import LagscopeError

# What a ``lagscope worker``'s log says once it polls: Celery's worker is ready, and with the
# owner engine its poll owner (a child process of its own, often ready later than Celery) has
# taken its first shards (engine/owner.py's lease beat).
CELERY_READY = "ready."
OWNER_READY = "shards taken:"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def lagscope_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "lagscope", *args]


class ManagedProcess:
    def __init__(
        self,
        name: str,
        argv: list[str],
        workdir: Path,
        env: dict[str, str],
        log_name: str | None = None,
    ) -> None:
        """``log_name``: the log file's name when not ``name`` (a restarted process keeps the
        log of the one before)."""
        self.name = name
        self.log_path = workdir / f"{log_name or name}.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            argv,
            cwd=workdir,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def wait_for_log(self, text: str, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while text not in self.log_text():
            if not self.alive():
                raise LagscopeError(f"{self.name} exited:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise LagscopeError(
                    f"{self.name} did not log {text!r} in {timeout_s} s:\n{self.log_tail()}"
                )
            time.sleep(0.1)

    def stop(self, grace_s: float = 5.0) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=grace_s)
        self._log.close()


def poll_engine(env: Mapping[str, str]) -> str:
    """The engine a ``lagscope`` process started with ``env`` runs."""
    return env.get("LAGSCOPE_POLL_ENGINE") or str(Settings.model_fields["poll_engine"].default)


def wait_worker_ready(
    worker: ManagedProcess, env: Mapping[str, str], timeout_s: float = 60.0
) -> None:
    """Until the ``lagscope worker`` started with ``env`` is ready to poll (a second worker
    joining owners that hold every shard logs its first shards once they have given some up)."""
    deadline = time.monotonic() + timeout_s
    worker.wait_for_log(CELERY_READY, timeout_s)
    if poll_engine(env) == "owner":
        worker.wait_for_log(OWNER_READY, max(1.0, deadline - time.monotonic()))


class RedisServer:
    """A redis-server of our own on a free loopback port, keeping nothing on disk."""

    def __init__(self, workdir: Path, timeout_s: float = 10.0) -> None:
        self.workdir, self.timeout_s = workdir, timeout_s
        self.port = free_port()
        self.process = self._start()

    def _start(self) -> ManagedProcess:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        argv = [
            binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        process = ManagedProcess("redis", argv, self.workdir, dict(os.environ))
        deadline = time.monotonic() + self.timeout_s
        while not self.answers():
            if time.monotonic() > deadline or not process.alive():
                process.stop()
                raise LagscopeError(f"redis-server did not answer:\n{process.log_tail()}")
            time.sleep(0.05)
        return process

    def start(self) -> None:
        """Start it again on the same port after :meth:`stop` (empty: it keeps nothing)."""
        self.process = self._start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        self.process.stop()
