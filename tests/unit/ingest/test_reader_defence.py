"""The reader's last line of defence: whatever a poll thread raises costs that server's reading
only — never an exception out of ``read()`` that would fail the whole tick's task."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest

from lagscope.collectors.executor import ConnectionSpec, ResultSet
from lagscope.ingest.reader import ClusterReader, Target
from tests.unit.collectors.test_poller import mariadb_answers
from tests.unit.fakes.executor import FakeExecutor


class _Broken(FakeExecutor):
    """Raises what no collector expects (a bug, or a driver surprise)."""

    def run(self, statements: Sequence[str]) -> list[ResultSet]:
        raise RuntimeError("a bug \x00 in a poll")


def test_an_unexpected_exception_in_a_poll_is_a_failed_reading_of_that_server_only(
    caplog: pytest.LogCaptureFixture,
):
    made: dict[str, FakeExecutor] = {}

    def factory(spec: ConnectionSpec) -> FakeExecutor:
        kind = _Broken if spec.host == "broken" else FakeExecutor
        made[spec.host] = kind(mariadb_answers(), server=spec.server)
        return made[spec.host]

    reader = ClusterReader(executor_factory=factory)
    good, broken = Target(1, ConnectionSpec("good")), Target(2, ConnectionSpec("broken"))
    caplog.set_level(logging.ERROR, logger="lagscope.ingest.reader")
    try:
        for _ in range(3):
            readings = {r.instance_id: r for r in reader.read([good, broken], deadline_s=5)}
            assert readings[1].ok
            failed = readings[2]
            assert not failed.ok and failed.error_kind == "PollFailed"
            assert (
                failed.error
                == "broken:3306: the poll failed: RuntimeError: a bug \\u0000 in a poll"
            )
    finally:
        reader.close()
    # Closed after each failure (its state is unknown); the traceback logged once, not per tick.
    assert made["broken"].closed >= 3
    logged = [r for r in caplog.records if "failed unexpectedly" in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is not None
