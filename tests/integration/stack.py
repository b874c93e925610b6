"""Real processes for pipeline tests: a throwaway Redis and Lagscope's worker, beat, heartbeat.

Each is a subprocess with its log in the test's directory; ``stop()`` terminates it (then kills
it) so no process outlives the fixture that started it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from .waiting import wait_until


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Process:
    def __init__(self, name: str, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.name = name
        self.log_path = cwd / f"{name}.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._log.close()


class RedisServer:
    """A redis-server of our own on a free port, keeping nothing on disk."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.port = free_port()
        self.process = Process(
            "redis",
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            workdir,
            dict(os.environ),
        )
        wait_until(self._answers, timeout_s=10, message="redis-server answers PING")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        self.process.stop()


def lagscope(*args: str) -> list[str]:
    return [sys.executable, "-m", "lagscope", *args]


def wait_for_log(process: Process, text: str, timeout_s: float = 30) -> None:
    def seen() -> bool:
        assert process.alive(), f"{process.name} died:\n{process.log_tail()}"
        return text in process.log_path.read_text(errors="replace")

    wait_until(seen, timeout_s=timeout_s, message=f"{process.name} logs {text!r}")


def sleep_s(seconds: float) -> None:
    """For tests that must let time pass (a load running for N s), not to wait for a state."""
    time.sleep(seconds)
