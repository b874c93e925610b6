"""The real MariaDB lab, once per session: a source and two replicas, replica2 behind a proxy.
Shared by tests/integration and tests/e2e (one lab for the whole run, not one per folder).

Stopped at the end of the session even when tests fail (and by atexit if pytest dies), so the
next run finds free ports and no stray mariadbd.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from lagscope.lab import Lab, LabConfig

# CI replays the same examples every run (derandomize): a property test either holds on them or
# fails every time, never once in a while. Locally the search stays random, so new examples are
# still tried (HYPOTHESIS_PROFILE=ci replays CI's).
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)


@pytest.fixture(scope="session")
def lab() -> Iterator[Lab]:
    started = Lab.start(LabConfig(replicas=2, proxied=("replica2",)))
    try:
        yield started
    finally:
        started.stop()
