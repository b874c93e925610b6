"""Waiting for a condition with a deadline: integration tests never sleep a fixed time.

The machine has 2 shared cores and replicas catch up at their own pace, so a test polls for the
state it expects and fails with a message saying what it waited for, instead of guessing a sleep.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    pred: Callable[[], T],
    timeout_s: float = 10.0,
    interval_s: float = 0.05,
    message: str = "",
    ignore: tuple[type[BaseException], ...] = (),
) -> T:
    """Poll ``pred`` until it returns something truthy, and return that.

    Exceptions of the types in ``ignore`` count as "not yet" (a server that is restarting refuses
    connections); any other exception propagates at once. Raises AssertionError on time-out.
    """
    deadline = time.monotonic() + timeout_s
    last: object = None
    while True:
        try:
            value = pred()
            if value:
                return value
            last = value
        except ignore as exc:
            last = exc
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"timed out after {timeout_s:g} s waiting for {message or pred!r}; last: {last!r}"
            )
        time.sleep(interval_s)


def assert_never(
    pred: Callable[[], object],
    for_s: float,
    interval_s: float = 0.05,
    message: str = "",
) -> None:
    """Assert ``pred`` stays falsy for ``for_s`` seconds (something must NOT happen)."""
    deadline = time.monotonic() + for_s
    while time.monotonic() < deadline:
        value = pred()
        if value:
            raise AssertionError(f"{message or pred!r} happened: {value!r}")
        time.sleep(interval_s)
