"""The binlog window's read is bounded: by an overall deadline (a source that trickles events,
or the bytes of one event), by a per-event cap judged on the packet header (a 400 MB event is
never read), and it never uses a server id another reader has. Against a fake source on
127.0.0.1 (tests/unit/fakes/fake_binlog_source.py)."""

from __future__ import annotations

import time

import pytest

from lagscope.collectors.binlog_dump import (
    DUMP_ID_BASE,
    DUMP_ID_SPAN,
    Bounds,
    installation_server_id,
    read_dump_window,
)
from lagscope.collectors.binlog_sample import BinlogMark
from lagscope.collectors.connection import ConnectionSpec
from tests.unit.fakes.fake_binlog_source import FakeBinlogSource

MARK = BinlogMark("binlog.000001", 4)


def spec(port: int) -> ConnectionSpec:
    # The read timeout is per recv: a trickle never trips it, which is the point.
    return ConnectionSpec("127.0.0.1", port, "mon", "", connect_timeout_s=2, read_timeout_s=4)


@pytest.mark.slow
def test_a_source_that_trickles_events_is_cut_at_the_deadline() -> None:
    # 25 transactions, one every 0.6 s: 15 s in all, past the 10 s default deadline.
    with FakeBinlogSource(("events", 25, 0.6)) as source:
        began = time.monotonic()
        window = read_dump_window(spec(source.port), MARK, mariadb=False)
        took = time.monotonic() - began
        sent = source.sent_events
    assert window.problem is not None, "the whole trickle was read"
    assert window.problem.startswith("stopped after 10 s: the source sent")
    assert f"sent {window.events} events" in window.problem
    assert 0 < window.events <= sent < 50
    # What was read whole is kept: the transactions before the cut.
    assert len(window.parents) >= window.events // 2 - 1
    assert took < 60  # a guard against a hang, not a speed figure


@pytest.mark.slow
def test_the_bytes_of_one_event_trickled_are_cut_at_the_deadline() -> None:
    with FakeBinlogSource(("bytes", 0.3)) as source:
        window = read_dump_window(spec(source.port), MARK, False, bounds=Bounds(deadline_s=1.5))
        assert source.dumps
    assert window.problem is not None and window.problem.startswith("stopped after 1.5 s")
    assert window.events == 0


@pytest.mark.slow
def test_an_event_over_the_cap_is_refused_on_its_header() -> None:
    # The header announces a full 16 MiB packet (the first of a 400 MB event's 24); the body
    # never comes. Refused on the header: the reader does not wait for the body.
    with FakeBinlogSource(("huge", 0xFF_FFFF)) as source:
        bounds = Bounds(deadline_s=20, max_event_bytes=1024 * 1024)
        window = read_dump_window(spec(source.port), MARK, False, bounds=bounds)
    assert window.problem is not None
    assert window.problem.startswith("stopped at an event of 16777215+ bytes, over the 1048576")


@pytest.mark.slow
def test_the_window_byte_budget_stops_the_read() -> None:
    with FakeBinlogSource(("events", 200, 0)) as source:
        bounds = Bounds(max_bytes=4000)
        window = read_dump_window(spec(source.port), MARK, False, bounds=bounds)
    assert window.problem is not None and "byte budget is spent" in window.problem
    assert 0 < window.events < 400


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source_id", "replicas", "known", "holder"),
    [
        (7, (0x4C53_5032,), (), "a replica's the source lists"),
        (0x4C53_5032, (), (), "the source's own"),
        (7, (), (0x4C53_5032,), "a server Lagscope monitors in this cluster"),
    ],
)
def test_a_taken_server_id_is_never_used(
    source_id: int, replicas: tuple[int, ...], known: tuple[int, ...], holder: str
) -> None:
    with FakeBinlogSource(("events", 3, 0), source_id, replicas) as source:
        window = read_dump_window(
            spec(source.port), MARK, False, server_id=0x4C53_5032, known_ids=known
        )
        dumps = list(source.dumps)
    assert dumps == []  # no COM_BINLOG_DUMP was sent
    assert window.problem is not None
    assert window.problem.startswith(f"not read: server id {0x4C53_5032} is {holder}")
    assert "LAGSCOPE_BINLOG_DUMP_SERVER_ID" in window.problem


@pytest.mark.slow
def test_a_free_server_id_reads_the_whole_window() -> None:
    with FakeBinlogSource(("events", 5, 0), 7, (2, 3)) as source:
        window = read_dump_window(spec(source.port), MARK, False, server_id=0x4C53_1234)
        assert source.dumps == [0x4C53_1234]
    assert window.problem is None
    assert window.events == 10 and len(window.parents) == 5


def test_the_installation_id_is_stable_and_in_its_block() -> None:
    ids = {installation_server_id(bytes([n]) * 16) for n in range(200)}
    assert all(DUMP_ID_BASE < i <= DUMP_ID_BASE + DUMP_ID_SPAN for i in ids)
    assert len(ids) > 190  # two installations rarely share one
    assert installation_server_id(b"x" * 16) == installation_server_id(b"x" * 16)
