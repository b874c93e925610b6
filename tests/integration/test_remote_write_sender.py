"""The remote-write sender against a real HTTP receiver on loopback: what is refused for a while
waits and goes out once, in order; what is refused for good is dropped and counted; a queue
past its bound drops the oldest; the token goes with every request."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import cramjam
import pytest

from lagscope.alerts.tick_figures import TickFigures
from lagscope.demo.processes import free_port
from lagscope.models import Channel, Cluster, Instance
from lagscope.remote_write.points import Point, named_tick, tick_points
from lagscope.remote_write.sender import RemoteWriter
from tests.unit.remote_write.test_remote_write import decode

from .receiver import receiver
from .waiting import wait_until

pytestmark = pytest.mark.integration

T0 = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def figures(k: int) -> list[TickFigures]:
    """Tick ``k``: one replica's default channel with a lag of ``k`` s, its server up."""
    channel = Channel(id=7, name="")
    instance = Instance(id=3, name="db2", region="far", channels=[channel])
    cluster = Cluster(id=1, name="orders", instances=[instance])
    at = T0 + timedelta(seconds=k)
    sample: dict[str, Any] = {"ts": at, "verdict": 2, "lag_s": float(k), "lag_source": 3}
    return [TickFigures(cluster, {7: sample}, {3: {"ts": at, "reachable": True}})]


def lags(requests: list) -> list[tuple[int, float]]:
    """The lag samples in the requests, in the order they arrived."""
    found = []
    for request in requests:
        body = bytes(cramjam.snappy.decompress_raw(request.body))
        for series in decode(body):
            if dict(series.labels)["__name__"] == "lagscope_lag_seconds":
                assert dict(series.labels) == {
                    "__name__": "lagscope_lag_seconds",
                    "cluster": "orders",
                    "server": "db2",
                    "region": "far",
                }
                found += list(series.samples)
    return found


def ms(k: int) -> int:
    return round((T0 + timedelta(seconds=k)).timestamp() * 1000)


def test_refused_for_a_while_waits_then_goes_out_once_in_order_with_the_token():
    clock = Clock()
    with receiver() as inbox:
        writer = RemoteWriter(f"{inbox.url}/api/v1/write", bearer_token="t0ken", clock=clock)
        inbox.fail_next(503, 429)
        writer(figures(1))
        writer.send_waiting()  # 503: waits, next try in 1 s
        writer(figures(2))
        writer.send_waiting()  # too soon: nothing is sent
        assert len(inbox.all()) == 1
        clock.now += 1.0
        writer.send_waiting()  # 429: waits, next try in 2 s
        clock.now += 1.0
        writer.send_waiting()
        assert len(inbox.all()) == 2
        clock.now += 1.0
        writer(figures(3))
        writer.send_waiting()
        accepted = inbox.accepted()
        assert lags(accepted) == [(ms(1), 1.0), (ms(2), 2.0), (ms(3), 3.0)]
        for request in inbox.all():
            assert request.path == "/api/v1/write"
            assert request.headers["Authorization"] == "Bearer t0ken"
            assert request.headers["Content-Encoding"] == "snappy"
            assert request.headers["Content-Type"] == "application/x-protobuf"
            assert request.headers["X-Prometheus-Remote-Write-Version"] == "0.1.0"
        assert writer.stats.failures == 2
        assert writer.stats.samples_dropped == 0
        assert writer.stats.waiting == 0
        writer.stop()


def test_refused_for_good_is_dropped_and_counted_and_the_next_goes_out():
    with receiver() as inbox:
        writer = RemoteWriter(inbox.url, clock=Clock())
        inbox.fail_next(400)
        writer(figures(1))
        writer.send_waiting()
        writer(figures(2))
        writer.send_waiting()
        assert lags(inbox.accepted()) == [(ms(2), 2.0)]
        assert writer.stats.requests_refused == 1
        assert writer.stats.samples_dropped > 0
        assert writer.stats.last_error is not None and "400" in writer.stats.last_error
        writer.stop()


def test_a_receiver_that_is_down_loses_only_what_is_past_the_bound_the_oldest_first():
    clock = Clock()
    port = free_port()
    per_tick = sum(1 for _ in _points_of(figures(1)))
    writer = RemoteWriter(
        f"http://127.0.0.1:{port}/api/v1/write", max_waiting=3 * per_tick, clock=clock
    )
    for k in range(1, 6):
        writer(figures(k))
        writer.send_waiting()  # connection refused: waits
        clock.now += 60
    assert writer.stats.failures >= 1
    assert writer.stats.samples_dropped == 2 * per_tick
    with receiver(port=port) as inbox:
        clock.now += 60
        writer.send_waiting()
        assert lags(inbox.accepted()) == [(ms(3), 3.0), (ms(4), 4.0), (ms(5), 5.0)]
    writer.stop()


def test_the_senders_thread_sends_what_batches_hand_it():
    with receiver() as inbox:
        writer = RemoteWriter(inbox.url, every_s=0.05)
        writer.start()
        for k in range(1, 4):
            writer(figures(k))
        wait_until(lambda: len(lags(inbox.accepted())) == 3, timeout_s=10, message="3 lags sent")
        writer(figures(4))
        writer.stop()  # sends what waits before it ends
        assert lags(inbox.accepted()) == [(ms(k), float(k)) for k in range(1, 5)]


def _points_of(batch: list[TickFigures]) -> Iterator[Point]:
    for tick in batch:
        yield from tick_points(named_tick(tick))
