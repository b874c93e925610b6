"""The cluster reader: cached connections, and closing the ones no tick uses any more."""

from __future__ import annotations

from lagscope.collectors.executor import ConnectionSpec
from lagscope.ingest.reader import ClusterReader, Target
from tests.unit.collectors.test_poller import mariadb_answers
from tests.unit.fakes.executor import FakeExecutor


def test_connections_of_instances_no_longer_polled_are_closed():
    made: dict[str, FakeExecutor] = {}

    def factory(spec: ConnectionSpec) -> FakeExecutor:
        made[spec.host] = FakeExecutor(mariadb_answers(), server=spec.server)
        return made[spec.host]

    now = [0.0]
    reader = ClusterReader(executor_factory=factory, idle_close_s=60, monotonic=lambda: now[0])
    kept, dropped = Target(1, ConnectionSpec("kept")), Target(2, ConnectionSpec("dropped"))
    try:
        assert all(r.ok for r in reader.read([kept, dropped], deadline_s=5))
        for second in range(10, 130, 10):  # instance 2 was deleted: only instance 1 is polled
            now[0] = float(second)
            assert [r.instance_id for r in reader.read([kept], deadline_s=5)] == [1]
        assert made["dropped"].closed == 1
        assert made["kept"].closed == 0
        polls_before = len(made["kept"].batches)
        reader.read([kept], deadline_s=5)
        assert len(made["kept"].batches) == polls_before + 1  # same connection, still cached
    finally:
        reader.close()
    assert made["kept"].closed == 1
