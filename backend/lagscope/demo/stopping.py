"""How the demo stops: the first SIGINT or SIGTERM interrupts whatever the main thread does, and
everything started is then stopped side by side, with a sweep for what a signal left unrecorded.

Every child inherits the run's tag (RUN_TAG_VAR) and the helpers run in the demo's directory, so
the sweep finds them by either, whatever a signal interrupted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

# How long the clean-up waits for graceful stops before the sweep SIGKILLs what is left.
STOP_BUDGET_S = 7.0
RUN_TAG_VAR = "LAGSCOPE_DEMO_RUN"


class DemoStopped(BaseException):
    """Raised in the main thread by the first SIGINT or SIGTERM. A BaseException, like
    KeyboardInterrupt, so no ``except Exception`` on the way swallows it; start-up steps (the
    lab's included) clean up what they started when it passes through them."""


class StopSignals:
    """The signal handler does no locking work: it runs between two bytecodes of the main
    thread, which may hold any lock at that moment (the old handler's ``Event.set()`` met the
    main thread's ``Event.wait()`` on the Event's own lock and the demo hung forever).

    The first signal raises DemoStopped wherever the main thread is (start-up or serving) and
    records the request. A later one is only recorded: it lands while what the first one
    interrupted cleans up after itself (a lab that was starting removes its directory; a second
    Ctrl-C there once cut ``shutil.rmtree`` between two closes of one descriptor and the demo
    ended on that ``OSError``), and once the demo's own clean-up has begun nothing may cut it
    short. A first DemoStopped lost inside a finalizer (``__del__`` prints and drops an
    exception) is not lost for good: the serving loop checks ``requested``.
    """

    def __init__(self) -> None:
        self.requested = False
        self.cleaning_up = False

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self._handle)
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, _frame: object) -> None:
        first = not self.requested
        self.requested = True
        if first and not self.cleaning_up:
            raise DemoStopped(signum)


def stop_all(started: list[Callable[[], object]], workdir: Path) -> None:
    """Stop everything at once; one failing stop never keeps the others running. Then sweep: a
    signal that landed between a child's start and its registration above must not leave it.

    The stops run side by side because each one grants its process a grace period (a Celery
    worker finishing its task, mariadbd flushing InnoDB): one after another, on a busy 2-core
    machine, those graces added up to more than the 10 s a user waits after Ctrl-C."""
    stoppers = [
        threading.Thread(target=_stop_quietly, args=(stop,), name=f"stop-{i}", daemon=True)
        for i, stop in enumerate(reversed(started))
    ]
    for stopper in stoppers:
        stopper.start()
    deadline = time.monotonic() + STOP_BUDGET_S
    for stopper in stoppers:
        stopper.join(max(0.0, deadline - time.monotonic()))
    for pid in set(children_working_in(workdir)) | set(processes_of_run(os.environ[RUN_TAG_VAR])):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _stop_quietly(stop: Callable[[], object]) -> None:
    try:
        stop()
    except Exception as exc:
        print(f"lagscope demo: stopping {stop!r} failed: {exc}", file=sys.stderr, flush=True)


def processes_of_run(tag: str) -> list[int]:
    """Every process that inherited this run's tag, this process excluded. It finds what the
    lab's own clean-up cannot: a mariadbd whose start a signal interrupted after the fork but
    before the lab recorded its pid (seen: one survived a SIGINT 2.9 s into start-up)."""
    needle = f"{RUN_TAG_VAR}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if needle in environ.split(b"\0"):
                found.append(int(entry.name))
    return found


def children_working_in(directory: Path) -> list[int]:
    """Processes whose working directory is inside ``directory`` (Redis, worker, beat and
    heartbeat run there), this process excluded."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if cwd == str(directory) or cwd.startswith(f"{directory}/"):
                found.append(int(entry.name))
    return found
