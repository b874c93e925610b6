"""`make demo` stops on Ctrl-C or SIGTERM whatever it is doing.

The old handler called ``Event.set()`` while the main thread sat in ``Event.wait()``: the two
met on the Event's lock and the demo hung with the lab, Redis, worker and beat still running.
Here the demo is signalled at random moments — while the lab starts, while the worker starts,
while it serves — twelve times, with SIGINT and SIGTERM in turn and sometimes a second signal
during the clean-up; each time everything it started must be gone within 10 s.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from lagscope.demo.stopping import children_working_in

from .stack import free_port, sleep_s
from .waiting import wait_until

pytestmark = pytest.mark.integration

RUNS = 8
STOP_WITHIN_S = 10.0
TAG_VAR = "LAGSCOPE_TEST_DEMO_RUN"


def tagged_processes(tag: str) -> set[int]:
    """Every process that inherited this run's tag: the demo's whole tree (lab servers,
    proxies, Redis, worker, beat), and no other test's or engineer's lab on the machine."""
    needle = f"{TAG_VAR}={tag}".encode()
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if needle in environ.split(b"\0"):
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_demo_stops_cleanly_on_signals_at_random_moments(tmp_path):
    rng = random.Random(int(os.environ.get("LAGSCOPE_TEST_SEED", "7")))
    timings = [one_run(tmp_path, run, rng) for run in range(RUNS)]
    print("signal at (s) -> all gone after (s):", [(round(a, 1), round(b, 1)) for a, b in timings])


def one_run(tmp_path: Path, run: int, rng: random.Random) -> tuple[float, float]:
    workdir = tmp_path / f"demo{run}"
    log_path = tmp_path / f"demo{run}.log"
    tag = uuid.uuid4().hex
    argv = [sys.executable, "-m", "lagscope", "demo", "--port", str(free_port())]
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [*argv, "--dir", str(workdir)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, TAG_VAR: tag},
        # As from a terminal: a test run started in the background (nohup … &) has SIGINT
        # ignored, the demo would inherit that, and a Ctrl-C before its handlers exist would
        # be lost (seen in all three stress runs: SIGINT 2.9 s in, the demo served on).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    first = signal.SIGINT if run % 2 == 0 else signal.SIGTERM
    # Start-up takes a few seconds here: early delays land in it, later ones while serving.
    delay = rng.uniform(0.0, 9.0)
    try:
        sleep_s(delay)  # not a wait for a state: the moment of the signal is what varies
        assert proc.poll() is None, log_path.read_text()
        proc.send_signal(first)
        signalled = time.monotonic()
        second_sent = False
        if run % 3 == 0:
            sleep_s(rng.uniform(0.0, 0.5))  # the second signal lands during clean-up
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)  # an impatient second Ctrl-C
                second_sent = True
        proc.wait(timeout=STOP_WITHIN_S)
        wait_until(
            lambda: (
                not children_working_in(workdir)
                and not {p for p in tagged_processes(tag) if alive(p)}
            ),
            timeout_s=max(0.1, STOP_WITHIN_S - (time.monotonic() - signalled)),
            message=f"run {run}: every child gone after {first.name} at {delay:.1f} s",
        )
        gone_after = time.monotonic() - signalled
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        log.close()
    # A signal during Python's own start-up (before the demo's handlers exist, so before it
    # created anything) ends it the default way; after that, a signal is a clean exit.
    # A second signal that arrives after the clean-up, while Python itself shuts down (it
    # restores the default handlers then), ends the process by that signal: harmless, as the
    # children-gone check above shows.
    if workdir.exists():
        allowed = {0, -signal.SIGINT} if second_sent else {0}
        assert proc.returncode in allowed, (run, proc.returncode, log_path.read_text())
    return delay, gone_after
