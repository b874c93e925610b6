"""The one migration chain on every store backend: SQLite, PostgreSQL and MariaDB.

For each backend: ``alembic upgrade head``, ``alembic check`` (the models and the migrated schema
agree, as that backend reflects them), one row per table through the ORM read back equal (epoch
microseconds and scaled integers survive the trip), ``downgrade base`` leaves no table, and
``upgrade head`` works again. Alembic runs as a subprocess, as an operator runs it.

No server already on the machine is used: PostgreSQL is a throwaway cluster this module starts
(see ``postgres.py``), MariaDB is the lab's source with a database of its own, dropped at the end.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import URL, func, inspect, make_url, select, text
from sqlalchemy.orm import Session

from lagscope.db import make_engine, make_session_factory
from lagscope.models import (
    Annotation,
    Base,
    Channel,
    Cluster,
    Instance,
    InstanceSample,
    ParamChange,
    ParamValue,
    Sample,
    SampleRollup1h,
    SampleRollup1m,
    SecretKeySalt,
)

try:
    from .postgres import ThrowawayPostgres
except ImportError:  # tests/integration without __init__.py: pytest put its dir on sys.path
    from postgres import ThrowawayPostgres  # type: ignore[import-not-found,no-redef]

pytestmark = pytest.mark.integration

REPO_ROOT = Path(__file__).resolve().parents[2]
# Each alembic run is one Python start plus a handful of DDL statements; two minutes is far
# beyond a healthy run on 2 shared cores and still ends a wedged server before pytest-timeout.
ALEMBIC_TIMEOUT_S = 120.0
MODEL_TABLES = set(Base.metadata.tables)
# Microseconds on purpose: EpochMicros must keep them on every backend.
AT = datetime(2026, 11, 21, 22, 6, 40, 688_761, tzinfo=UTC)
MICRO = timedelta(microseconds=1)


def plain(url: URL) -> str:
    """The URL as the tools take it. Fixtures hand out ``URL`` objects because their repr hides
    the password, so a failing test's report does not print the lab's admin password."""
    return url.render_as_string(hide_password=False)


def alembic(url: URL, *args: str) -> str:
    """Run ``alembic -x url=… <args>`` from the repo root; fail with its output if it fails."""
    env = {k: v for k, v in os.environ.items() if k != "LAGSCOPE_DATABASE_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "alembic", "-x", f"url={plain(url)}", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=ALEMBIC_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        # pytest.fail, not assert: assertion rewriting would print the argv, password and all.
        pytest.fail(
            f"alembic {' '.join(args)} on {url!r} exited {done.returncode}\n"
            f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}",
            pytrace=False,
        )
    return done.stdout + done.stderr


def table_names(url: URL) -> set[str]:
    """The store's tables, less PostgreSQL's day partitions of the raw tables (the catalog
    lists each partition as a table; test_store_partitions.py tests them)."""
    engine = make_engine(plain(url))
    try:
        with engine.connect() as conn:
            names = set(inspect(conn).get_table_names())
            if conn.dialect.name == "postgresql":
                names -= set(
                    conn.scalars(text("SELECT relname FROM pg_class WHERE relispartition"))
                )
            return names
    finally:
        engine.dispose()


# --- backends -------------------------------------------------------------------------------


@pytest.fixture
def mariadb_url(lab: Any) -> Iterator[URL]:
    """A fresh database on the lab's source (it replicates to the replicas; dropped after)."""
    name = f"lagscope_store_{secrets.token_hex(4)}"
    source = lab.server("source")
    user, password = lab.credentials.admin
    admin = lab.connect("source")
    try:
        with admin.cursor() as cur:
            cur.execute(
                f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
            )
        yield URL.create(
            "mysql+pymysql",
            username=user,
            password=password,
            host=source.host,
            port=source.port,
            database=name,
            query={"charset": "utf8mb4"},
        )
    finally:
        try:
            with admin.cursor() as cur:
                cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        finally:
            admin.close()


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> URL:
    """Backends are resolved lazily, so ``-k sqlite`` neither starts PostgreSQL nor the lab."""
    if request.param == "sqlite":
        return URL.create("sqlite", database=str(tmp_path / "store.db"))
    if request.param == "postgresql":
        server: ThrowawayPostgres = request.getfixturevalue("postgres")
        return make_url(server.url)
    url: URL = request.getfixturevalue("mariadb_url")
    return url


# --- the round trip -------------------------------------------------------------------------


def columns(row: Base) -> dict[str, Any]:
    return {attr.key: getattr(row, attr.key) for attr in inspect(type(row)).column_attrs}


def inventory() -> Cluster:
    """A cluster with one instance and one channel (their rows go in through relationships)."""
    cluster = Cluster(
        name="prod-eu",
        poll_interval_s=1.5,
        extra_params=["max_connections", "innodb_flush_log_at_trx_commit"],
        heartbeat_mode="lagscope",
        heartbeat_interval_s=0.1,
        created_at=AT,
    )
    instance = Instance(
        cluster=cluster,
        name="replica-1",
        host="10.0.0.2",
        user="monitor",
        password_enc="gAAAA…",
        flavor="mariadb",
        server_id=2,
        last_polled_at=AT,
        # Nine significant digits: a single-precision FLOAT column keeps about seven.
        clock_offset_s=-0.0123456789,
        clock_resolution_s=1e-6,
        gtid_progress=2**40 + 7,
        last_counters={"Com_commit": 12_345_678_901, "Binlog_commits": 3},
    )
    Channel(instance=instance, name="", executed_gtids="0-1-42", first_seen_at=AT)
    return cluster


