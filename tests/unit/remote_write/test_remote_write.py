"""Remote write: the request as bytes on the wire, and the samples a batch's ticks give.

The wire format is read back here with a protocol-buffer reader of the test's own (the
receivers' reading is tested against a real Prometheus, tests/integration); the samples are
checked against what the store gives back for the same tick.
"""

from __future__ import annotations

import math
import shutil
import struct
import subprocess
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cramjam
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select

from lagscope.analysis.codes import LagSource, Verdict, io_state_code
from lagscope.collectors.snapshot import IoState
from lagscope.history.prometheus import ChannelPoint, InstancePoint, exposition
from lagscope.models import Channel, InstanceSample, Sample
from lagscope.remote_write.points import CHANNEL_GAUGE_COLUMNS, named_tick, tick_points
from lagscope.remote_write.sender import as_series
from lagscope.remote_write.wire import Series, compress, write_request
from tests.factories import make_cluster, sqlite_file
from tests.owner_ticks import OwnerTicks


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _fields(data: bytes) -> list[tuple[int, Any]]:
    """(field number, bytes for wire type 2, int for 0, float for 1) in order."""
    found: list[tuple[int, Any]] = []
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, kind = key >> 3, key & 7
        if kind == 2:
            size, at = _varint(data, at)
            found.append((number, data[at : at + size]))
            at += size
        elif kind == 0:
            value, at = _varint(data, at)
            found.append((number, value))
        elif kind == 1:
            found.append((number, struct.unpack("<d", data[at : at + 8])[0]))
            at += 8
        else:
            raise AssertionError(f"unexpected wire type {kind}")
    return found


def decode(body: bytes) -> list[Series]:
    series = []
    for number, ts in _fields(body):
        assert number == 1
        labels: list[tuple[str, str]] = []
        samples: list[tuple[int, float]] = []
        for inner, payload in _fields(ts):
            parts = dict(_fields(payload))
            if inner == 1:
                labels.append((parts[1].decode(), parts.get(2, b"").decode()))
            else:
                assert inner == 2
                samples.append((parts.get(2, 0), parts.get(1, 0.0)))
        series.append(Series(tuple(labels), samples))
    return series


def test_a_request_reads_back_as_the_series_it_was_made_of():
    series = [
        Series(
            (("__name__", "lagscope_lag_seconds"), ("cluster", "orders"), ("server", "db2")),
            [(1_764_900_000_123, 12.5), (1_764_900_001_124, 0.0), (1_764_900_002_125, -1.25)],
        ),
        Series(
            (("__name__", "lagscope_up"), ("cluster", 'Größe "x"'), ("server", "a" * 300)),
            [(0, 1.0), (2**62, math.inf)],
        ),
    ]
    body = write_request(series)
    assert decode(body) == series
    assert bytes(cramjam.snappy.decompress_raw(compress(body))) == body


def test_points_group_into_series_each_oldest_first():
    a = (("__name__", "x"), ("server", "a"))
    b = (("__name__", "x"), ("server", "b"))
    grouped = as_series([(a, 2_000, 2.0), (b, 1_000, 5.0), (a, 1_000, 1.0)])
    assert grouped == [Series(a, [(1_000, 1.0), (2_000, 2.0)]), Series(b, [(1_000, 5.0)])]


@pytest.fixture
def ticks(tmp_path: Path) -> OwnerTicks:
    with sqlite_file(tmp_path / "store.db") as sessions:
        with sessions() as session, session.begin():
            cluster, named = make_cluster(
                session, "orders", [("db1", 1, "source", "near"), ("db2", 2, "replica", "")]
            )
            session.flush()
            session.add(Channel(instance_id=named["db2"].id, name="", first_seen_at=T0))
            session.add(Channel(instance_id=named["db2"].id, name="east", first_seen_at=T0))
            cluster_id = cluster.id
        yield OwnerTicks(sessions, cluster_id)


T0 = datetime(2026, 12, 5, 12, 0, 0, 123_456, tzinfo=UTC)


def _ids(ticks: OwnerTicks) -> tuple[int, int, int, int]:
    db1, db2 = sorted(ticks.cluster.instances, key=lambda i: i.name)
    default, east = sorted(db2.channels, key=lambda c: c.name)
    return db1.id, db2.id, default.id, east.id


