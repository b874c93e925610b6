"""The processes the lab starts: free ports chosen, detached children spawned and reaped, and
told apart from a recycled pid before they are signalled.

A lab outlives a crashed test run only as long as nothing sweeps it, so every signal goes to a
pid whose command line still names the lab's own path.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from lagscope.lab.errors import LabError


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
