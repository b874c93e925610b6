"""PostgreSQL's day partitions of the raw tables (migration prt20a000001, ingest/partitions.py).

On a throwaway PostgreSQL (``postgres.py``; never the machine's own server), each test gets a
database of its own, cloned from a template that holds an inventory (one cluster, two replicas
with a channel each) at the revision *before* partitioning. Rows are written as the worker writes
them (``insert(Sample)`` executemany), then the migration, the retention job or the series query
runs, and what the catalog and the tables hold is read back: which partition each row is in
(``tableoid``), which partitions exist, and every row, column for column.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from alembic import command
from sqlalchemy import Engine, insert, text
from sqlalchemy.orm import Session, sessionmaker

from lagscope.config import Retention
from lagscope.db import make_engine, make_session_factory
from lagscope.history.series import query_series
from lagscope.ingest import rollups
from lagscope.ingest.partitions import DAYS_AHEAD, partition_name
from lagscope.ingest.rollups import enforce_retention
from lagscope.models import ApplierWorkerSample, Channel, InstanceSample, Sample
from lagscope.store_setup import alembic_config, upgrade
from tests.factories import make_cluster

try:
    from .postgres import ThrowawayPostgres
except ImportError:  # tests/integration without __init__.py: pytest put its dir on sys.path
    from postgres import ThrowawayPostgres  # type: ignore[import-not-found,no-redef]

pytestmark = pytest.mark.integration

BEFORE = "eps19b000001"  # the revision before the raw tables were partitioned
PARTITIONED = "prt20a000001"
RAW = ("samples", "instance_samples", "applier_worker_samples")
DAY = timedelta(days=1)
TEMPLATE = "lagscope_before_partitions"


@dataclass(frozen=True)
class Store:
    url: str
    engine: Engine
    sessions: sessionmaker[Session]
    channels: tuple[int, int]
    instances: tuple[int, int]


def _admin(server: ThrowawayPostgres, sql: str) -> None:
    with psycopg.connect(server.conninfo("postgres"), autocommit=True) as conn:
        conn.execute(sql)


def _url(server: ThrowawayPostgres, database: str) -> str:
    return server.url.rsplit("/", 1)[0] + f"/{database}"


@pytest.fixture(scope="module")
def template(postgres: ThrowawayPostgres) -> tuple[tuple[int, int], tuple[int, int]]:
    """The template store: inventory written through the ORM at head (the models are head's),
    then the schema downgraded to BEFORE; returns its channel and instance ids."""
    _admin(postgres, f'CREATE DATABASE "{TEMPLATE}"')
    url = _url(postgres, TEMPLATE)
    upgrade(url)
    engine = make_engine(url)
    try:
        with make_session_factory(engine)() as session, session.begin():
            _, named = make_cluster(
                session, "fleet", [("src", 3306, "source"), ("r1", 3307), ("r2", 3308)]
            )
            first_seen = datetime.now(UTC) - timedelta(days=400)
            replicas = (named["r1"], named["r2"])
            for replica in replicas:
                replica.channels.append(Channel(name="", first_seen_at=first_seen))
            session.flush()
            channels = (replicas[0].channels[0].id, replicas[1].channels[0].id)
            instances = (replicas[0].id, replicas[1].id)
    finally:
        engine.dispose()
    command.downgrade(alembic_config(url), BEFORE)
    assert _relkind(url, "samples") == "r", "the template must hold the tables unpartitioned"
    return channels, instances


@pytest.fixture
def store(
    postgres: ThrowawayPostgres, template: tuple[tuple[int, int], tuple[int, int]]
) -> Iterator[Store]:
    name = f"lagscope_{secrets.token_hex(4)}"
    _admin(postgres, f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
    url = _url(postgres, name)
    engine = make_engine(url)
    try:
        yield Store(url, engine, make_session_factory(engine), *template)
    finally:
        engine.dispose()
        _admin(postgres, f'DROP DATABASE "{name}" WITH (FORCE)')


# --- helpers --------------------------------------------------------------------------------


def _relkind(url: str, table: str) -> str:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            kind = conn.scalar(text("SELECT relkind FROM pg_class WHERE oid = to_regclass(:t)"),
                               {"t": table})  # fmt: skip
            return str(kind)
    finally:
        engine.dispose()


def today_start() -> datetime:
    now = datetime.now(UTC)
    return datetime(now.year, now.month, now.day, tzinfo=UTC)


def day_number(at: datetime) -> int:
    return int(at.timestamp() // 86_400)


def write_samples(store: Store, times: list[datetime]) -> None:
    """One sample per channel at each time, as the worker writes them: one executemany."""
    rows = [
        {"channel_id": cid, "ts": ts, "verdict": 1, "lag_s": 0.25 + n, "trx_behind": n,
         "apply_rate": 12.5, "sql_running": True, "disagreement": False}
        for n, ts in enumerate(times) for cid in store.channels
    ]  # fmt: skip
    with store.sessions() as session, session.begin():
        session.execute(insert(Sample), rows)


def write_instance_rows(store: Store, times: list[datetime]) -> None:
    instance_rows = [
        {"instance_id": iid, "ts": ts, "reachable": True, "round_trip_s": 0.001 * (n + 1),
         "commits_per_s": 100.0 + n}
        for n, ts in enumerate(times) for iid in store.instances
    ]  # fmt: skip
    worker_rows = [
        {"instance_id": store.instances[0], "ts": ts, "channel": "", "workers": 4, "busy": 2,
         "busy_mask": b"\x05", "active": 3, "active_mask": b"\x07", "errors": 0}
        for ts in times
    ]  # fmt: skip
    with store.sessions() as session, session.begin():
        session.execute(insert(InstanceSample), instance_rows)
        session.execute(insert(ApplierWorkerSample), worker_rows)


def all_rows(store: Store, table: str) -> list[tuple[Any, ...]]:
    with store.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(f"SELECT * FROM {table} ORDER BY 1, 2, 3"))]


def where_rows_are(store: Store, table: str) -> dict[int, str]:
    """ts (µs) → the partition holding the row (its table's name)."""
    sql = f"SELECT DISTINCT ts, tableoid::regclass::text FROM {table}"
    with store.engine.connect() as conn:
        return {ts: name for ts, name in conn.execute(text(sql))}


def partition_names(store: Store, table: str) -> set[str]:
    sql = (
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = CAST(:t AS regclass)"
    )
    with store.engine.connect() as conn:
        return set(conn.scalars(text(sql), {"t": table}))


def expected_home(table: str, ts: datetime) -> str:
    return partition_name(table, day_number(ts))


def us(at: datetime) -> int:
    return int(at.timestamp()) * 1_000_000 + at.microsecond


# --- the migration --------------------------------------------------------------------------


def test_migration_partitions_a_store_with_data_and_keeps_every_row(store: Store) -> None:
    today = today_start()
    old = today - 40 * DAY  # long expired, still there: the migration does not apply retention
    far = today + (DAYS_AHEAD + 7) * DAY  # a clock days ahead: beyond the days made ahead
    times = [old + timedelta(hours=3, microseconds=7)]
    times += [today - d * DAY + timedelta(hours=h) for d in (2, 1, 0) for h in (0, 6, 23.999)]
    times += [far]
    write_samples(store, times)
    write_instance_rows(store, times)
    before = {table: all_rows(store, table) for table in RAW}
    assert all(len(rows) >= len(times) for rows in before.values())

    upgrade(store.url, PARTITIONED)

    for table in RAW:
        assert _relkind(store.url, table) == "p", f"{table} is not partitioned"
        assert all_rows(store, table) == before[table], f"{table}: rows changed in the copy"
        homes = where_rows_are(store, table)
        for ts in times:
            want = f"{table}_default" if ts == far else expected_home(table, ts)
            assert homes[us(ts)] == want, f"{table}: the row at {ts} is in {homes[us(ts)]}"
        days_ahead = {expected_home(table, today + d * DAY) for d in range(DAYS_AHEAD + 1)}
        assert days_ahead <= partition_names(store, table), "days ahead were not made"

    command.downgrade(alembic_config(store.url), BEFORE)
    for table in RAW:
        assert _relkind(store.url, table) == "r"
        assert all_rows(store, table) == before[table], f"{table}: rows changed on the way back"
        assert not partition_names(store, table)


def test_inserts_land_in_their_days_partition(store: Store) -> None:
    upgrade(store.url)
    today = today_start()
    times = [today + timedelta(hours=1), today + DAY + timedelta(seconds=1.5),
             today + (DAYS_AHEAD + 2) * DAY]  # fmt: skip
    write_samples(store, times)
    homes = where_rows_are(store, "samples")
    assert homes == {
        us(times[0]): expected_home("samples", times[0]),
        us(times[1]): expected_home("samples", times[1]),
        us(times[2]): "samples_default",  # no partition that far ahead: kept, never refused
    }
    with store.sessions() as session:  # and read back through the parent like any row
        got = session.scalars(Sample.__table__.select().with_only_columns(Sample.ts)).all()
    assert sorted(got) == sorted(times * 2)


# --- the retention job's partition maintenance ---------------------------------------------


RETENTION = Retention(raw_days=3.0, minute_days=60.0, hour_days=730.0)


def test_maintenance_makes_days_ahead_and_moves_rows_out_of_the_default(store: Store) -> None:
    upgrade(store.url)
    today = today_start()
    stranded = today + (DAYS_AHEAD + 2) * DAY + timedelta(hours=5)  # no partition yet
    write_samples(store, [stranded])
    assert set(where_rows_are(store, "samples").values()) == {"samples_default"}

    later = time.time() + 2 * 86_400  # two days on: the job makes days up to later + DAYS_AHEAD
    with store.sessions() as session, session.begin():
        enforce_retention(session, later, RETENTION)

    later_day = day_number(datetime.fromtimestamp(later, UTC))
    for table in RAW:
        names = partition_names(store, table)
        for day in range(later_day, later_day + DAYS_AHEAD + 1):
            assert partition_name(table, day) in names, f"{table}: day {day} not made ahead"
    assert where_rows_are(store, "samples") == {us(stranded): expected_home("samples", stranded)}
    assert all_rows(store, "samples_default") == []


def test_retention_drops_whole_expired_days_and_keeps_recent_rows(store: Store) -> None:
    now = time.time()
    today = today_start()
    times = [today - d * DAY + timedelta(hours=h) for d in range(6, -1, -1) for h in (1, 13)]
    times.append(datetime.fromtimestamp(now - 3 * 86_400 - 1, UTC))  # expired, on the edge day
    write_samples(store, times)
    write_instance_rows(store, times)
    upgrade(store.url)
    lost = today - 20 * DAY  # a day with no partition: in the default, long expired
    future = today + (DAYS_AHEAD + 5) * DAY  # in the default, not expired
    write_samples(store, [lost, future])

    with store.sessions() as session, session.begin():
        deleted = enforce_retention(session, now, RETENTION)

    cutoff = datetime.fromtimestamp(now - 3 * 86_400, UTC)
    edge = day_number(cutoff)  # the day the cutoff falls in: kept until it has wholly expired
    assert deleted["samples"] == len(store.channels), "the expired default rows"
    for table in RAW:
        names = partition_names(store, table)
        for day in range(day_number(times[0]), day_number(today) + 1):
            assert (partition_name(table, day) in names) == (day >= edge), (table, day)
        kept = {ts for ts in times if day_number(ts) >= edge}
        if table == "samples":
            kept.add(future)
        assert set(where_rows_are(store, table)) == {us(ts) for ts in kept}, table
    assert any(ts < cutoff for ts in kept), "no expired row on the edge day was kept"

    with store.sessions() as session, session.begin():  # a second run: nothing more to do
        assert enforce_retention(session, now, RETENTION)["samples"] == 0
    assert len(where_rows_are(store, "samples")) == len(kept | {future})


def test_a_partition_the_job_cannot_lock_waits_for_the_next_run(store: Store) -> None:
    """A long reader holds the table: the drop gives up after the lock timeout instead of
    queueing every poll behind it, the job still commits, and the next run drops it. (Without
    the lock timeout the job would wait on this test's own reader until pytest-timeout.)"""
    now = time.time()
    expired = today_start() - 10 * DAY
    write_samples(store, [expired])
    upgrade(store.url)
    doomed = partition_name("samples", day_number(expired))
    assert doomed in partition_names(store, "samples")

    reader = store.engine.connect()
    try:
        reader.execute(text("SELECT count(*) FROM samples"))  # holds ACCESS SHARE till rollback
        with store.sessions() as session, session.begin():
            enforce_retention(session, now, RETENTION)
        assert doomed in partition_names(store, "samples")
    finally:
        reader.rollback()
        reader.close()
    with store.sessions() as session, session.begin():
        enforce_retention(session, now, RETENTION)
    assert doomed not in partition_names(store, "samples")


# --- the series query -----------------------------------------------------------------------


def test_series_answers_the_same_on_a_partitioned_store(store: Store) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    start = now - 2 * DAY
    times = [start + timedelta(seconds=s) for s in range(0, 2 * 86_400, 30)]
    write_samples(store, times)
    write_instance_rows(store, times[::10])
    with store.sessions() as session, session.begin():  # rollups as the job makes them
        rollups._refresh_minutes(session, int(start.timestamp()), int(now.timestamp()) - 120)
        rollups._refresh_hours(session, int(start.timestamp()), int(now.timestamp()) - 7200)

    def answers() -> list[Any]:
        cases = [
            ("lag_s", start, now, 500, "channel"),  # 1-minute rollups, raw tail
            ("lag_s", start, now, 20, "channel"),  # hourly rollups, minute and raw tails
            ("trx_behind", now - timedelta(hours=1), now, 500, "channel"),  # raw
            ("commits_per_s", start, now, 300, "instance"),  # instance_samples
        ]
        got = []
        with store.sessions() as session:
            for metric, lo, hi, points, per in cases:
                keys = {"channel_ids": store.channels} if per == "channel" else {
                    "instance_ids": store.instances}  # fmt: skip
                series = query_series(session, metric, lo, hi, points=points, now=now,
                                      retention=RETENTION, **keys)  # fmt: skip
                assert series and all(s.points for s in series), (metric, points)
                got.append(series)
        return got

    before = answers()
    upgrade(store.url)
    assert _relkind(store.url, "samples") == "p"
    assert answers() == before
