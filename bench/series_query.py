"""How fast ``GET /api/v1/series`` answers over a realistically filled store.

Generated data, written straight into the tables with bulk inserts (SQLite: ``executemany`` in
batches of 50,000 rows; PostgreSQL: ``COPY``), rows in time order as the worker writes them:

- ``--channels`` channels (default 20), one per replica instance;
- raw samples every second for the last 3 days (the default raw retention): 5.2 M rows;
- 1-minute rollups for the last 30 days: 864,000 rows;
- 1-hour rollups for the last 2 years: 350,400 rows.

The rollups stop where the rollup job would be (the last complete minute and hour), so queries
that end "now" also read the tail from the finer tables, as they do in production.

Then, per backend (a temporary SQLite file, and a throwaway PostgreSQL started with
``tests/integration/postgres.py`` unless ``--postgres-url`` is given or ``--no-postgres``), for
each case: the service function :func:`lagscope.history.series.query_series` in a fresh session
(``--runs`` times) and the same query as one HTTP round trip through the real API server (uvicorn
on loopback, bearer token, JSON decoded by the client). Prints p50/p95/max in ms, the table
chosen, the bucket width and the points per series; the service's CPU time in this process is
printed beside its wall time because the box is shared (on PostgreSQL it leaves out the
server's share). PostgreSQL is ``VACUUM ANALYZE``d after the load, as autovacuum would; SQLite
gets no ``ANALYZE`` (Lagscope never runs one). Figures are printed, never asserted.

    .venv/bin/python bench/series_query.py [--runs 20] [--no-postgres]
    .venv/bin/python bench/series_query.py --postgres-url postgresql+psycopg://u@127.0.0.1/db

Generating and loading takes about 1.5 min per backend on this 2-core box.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # for tests.integration (the API server and PostgreSQL)

from tests.integration.api_stack import api_server  # noqa: E402

from lagscope.db import make_engine, make_session_factory  # noqa: E402
from lagscope.history.series import query_series  # noqa: E402
from lagscope.inventory import instances as inventory  # noqa: E402
from lagscope.models import Channel  # noqa: E402
from lagscope.security.secret_box import SecretBox  # noqa: E402
from lagscope.store_setup import upgrade  # noqa: E402

MINUTE_US, HOUR_US, DAY_US = 60_000_000, 3_600_000_000, 86_400_000_000
BATCH = 50_000
SAMPLE_COLUMNS = (
    "channel_id, ts, verdict, lag_s, lag_source, seconds_behind_source, trx_behind, disagreement"
)
ROLLUP_COLUMNS = (
    "channel_id, bucket, samples, caught_up, last_verdict, lag_min, lag_avg, lag_max, lag_last, "
    "trx_behind_min, trx_behind_avg, trx_behind_max, trx_behind_last"
)


@dataclass(frozen=True)
class Case:
    name: str
    span: timedelta
    points: int


CASES = (
    Case("30 days × 20 channels, 500 points", timedelta(days=30), 500),
    Case("1 hour raw × 20 channels, 500 points", timedelta(hours=1), 500),
    Case("2 years × 20 channels, 500 points", timedelta(days=730), 500),
    # The 1-minute table's worst case: 30 days of it (864,000 rows) at 22-minute buckets.
    Case("30 days × 20 channels, 2000 points", timedelta(days=30), 2000),
)


def build_channels(sessions: sessionmaker[Session], count: int, now: datetime) -> list[int]:
    box = SecretBox("bench-secret", b"unpolled-salt")
    with sessions() as session, session.begin():
        cluster = inventory.create_cluster(session, "bench-series")
        inventory.add_instance(
            session, box, cluster, "source", "10.0.0.1", 3306, "m", "pw", "source"
        )
        ids = []
        for n in range(count):
            replica = inventory.add_instance(
                session, box, cluster, f"r{n}", "10.0.1.1", 3306, "m", ""
            )
            channel = Channel(name="", first_seen_at=now - timedelta(days=800))
            replica.channels.append(channel)
            session.flush()
            ids.append(channel.id)
    return ids


def raw_rows(
    channels: list[int], start_us: int, end_us: int, rng: random.Random
) -> Iterator[tuple]:
    """One row per channel per second; lag wanders between 0 and a few minutes (ms)."""
    lag = dict.fromkeys(channels, 500)
    for ts in range(start_us, end_us, 1_000_000):
        for cid in channels:
            lag[cid] = max(0, lag[cid] + rng.randint(-300, 310))
            sbm = lag[cid] // 1000
            yield (cid, ts, 0 if sbm == 0 else 2, lag[cid], 2, sbm, lag[cid] // 5, False)


def rollup_rows(
    channels: list[int], start_us: int, end_us: int, step_us: int, rng: random.Random
) -> Iterator[tuple]:
    samples = step_us // 1_000_000
    for bucket in range(start_us, end_us, step_us):
        for cid in channels:
            low = rng.randint(0, 20_000)
            high = low + rng.randint(0, 60_000)
            avg = (low + high) // 2
            yield (cid, bucket, samples, samples // 2, 0, low, avg, high, avg,
                   low // 5, avg * 200, high // 5, avg // 5)  # fmt: skip


def load(engine: Engine, table: str, columns: str, rows: Iterator[tuple]) -> int:
    """Bulk-insert rows through the driver: executemany in batches, or COPY on PostgreSQL."""
    raw = engine.raw_connection()
    count = 0
    try:
        cursor = raw.cursor()
        if engine.dialect.name == "postgresql":
            with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
                    count += 1
        else:
            marks = ", ".join("?" for _ in columns.split(","))
            insert = f"INSERT INTO {table} ({columns}) VALUES ({marks})"  # noqa: S608 - ours
            batch: list[tuple] = []
            for row in rows:
                batch.append(row)
                if len(batch) == BATCH:
                    cursor.executemany(insert, batch)
                    count += len(batch)
                    batch.clear()
            cursor.executemany(insert, batch)
            count += len(batch)
        raw.commit()
    finally:
        raw.close()
    return count


def fill(engine: Engine, channels: list[int], now_us: int) -> None:
    rng = random.Random(7)
    minute_end = (now_us - 5_000_000) // MINUTE_US * MINUTE_US  # the job's grace: 5 s
    hour_end = (now_us - 5_000_000) // HOUR_US * HOUR_US
    plan: list[tuple[str, str, Callable[[], Iterator[tuple]]]] = [
        ("samples", SAMPLE_COLUMNS, lambda: raw_rows(channels, now_us - 3 * DAY_US, now_us, rng)),
        ("samples_1m", ROLLUP_COLUMNS,
         lambda: rollup_rows(channels, minute_end - 30 * DAY_US, minute_end, MINUTE_US, rng)),
        ("samples_1h", ROLLUP_COLUMNS,
         lambda: rollup_rows(channels, hour_end - 730 * DAY_US, hour_end, HOUR_US, rng)),
    ]  # fmt: skip
    for table, columns, rows in plan:
        began = time.perf_counter()
        count = load(engine, table, columns, rows())
        print(f"  {table}: {count:,} rows in {time.perf_counter() - began:.1f} s")
    if engine.dialect.name == "postgresql":
        # What autovacuum does after a bulk load; without statistics the planner guesses.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE"))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def figures(ms: list[float]) -> str:
    return (
        f"p50 {statistics.median(ms):7.1f}  p95 {percentile(ms, 0.95):7.1f}  max {max(ms):7.1f} ms"
    )


def run_cases(
    engine: Engine, url: str, channels: list[int], now: datetime, args: argparse.Namespace
) -> None:
    sessions = make_session_factory(engine)
    with api_server(url) as api, api.client() as client:
        for case in CASES:
            start, end = now - case.span, now
            service_ms: list[float] = []
            cpu_ms: list[float] = []
            result: list[Any] = []
            for _ in range(args.runs):
                began, cpu_began = time.perf_counter(), time.process_time()
                with sessions() as session:
                    result = query_series(
                        session, "lag_s", start, end, channel_ids=channels, points=case.points
                    )
                service_ms.append((time.perf_counter() - began) * 1000)
                cpu_ms.append((time.process_time() - cpu_began) * 1000)
            params: dict[str, Any] = {
                "metric": "lag_s",
                "channel_id": channels,
                "start": start.isoformat(),
                "end": end.isoformat(),
                "points": case.points,
            }
            http_ms = []
            for _ in range(args.runs):
                began = time.perf_counter()
                response = client.get("/api/v1/series", params=params)
                response.raise_for_status()
                response.json()
                http_ms.append((time.perf_counter() - began) * 1000)
            counts = sorted({len(s.points) for s in result})
            first = result[0]
            print(f"\n{case.name}: table {first.resolution}, bucket {first.bucket_ms / 1000:g} s, "
                  f"points per series {counts[0]}–{counts[-1]}, "
                  f"{len(response.content) / 1e6:.2f} MB JSON")  # fmt: skip
            print(f"  service ({args.runs} runs): {figures(service_ms)}; "
                  f"this process's CPU p50 {statistics.median(cpu_ms):.1f} ms")  # fmt: skip
            print(f"  HTTP    ({args.runs} runs): {figures(http_ms)}")


def bench(url: str, label: str, args: argparse.Namespace) -> None:
    print(f"\n== {label}")
    upgrade(url)
    engine = make_engine(url)
    try:
        now = datetime.now(UTC).replace(microsecond=0)
        channels = build_channels(make_session_factory(engine), args.channels, now)
        fill(engine, channels, int(now.timestamp()) * 1_000_000)
        run_cases(engine, url, channels, now, args)
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per case")
    parser.add_argument("--channels", type=int, default=20)
    parser.add_argument("--postgres-url", help="a PostgreSQL database to fill (must be empty)")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    args = parser.parse_args()
    if not args.no_sqlite:
        with tempfile.TemporaryDirectory(prefix="lagscope-series-") as tmp:
            bench(f"sqlite:///{Path(tmp) / 'store.db'}", "SQLite (WAL)", args)
    if args.no_postgres:
        return
    if args.postgres_url:
        bench(args.postgres_url, "PostgreSQL", args)
        return
    from tests.integration.postgres import start_postgres

    server = start_postgres()
    try:
        bench(server.url, f"PostgreSQL (throwaway, {server.bin_dir.parent.name})", args)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
