"""How fast the store takes raw samples, and how many bytes each one costs on disk.

No servers: each cluster (one MariaDB 10.11 source and ``--replicas`` replicas) is simulated
tick by tick — the source's write rate wanders with bursts now and then, each replica applies at
its own capacity so its lag and GTID positions rise and fall, a replica is unreachable for a few
ticks once in a while, and a replica's ``slave_parallel_threads`` is changed now and then (which
raises its capacity). Every tick of every cluster goes through the real write path as the worker
runs it: a new session, the cluster loaded as ``poll_cluster`` loads it, ``record_tick``, commit.
Building the synthetic readings is not timed; the load, the write and the commit are.

Prints, per backend (a temporary SQLite file; PostgreSQL too with ``--postgres-url``, or with
``--postgres`` a throwaway server started by ``tests/integration/postgres.py``, never the
machine's own):

- ingest: raw samples/s written and ms per cluster tick (mean, p50, p99);
- storage: bytes per row of ``samples`` and ``instance_samples`` (target: ≤ 60 bytes
  per raw sample on SQLite). SQLite: pages of the table and its indexes from the ``dbstat``
  virtual table (``pgsize``: whole pages, free space included, i.e. what the file grows by),
  with the payload bytes beside it; PostgreSQL: ``pg_total_relation_size`` (heap, indexes,
  TOAST, free space map) over the row count, summed over the day partitions where the table
  is partitioned (migration prt20a000001).

How PostgreSQL gets the rows: SQLAlchemy sends ``insert(Sample)`` with a list of rows (no
RETURNING) to psycopg 3's ``executemany``, which pipelines the statements (one round trip, one
execution per row); ``--pg-insert values`` makes SQLAlchemy's "insertmanyvalues" render one
multi-row ``INSERT … VALUES (…), (…)`` instead, to compare the two on the same run.

The default (20 clusters × 500 ticks: 40,000 raw samples) takes about 45 s on this 2-core box
(~4 ms of CPU per cluster tick); ``--ticks 2000`` about three minutes, with the same bytes per
row within a few percent. Figures are printed, never asserted. The PostgreSQL run works in a
schema of its own (``search_path`` in the URL), dropped at the end, so the database given is
left as it was.

    .venv/bin/python bench/store_ingest.py [--ticks N] [--clusters N]
    .venv/bin/python bench/store_ingest.py --postgres-url postgresql+psycopg://u:p@127.0.0.1/db
    .venv/bin/python bench/store_ingest.py --postgres [--pg-insert values] [--no-sqlite]
"""

from __future__ import annotations

import argparse
import math
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine, make_url, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, selectinload, sessionmaker

from lagscope.collectors.flavor import ServerFlavor
from lagscope.collectors.params import TRACKED_PARAMS
from lagscope.collectors.snapshot import (
    ChannelStatus,
    ClockReading,
    GtidState,
    InstanceSnapshot,
    IoState,
    SourceStatus,
)
from lagscope.config import Settings
from lagscope.db import make_engine, make_session_factory
from lagscope.ingest.reader import PollResult
from lagscope.ingest.recording import record_tick
from lagscope.inventory import instances as inventory
from lagscope.models import Cluster, Instance, InstanceSample, Sample
from lagscope.security.secret_box import SecretBox
from lagscope.store_setup import upgrade

FLAVOR = ServerFlavor("mariadb", (10, 11, 6), "10.11.6-MariaDB-log", "MariaDB Server")
# Ticks start here, one second apart (the default poll interval).
START_S = datetime(2026, 11, 21, tzinfo=UTC).timestamp()
# The worker reads parameters every LAGSCOPE_PARAMS_EVERY_S (polls in between skip them); at
# one poll a second, every that-many ticks.
PARAMS_EVERY_TICKS = max(1, round(Settings.model_fields["params_every_s"].default))
# Every tracked MariaDB variable, so a changed one makes record_tick rewrite a realistic set.
PARAMS = {p.mariadb[0]: "1" for p in TRACKED_PARAMS if p.mariadb} | {
    "slave_parallel_threads": "4",
    "slave_parallel_mode": "optimistic",
    "binlog_commit_wait_usec": "100000",
}


