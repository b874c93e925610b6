"""The real MariaDB lab, once per session: a source and two replicas, replica2 behind a proxy.
Shared by tests/integration and tests/e2e (one lab for the whole run, not one per folder).

Stopped at the end of the session even when tests fail (and by atexit if pytest dies), so the
next run finds free ports and no stray mariadbd.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lagscope.lab import Lab, LabConfig


@pytest.fixture(scope="session")
def lab() -> Iterator[Lab]:
    started = Lab.start(LabConfig(replicas=2, proxied=("replica2",)))
    try:
        yield started
    finally:
        started.stop()
