"""Test-side helpers over the product's process management (lagscope.demo.processes)."""

from __future__ import annotations

import time

from lagscope.demo.processes import (
    ManagedProcess,
    RedisServer,
    free_port,
    lagscope_command,
    poll_engine,
    wait_worker_ready,
)

__all__ = [
    "ManagedProcess",
    "RedisServer",
    "free_port",
    "lagscope_command",
    "poll_engine",
    "sleep_s",
    "wait_worker_ready",
]


def sleep_s(seconds: float) -> None:
    """For tests that must let time pass (a load running for N s), not to wait for a state."""
    time.sleep(seconds)