@dataclass(slots=True)
class Counters:
    """Status counters that only go up; enough of them for every instance rate to be computed."""

    commits: int = 0
    groups: int = 0
    fsyncs: int = 0
    data_written: int = 0
    log_written: int = 0

    def advance(self, trx: int) -> dict[str, int]:
        self.commits += trx
        self.groups += max(1, trx // 3)
        self.fsyncs += max(1, trx // 3) + 2
        self.data_written += trx * 16_384
        self.log_written += trx * 1_200
        return {
            "Binlog_commits": self.commits,
            "Binlog_group_commits": self.groups,
            "Handler_commit": self.commits * 2,
            "Com_commit": self.commits,
            "Innodb_data_fsyncs": self.fsyncs,
            "Innodb_data_written": self.data_written,
            "Innodb_os_log_written": self.log_written,
            "Innodb_dblwr_pages_written": self.commits * 2,
            "Rpl_semi_sync_master_status": 0,
        }


@dataclass(slots=True)
class ReplicaSim:
    instance_id: int
    server_id: int
    capacity: float  # transactions/s this replica can apply
    received: int = 0
    applied: int = 0
    params: dict[str, str] = field(default_factory=lambda: dict(PARAMS))
    down_ticks: int = 0
    counters: Counters = field(default_factory=Counters)


class ClusterSim:
    """One source and its replicas, advanced one tick (one second) at a time."""

    def __init__(self, rng: random.Random, source_id: int, replica_ids: list[int]) -> None:
        self.rng = rng
        self.source_id = source_id
        self.executed = 1_000_000
        self.counters = Counters()
        self.burst_left = 0
        self.replicas = [
            ReplicaSim(iid, 10 + n, rng.uniform(180, 260), 1_000_000, 1_000_000)
            for n, iid in enumerate(replica_ids)
        ]

    def tick(self, n: int) -> list[PollResult]:
        rng = self.rng
        if self.burst_left == 0 and rng.random() < 1 / 300:
            self.burst_left = rng.randint(20, 90)  # a batch job: replicas fall behind
        self.burst_left = max(0, self.burst_left - 1)
        written = round((420 if self.burst_left else 150) * rng.uniform(0.7, 1.3))
        self.executed += written
        at = START_S + n
        readings = [PollResult(self.source_id, at, self._source(at, n, written))]
        rate = max(written, 1)
        for replica in self.replicas:
            readings.append(self._replica(replica, at + rng.uniform(0.001, 0.02), n, rate))
        return readings

    def _source(self, at: float, n: int, written: int) -> InstanceSnapshot:
        pos = f"0-1-{self.executed}"
        gtid = GtidState(pos, pos, "", pos, True, 0)
        counters = self.counters.advance(written)
        return _snapshot("source", at, n, 1, gtid, (), counters, PARAMS)

    def _replica(self, r: ReplicaSim, at: float, n: int, rate: int) -> PollResult:
        rng = self.rng
        r.received = min(self.executed, r.received + rate + rng.randint(0, 20))
        if r.down_ticks or rng.random() < 1 / 5000:
            r.down_ticks = r.down_ticks - 1 if r.down_ticks else rng.randint(1, 8)
            return PollResult(
                r.instance_id, at, None, "no answer within 0.80 s", "ServerUnreachable"
            )
        if rng.random() < 1 / 700:  # someone tunes the applier pool
            threads = 8 if r.params["slave_parallel_threads"] == "4" else 4
            r.params = {**r.params, "slave_parallel_threads": str(threads)}
            r.capacity *= 1.4 if threads == 8 else 1 / 1.4
        applied = min(r.received, r.applied + round(r.capacity * rng.uniform(0.8, 1.1)))
        trx = applied - r.applied
        r.applied = applied
        behind = self.executed - applied
        sbm = math.floor(behind / rate) if behind else 0
        pos = f"0-1-{applied}"
        channel = ChannelStatus(
            channel="",
            io_state=IoState.YES,
            sql_running=True,
            seconds_behind_source=sbm,
            source_host="10.0.0.1",
            source_port=3306,
            source_server_id=1,
            source_log_file="mariadb-bin.000042",
            read_source_log_pos=400 * r.received % 1_073_741_824,
            relay_source_log_file="mariadb-bin.000042",
            exec_source_log_pos=400 * applied % 1_073_741_824,
            relay_log_space=400 * (r.received - applied) + 4096,
            sql_thread_state="Slave has read all relay log; waiting for more updates",
            retrieved_gtids=f"0-1-{r.received}",
            executed_gtids=pos,
            using_gtid="Slave_Pos",
            parallel_mode="optimistic",
            retried_transactions=n // 900,
        )
        gtid = GtidState(pos, pos, pos, pos, True, 0)
        counters = r.counters.advance(trx)
        name = f"replica{r.server_id}"
        snap = _snapshot(name, at, n, r.server_id, gtid, (channel,), counters, r.params)
        return PollResult(r.instance_id, at, snap)


def _snapshot(
    name: str,
    at: float,
    n: int,
    server_id: int,
    gtid: GtidState,
    channels: tuple[ChannelStatus, ...],
    counters: dict[str, int],
    params: dict[str, str],
) -> InstanceSnapshot:
    return InstanceSnapshot(
        server=f"{name}:3306",
        flavor=FLAVOR,
        dialect="mariadb",
        taken_at=datetime.fromtimestamp(at, UTC),
        round_trip_s=0.0012,
        server_id=server_id,
        server_uuid=None,
        read_only=bool(channels),
        clock=ClockReading(0.0004, 0.0006),
        gtid=gtid,
        channels=channels,
        source=SourceStatus("mariadb-bin.000042", 4096),
        params=params if n % PARAMS_EVERY_TICKS == 0 else {},
        params_read=n % PARAMS_EVERY_TICKS == 0,
        counters={"Uptime": int(at - START_S) + 86_400, **counters},
    )


def build_clusters(sessions: sessionmaker[Session], clusters: int, replicas: int) -> list[int]:
    box = SecretBox("bench-secret", b"unpolled-salt")
    ids = []
    with sessions() as session, session.begin():
        for n in range(clusters):
            cluster = inventory.create_cluster(session, f"bench-{n}")
            add = inventory.add_instance
            add(session, box, cluster, "source", "10.0.0.1", 3306, "mon", "pw", "source")
            for r in range(replicas):
                add(session, box, cluster, f"replica{r}", f"10.0.1.{r}", 3306, "mon", "pw")
            ids.append(cluster.id)
    return ids


def load_cluster(session: Session, cluster_id: int) -> Cluster:
    """What ``poll_cluster`` loads before it reads the servers: part of every tick's cost."""
    cluster = session.scalar(
        select(Cluster)
        .where(Cluster.id == cluster_id)
        .options(selectinload(Cluster.instances).selectinload(Instance.channels))
    )
    assert cluster is not None
    return cluster


@dataclass(slots=True)
class Ingest:
    samples: int
    seconds: float
    tick_ms: list[float]
    cpu_s: float  # this process's CPU in the timed part: steadier than wall time on a busy box


def ingest(sessions: sessionmaker[Session], args: argparse.Namespace) -> Ingest:
    cluster_ids = build_clusters(sessions, args.clusters, args.replicas)
    rng = random.Random(args.seed)
    with sessions() as session:
        sims = {}
        for cid in cluster_ids:
            instances = load_cluster(session, cid).instances
            source = next(i.id for i in instances if i.role == "source")
            sims[cid] = ClusterSim(rng, source, [i.id for i in instances if i.role != "source"])
    samples, tick_ms, cpu_s = 0, [], 0.0
    for n in range(args.ticks):
        for cid in cluster_ids:
            readings = sims[cid].tick(n)
            started, cpu_started = time.perf_counter(), time.process_time()
            with sessions() as session, session.begin():
                samples += record_tick(session, load_cluster(session, cid), readings).samples
            tick_ms.append((time.perf_counter() - started) * 1000)
            cpu_s += time.process_time() - cpu_started
    return Ingest(samples, sum(tick_ms) / 1000, tick_ms, cpu_s)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def sqlite_bytes(engine: Engine, table: str) -> tuple[int, int, int, str]:
    """(rows, bytes in pages, payload bytes, objects counted) for a table and its indexes."""
    objects = "SELECT name FROM sqlite_schema WHERE tbl_name = :t"
    with engine.connect() as conn:
        names = list(conn.scalars(text(objects), {"t": table}))
        pages, payload = conn.execute(
            text(
                "SELECT SUM(pgsize), SUM(payload) FROM dbstat "
                "WHERE name IN (SELECT name FROM sqlite_schema WHERE tbl_name = :t)"
            ),
            {"t": table},
        ).one()
        rows = conn.scalar(text(f"SELECT COUNT(*) FROM {table}"))  # noqa: S608 - our table
    return int(rows or 0), int(pages or 0), int(payload or 0), "dbstat of " + ", ".join(names)


def require_dbstat(engine: Engine) -> None:
    """dbstat (SQLITE_ENABLE_DBSTAT_VTAB) is in the SQLite CPython ships on Debian; not in all."""
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT COUNT(*) FROM dbstat"))
    except OperationalError as exc:
        message = f"this SQLite ({sqlite3.sqlite_version}) has no dbstat table: {exc}"
        raise SystemExit(message) from exc


def postgres_bytes(engine: Engine, table: str) -> tuple[int, int, int, str]:
    """(rows, total relation bytes, heap bytes, what was counted): a partitioned table's own
    sizes are 0, so its partitions' are summed."""
    with engine.connect() as conn:
        total, heap, parts = conn.execute(
            text(
                "SELECT SUM(pg_total_relation_size(oid)), SUM(pg_relation_size(oid)), COUNT(*) "
                "FROM pg_class WHERE (oid = CAST(:t AS regclass) AND relkind = 'r') OR oid IN "
                "(SELECT relid FROM pg_partition_tree(CAST(:t AS regclass)) WHERE isleaf)"
            ),
            {"t": table},
        ).one()
        rows = conn.scalar(text(f"SELECT COUNT(*) FROM {table}"))  # noqa: S608 - our table
    return int(rows or 0), int(total), int(heap), f"heap + indexes + TOAST of {parts} relation(s)"


def report(name: str, engine: Engine, result: Ingest, args: argparse.Namespace) -> None:
    ms = result.tick_ms
    ticks = len(ms)
    print(f"\n== {name}: {args.clusters} clusters × (1 source + {args.replicas} replicas), "
          f"{args.ticks} ticks each ({ticks} cluster ticks)")  # fmt: skip
    print(f"ingest: {result.samples} raw samples in {result.seconds:.1f} s of store time "
          f"→ {result.samples / result.seconds:,.0f} samples/s")  # fmt: skip
    print(f"ms per cluster tick (load + record_tick + commit): mean {statistics.fmean(ms):.2f}, "
          f"p50 {percentile(ms, 0.5):.2f}, p99 {percentile(ms, 0.99):.2f}; "
          f"CPU (this process) {result.cpu_s * 1000 / ticks:.2f} ms/tick "
          f"(→ {result.samples / result.cpu_s:,.0f} samples per CPU-second)")  # fmt: skip
    measure = sqlite_bytes if engine.dialect.name == "sqlite" else postgres_bytes
    for table, model in (("samples", Sample), ("instance_samples", InstanceSample)):
        rows, size, detail, counted = measure(engine, model.__tablename__)
        extra = "payload" if engine.dialect.name == "sqlite" else "heap only"
        print(f"{table}: {rows} rows, {size / max(rows, 1):.1f} bytes/row "
              f"({extra} {detail / max(rows, 1):.1f}; counted: {counted})")  # fmt: skip


def run_sqlite(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="lagscope-ingest-") as tmp:
        path = Path(tmp) / "store.db"
        url = f"sqlite:///{path}"
        upgrade(url)
        engine = make_engine(url)
        try:
            require_dbstat(engine)
            result = ingest(make_session_factory(engine), args)
            report(f"SQLite {path.name} (WAL, synchronous=NORMAL)", engine, result, args)
            with engine.connect() as conn:
                conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
            print(f"file after checkpoint: {path.stat().st_size / 1e6:.1f} MB (all tables)")
        finally:
            engine.dispose()


@contextmanager
def postgres_schema(url: str) -> Iterator[str]:
    """A fresh schema on the given database, and the URL that makes it the search_path."""
    schema = f"lagscope_bench_{secrets.token_hex(4)}"
    admin = make_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    scoped = make_url(url).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield scoped.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def run_postgres(args: argparse.Namespace, server_url: str) -> None:
    with postgres_schema(server_url) as url:
        upgrade(url)
        engine = make_engine(url)
        if args.pg_insert == "values":
            # SQLAlchemy's insertmanyvalues for executemany without RETURNING too.
            engine.dialect.use_insertmanyvalues_wo_returning = True
        try:
            result = ingest(make_session_factory(engine), args)
            report(f"PostgreSQL (inserts: {args.pg_insert})", engine, result, args)
        finally:
            engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=500, help="ticks per cluster")
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--replicas", type=int, default=4, help="replicas per cluster")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--postgres-url", help="also run against this PostgreSQL database")
    parser.add_argument("--postgres", action="store_true", help="also on a throwaway PostgreSQL")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument(
        "--pg-insert",
        choices=("executemany", "values"),
        default="executemany",
        help="executemany: what the product does; values: insertmanyvalues",
    )
    args = parser.parse_args()
    if not args.no_sqlite:
        run_sqlite(args)
    if args.postgres_url:
        run_postgres(args, args.postgres_url)
    if args.postgres:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.integration
        from tests.integration.postgres import start_postgres

        server = start_postgres()
        try:
            run_postgres(args, server.url)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
