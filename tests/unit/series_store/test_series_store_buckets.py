"""Raw series read back from the raw-series store give the figures the SQL gives for the same
rows: the samples a tick makes for it (series_store/points.py) bucketed in Python
(series_store/buckets.py), against the SQL bucket query (history/series.py) on a SQLite store
holding the same rows. By hand first, then on random rows at every bucket width."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert
from sqlalchemy.orm import Session, sessionmaker

from lagscope.analysis.buckets import plan_buckets
from lagscope.history.series import METRICS, Point, _merge_buckets, _scale, _sql_buckets
from lagscope.metrics_catalog import SERIES
from lagscope.models import Channel, InstanceSample, Sample
from lagscope.models.types import to_micros
from lagscope.remote_write.points import NamedTick
from lagscope.series_store.buckets import bucketed
from lagscope.series_store.points import encode, metric_name, series_lines
from tests.factories import make_cluster, sqlite_file

T0 = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)


def plan_of(start: datetime, end: datetime, points: int) -> Any:
    return plan_buckets(to_micros(start), to_micros(end), points, "raw")


def test_buckets_by_hand() -> None:
    # Width 2 s from T0: [0, 2) holds 1.0 and 2.5 (the repeat at 1.000 s counts once), [2, 4)
    # holds 4.0; 6.5 s is past the end; a sample before lo is left out.
    plan = plan_of(T0, T0 + timedelta(seconds=6), 4)
    assert plan.width_us == 2_000_000
    t0 = to_micros(T0) // 1000
    samples = [(t0 - 1, 9.0), (t0, 1.0), (t0 + 1000, 2.5), (t0 + 1000, 2.5), (t0 + 2500, 4.0),
               (t0 + 6500, 7.0)]  # fmt: skip
    got = list(bucketed(samples, 1000, plan, to_micros(T0)))
    assert got == [
        ({"t": t0, "min": 1.0, "avg": 1.75, "max": 2.5, "last": 2.5, "n": 2},
         (t0 + 1000) * 1000),
        ({"t": t0 + 2000, "min": 4.0, "avg": 4.0, "max": 4.0, "last": 4.0, "n": 1},
         (t0 + 2500) * 1000),
    ]  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[sessionmaker[Session], list[int], int]]:
    with sqlite_file(tmp_path / "store.db") as sessions:
        with sessions() as session, session.begin():
            _, named = make_cluster(session, "c", [("src", 3306, "source"), ("r1", 3307)])
            replica = named["r1"]
            replica.channels.extend([Channel(name=n, first_seen_at=T0) for n in ("", "b")])
            session.flush()
            ids = [c.id for c in replica.channels], replica.id
        yield sessions, *ids


def random_rows(
    rng: random.Random, channel_ids: list[int], instance_id: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    samples, polled = [], []
    at = T0
    for _ in range(400):
        # Poll times to the microsecond, ~1 s apart, some in the same millisecond's neighbourhood
        # of a bucket edge.
        at += timedelta(microseconds=rng.randint(700_000, 1_300_000))
        for cid in channel_ids:
            samples.append({
                "channel_id": cid, "ts": at, "verdict": 1,
                "lag_s": None if rng.random() < 0.1 else rng.uniform(0, 60),
                "seconds_behind_source": rng.choice([None, rng.randint(0, 60)]),
                "trx_behind": rng.randint(0, 10**9), "apply_rate": rng.uniform(0, 5000),
            })  # fmt: skip
        polled.append({
            "instance_id": instance_id, "ts": at, "reachable": True,
            "round_trip_s": rng.uniform(0, 0.01), "commits_per_s": rng.uniform(0, 9999),
        })  # fmt: skip
    return samples, polled


def as_exported(samples: list[dict[str, Any]], polled: list[dict[str, Any]]) -> dict[Any, Any]:
    """The rows as the raw-series store holds them once it has parsed their lines, as
    VictoriaMetrics does (<measurement>_<field>): (series name, key) → [(ms, value)]."""
    held: dict[Any, list[tuple[int, float]]] = {}
    for row in samples:
        lines = series_lines(NamedTick({}, {}, {row["channel_id"]: row}, {}, {}))
        parse(lines, held)
    for row in polled:
        parse(series_lines(NamedTick({}, {}, {}, {row["instance_id"]: row}, {})), held)
    return held


def parse(lines: Iterable[str], held: dict[Any, list[tuple[int, float]]]) -> None:
    for line in lines:
        head, fields, at = line.split(" ")
        measurement, tag = head.split(",")
        key = int(tag.split("=")[1])
        for field in fields.split(","):
            name, value = field.split("=")
            held.setdefault((f"{measurement}_{name}", key), []).append((int(at), float(value)))


def test_a_line_per_poll_leaves_out_what_the_poll_did_not_have() -> None:
    row = {"ts": T0 + timedelta(microseconds=1_999), "lag_s": 1.23456, "trx_behind": 7,
           "seconds_behind_source": None, "apply_rate": None}  # fmt: skip
    (line,) = series_lines(NamedTick({}, {}, {12: row}, {}, {}))
    at = to_micros(T0) // 1000 + 1  # floored to its millisecond
    assert line == f"lagscope_raw,channel_id=12 lag_s=1.235,trx_behind=7.0,ts_micros=999 {at}"
    assert encode([line, line]) == f"{line}\n{line}\n".encode()
    # A server that answered nothing the store charts makes no line at all.
    assert list(series_lines(NamedTick({}, {}, {}, {3: {"ts": T0, "reachable": False}}, {}))) == []


@pytest.mark.parametrize("seed", range(4))
def test_store_buckets_equal_sql_buckets(
    store: tuple[sessionmaker[Session], list[int], int], seed: int
) -> None:
    sessions, channel_ids, instance_id = store
    rng = random.Random(seed)
    samples, polled = random_rows(rng, channel_ids, instance_id)
    with sessions() as session, session.begin():
        session.execute(insert(Sample), samples)
        session.execute(insert(InstanceSample), polled)
    held = as_exported(samples, polled)
    # Whole milliseconds, as the API's ranges are (the store keeps milliseconds).
    end = samples[-1]["ts"].replace(microsecond=samples[-1]["ts"].microsecond // 1000 * 1000)
    compared = 0
    with sessions() as session:
        for points in (1, 7, 50, 400, 2000):
            for stored in SERIES:
                metric = METRICS[stored.name]
                raw = metric.sources[0]
                keys = channel_ids if metric.per == "channel" else [instance_id]
                # A range starting between polls, at a whole millisecond as the API's are.
                start = T0 + timedelta(milliseconds=rng.randint(0, 60_000))
                plan = plan_of(start, end, points)
                sql: dict[int, list[Point]] = {}
                _merge_buckets(_sql_buckets(session, raw, plan, keys, plan.lo_us), sql)
                from_store: dict[int, list[Point]] = {}
                for key in keys:
                    exported = held.get((metric_name(stored.name), key), [])
                    found = bucketed(exported, _scale(raw.avg), plan, plan.lo_us)
                    _merge_buckets(((key, p, t) for p, t in found), from_store)
                assert from_store == sql, (stored.name, points)
                compared += sum(len(v) for v in sql.values())
    assert compared > 5_000