def test_a_ticks_points_are_its_stored_rows_under_the_metrics_names(ticks: OwnerTicks):
    db1, db2, default, east = _ids(ticks)
    figures = ticks.tick(
        T0,
        samples={
            default: {
                "verdict": int(Verdict.APPLY_BOUND),
                "lag_s": 12.34567,  # the store keeps milliseconds
                "lag_source": int(LagSource.TIMELINE),
                "trx_behind": 40,
                "io_state": io_state_code(IoState.CONNECTING),
                "sql_running": True,
                "seconds_behind_source": None,  # no sample, not a 0
            },
            east: {"verdict": int(Verdict.CAUGHT_UP), "io_state": io_state_code(IoState.YES)},
        },
        polled={
            db1: {"round_trip_s": 0.0123456, "clock_offset_s": -0.5},
            db2: {"reachable": False},
        },
    )
    points = {
        (dict(labels)["__name__"], labels[1:]): (at, v)
        for labels, at, v in tick_points(named_tick(figures))
    }
    at_ms = round(T0.timestamp() * 1000)
    assert {at for at, _ in points.values()} == {at_ms}

    def value(name: str, **labels: str) -> float | None:
        found = points.get((name, tuple(sorted(labels.items()))))
        return None if found is None else found[1]

    replica = {"cluster": "orders", "server": "db2"}  # no region, the default channel: no labels
    with ticks.sessions() as session:
        stored = session.scalars(
            select(Sample).where(Sample.ts == T0, Sample.channel_id == default)
        ).one()
        polled = session.scalars(
            select(InstanceSample).where(InstanceSample.instance_id == db1)
        ).one()
    assert value("lagscope_lag_seconds", **replica) == stored.lag_s == 12.346
    assert value("lagscope_trx_behind", **replica) == 40
    assert value("lagscope_seconds_behind_source", **replica) is None
    assert value("lagscope_io_running", **replica) == 0.0
    assert value("lagscope_io_running", **replica, channel="east") == 1.0
    assert value("lagscope_sql_running", **replica) == 1.0
    for verdict in Verdict:
        assert value("lagscope_verdict", **replica, verdict=verdict.label) == float(
            verdict is Verdict.APPLY_BOUND
        )
    for source in LagSource:
        assert value("lagscope_lag_source", **replica, source=source.label) == float(
            source is LagSource.TIMELINE
        )
    source_labels = {"cluster": "orders", "server": "db1", "region": "near"}
    assert value("lagscope_up", **source_labels) == 1.0
    assert value("lagscope_poll_round_trip_seconds", **source_labels) == polled.round_trip_s
    assert value("lagscope_clock_offset_seconds", **source_labels) == -0.5
    assert value("lagscope_up", **replica) == 0.0
    assert value("lagscope_poll_round_trip_seconds", **replica) is None
    # Every catalog gauge the row had a value for went out and no other; labels sorted.
    row = figures.samples[default]
    for gauge, column in CHANNEL_GAUGE_COLUMNS:
        assert (value(gauge, **replica) is None) == (row[column] is None), gauge
    for labels, _, _ in tick_points(named_tick(figures)):
        assert labels[0][0] == "__name__"
        assert list(labels[1:]) == sorted(labels[1:])


def test_the_pushed_names_are_the_expositions_and_promtool_finds_nothing_to_say(
    ticks: OwnerTicks,
):
    db1, _, default, _ = _ids(ticks)
    figures = ticks.tick(
        T0,
        samples={default: {"lag_s": 3.0, "seconds_behind_source": 3, "apply_rate": 9.5}},
        polled={db1: {"round_trip_s": 0.01, "clock_offset_s": 0.0}},
    )
    pushed = {dict(labels)["__name__"] for labels, _, _ in tick_points(named_tick(figures))}
    labels = {"cluster": "orders", "server": "db2", "channel": "", "region": ""}
    text = exposition(
        [
            ChannelPoint(
                **labels,
                ts=T0,
                verdict=Verdict.CAUGHT_UP,
                **{column: 1 for _, column in CHANNEL_GAUGE_COLUMNS if column != "io_state"},
                io_running=True,
            )
        ],
        [
            InstancePoint(
                "orders", "db1", "near", True, 0.01, 0.0, T0, params={"sync_binlog": "1", "m": "x"}
            )
        ],
    )
    exposed = {s.name for f in text_string_to_metric_families(text.decode()) for s in f.samples}
    assert pushed <= exposed, pushed - exposed
    # promtool (Debian's prometheus package) lints names, units and help the way Prometheus's
    # own conventions say.
    checked = subprocess.run(
        [shutil.which("promtool") or "/usr/bin/promtool", "check", "metrics"],
        input=text,
        capture_output=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.strip() == b"", checked.stdout


def test_the_parameters_a_poll_read_go_out_as_numbers_or_as_info(ticks: OwnerTicks):
    db1, _, _, _ = _ids(ticks)
    read = {
        "sync_binlog": "1",
        "innodb_flush_log_at_trx_commit": "2",
        "log_slave_updates": "ON",
        "read_only": "OFF",
        "slave_parallel_mode": "optimistic",
        "binlog_commit_wait_usec": None,  # not readable: no sample
    }
    figures = replace(ticks.tick(T0, samples={}, polled={db1: {}}), params={db1: read})
    points = {labels: value for labels, _, value in tick_points(named_tick(figures))}
    base = (("cluster", "orders"), ("region", "near"), ("server", "db1"))

    def parameter(name: str) -> float | None:
        return points.get(
            (("__name__", "lagscope_parameter"), *sorted((*base, ("parameter", name))))
        )

    assert parameter("sync_binlog") == 1.0
    assert parameter("innodb_flush_log_at_trx_commit") == 2.0
    assert parameter("log_slave_updates") == 1.0
    assert parameter("read_only") == 0.0
    assert parameter("slave_parallel_mode") is None
    assert parameter("binlog_commit_wait_usec") is None
    info = [dict(labels) for labels in points if dict(labels)["__name__"].endswith("_info")]
    assert info == [
        {
            "__name__": "lagscope_parameter_info",
            **dict(base),
            "parameter": "slave_parallel_mode",
            "value": "optimistic",
        }
    ]
    # /metrics says the same of the same values.
    text = exposition([], [InstancePoint("orders", "db1", "near", True, params=read)]).decode()
    exposed = {
        (s.name, s.labels.get("parameter"), s.labels.get("value")): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
        if s.name.startswith("lagscope_parameter")
    }
    assert exposed == {
        ("lagscope_parameter", "sync_binlog", None): 1.0,
        ("lagscope_parameter", "innodb_flush_log_at_trx_commit", None): 2.0,
        ("lagscope_parameter", "log_slave_updates", None): 1.0,
        ("lagscope_parameter", "read_only", None): 0.0,
        ("lagscope_parameter_info", "slave_parallel_mode", "optimistic"): 1.0,
    }