def dependent_rows(cluster_id: int, instance_id: int, channel_id: int) -> list[Base]:
    """One row per remaining table, with values that catch lossy storage (µs, fractions …)."""
    rollup: dict[str, Any] = {
        "channel_id": channel_id,
        "bucket": AT.replace(second=0, microsecond=0),
        "samples": 60,
        "caught_up": 58,
        "last_verdict": 1,
        "lag_min": 0.001,
        "lag_avg": 0.5,
        "lag_max": 2_000_000.999,  # ~23 days in ms still fits the INTEGER column
        "trx_behind_avg": 3.5,
        "trx_behind_max": 2**40,
    }
    return [
        Sample(
            channel_id=channel_id,
            ts=AT,
            verdict=2,
            lag_s=30 * 86_400 + 0.25,  # a month behind: more than 2^31 ms
            seconds_behind_source=1,
            heartbeat_lag_s=1.2345678,  # stored as ms: comes back 1.235
            trx_behind=2**33,
            apply_rate=12.3456,  # milli-trx/s in a BIGINT: comes back 12.346
            sql_running=True,
            disagreement=False,
        ),
        SampleRollup1m(**rollup),
        SampleRollup1h(**rollup),
        InstanceSample(
            instance_id=instance_id,
            ts=AT + MICRO,
            reachable=True,
            round_trip_s=0.000321,
            clock_offset_s=-0.0000123456,  # µs scale: comes back -0.000012
            data_written_per_s=5_000_000_000.4,  # scale 1 in a BIGINT: comes back 5e9
            semi_sync_on=False,
        ),
        ParamValue(instance_id=instance_id, name="sync_binlog", value="1", since=AT),
        ParamChange(
            instance_id=instance_id,
            name="sync_binlog",
            old_value="0",
            new_value="1",
            last_old_at=AT - MICRO,
            first_new_at=AT,
        ),
        Annotation(
            cluster_id=cluster_id,
            instance_id=instance_id,
            channel_id=channel_id,
            starts_at=AT,
            ends_at=AT + timedelta(minutes=5, microseconds=1),
            text="raised sync_binlog — lag ✓ after 3 min",
            tags=["tuning", "durability", "ü"],
            author="dba",
            created_at=AT,
        ),
    ]


# What scaled columns keep of the values above: each rounded to its column's scale.
ROUNDED = {
    (Sample, "heartbeat_lag_s"): 1.235,
    (Sample, "apply_rate"): 12.346,
    (InstanceSample, "clock_offset_s"): -0.000012,
    (InstanceSample, "data_written_per_s"): 5_000_000_000.0,
}


def round_trip(url: URL) -> None:
    """Write every row, read each back in a fresh session, compare column by column."""
    engine = make_engine(plain(url))
    try:
        factory = make_session_factory(engine)
        with factory() as session:
            cluster = inventory()
            session.add(cluster)
            session.flush()  # ids and column defaults are now filled in
            instance = cluster.instances[0]
            channel = instance.channels[0]
            rows = [cluster, instance, channel]
            rows += dependent_rows(cluster.id, instance.id, channel.id)
            session.add_all(rows[3:])
            session.flush()
            written = [(type(row), inspect(row).identity, columns(row)) for row in rows]
            session.commit()
        with factory() as session:
            for model, identity, expected in written:
                got = session.get_one(model, identity)
                for (rounded_model, key), value in ROUNDED.items():
                    if issubclass(model, rounded_model) and key in expected:
                        expected[key] = value
                assert columns(got) == expected, f"{model.__name__} changed on the round trip"
                assert all(
                    v.tzinfo is UTC for v in columns(got).values() if isinstance(v, datetime)
                ), f"{model.__name__}: a datetime came back without UTC"
        cascade_from_cluster(factory())
    finally:
        engine.dispose()


def cascade_from_cluster(session: Session) -> None:
    """Deleting the cluster must empty every table: ON DELETE CASCADE works on this backend."""
    with session:
        session.delete(session.scalars(select(Cluster)).one())
        session.commit()
        for mapper in Base.registry.mappers:
            count = session.scalar(select(func.count()).select_from(mapper.class_))
            kept = STORE_ROWS.get(mapper.class_, 0)
            assert count == kept, f"{mapper.class_.__name__}: {count} rows left after the cascade"


# Rows of the store itself, made by the migrations and belonging to no cluster: the secret-key
# salt (one row, random per store).
STORE_ROWS: dict[type, int] = {SecretKeySalt: 1}


# --- the test -------------------------------------------------------------------------------


def test_migrations_round_trip(store_url: URL) -> None:
    alembic(store_url, "upgrade", "head")
    assert table_names(store_url) == MODEL_TABLES | {"alembic_version"}

    checked = alembic(store_url, "check")
    assert "No new upgrade operations detected" in checked, checked

    round_trip(store_url)

    alembic(store_url, "downgrade", "base")
    assert table_names(store_url) <= {"alembic_version"}, "downgrade base left tables behind"

    alembic(store_url, "upgrade", "head")
    assert table_names(store_url) == MODEL_TABLES | {"alembic_version"}
    assert "No new upgrade operations detected" in alembic(store_url, "check")
