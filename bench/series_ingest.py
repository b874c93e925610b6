"""A fleet's raw series written into PostgreSQL and into VictoriaMetrics, as the poll owner writes
them, and the explorer's 1-hour query read back from each.

``--channels`` replicas (one channel each, on a server of its own) polled every second for
``--seconds`` seconds. Each second's rows are generated first (not timed): per channel a
``samples`` row with every series metric, per server an ``instance_samples`` row. Then, timed:

- **PostgreSQL** (a throwaway server, tests/integration/postgres.py; the store migrated, its raw
  tables partitioned by day): the rows sent as the owner sends them (ingest/tick_writes.py: one
  executemany per table and transaction, ``owner_batch_instances`` servers a transaction);
- **VictoriaMetrics** (Debian's single node, tests/integration/victoria_server.py): the same
  rows through the owner's raw-series writer (series_store/: every series metric a sample,
  Snappy-compressed remote write, 5,000 samples a request), sent synchronously.

For each: the writer's CPU (this process) and the server's CPU (PostgreSQL's processes, or
VictoriaMetrics') per channel-poll and per value, the wall time against the seconds simulated,
and the bytes on disk per channel-poll (PostgreSQL: ``pg_total_relation_size`` of the raw
tables' partitions; VictoriaMetrics: its data directory after ``/internal/force_flush`` and a
forced merge). A channel-poll is one ``samples`` row and its share of its server's row; a value
is one number of it (a sample to VictoriaMetrics).

Then the explorer's 1-hour query (history/series.py ``query_series``, 600 points, lag_s) over
``--query-channels`` channels spread over the fleet, whose last hour is written in full (through
the same paths, not timed), read ``--runs`` times from each: p50/p95 ms, and whether both
answers are identical. The 30-day query reads the SQL store's rollups in both setups
(bench/series_fleet.py measures it). Figures are printed, never asserted.

    .venv/bin/python bench/series_ingest.py [--channels 1000 10000] [--seconds 60] [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine, text

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # for tests.integration (PostgreSQL, VictoriaMetrics)

from tests.integration.postgres import ThrowawayPostgres, start_postgres  # noqa: E402
from tests.integration.victoria_server import victoria_server  # noqa: E402

from lagscope.alerts.tick_figures import TickFigures  # noqa: E402
from lagscope.config import Settings  # noqa: E402
from lagscope.db import make_engine, make_session_factory  # noqa: E402
from lagscope.history.series import query_series  # noqa: E402
from lagscope.ingest.tick_writes import TickWrites  # noqa: E402
from lagscope.inventory import instances as inventory  # noqa: E402
from lagscope.metrics_catalog import SERIES  # noqa: E402
from lagscope.models import Channel, Cluster, InstanceSample, Sample  # noqa: E402
from lagscope.models.types import Scaled  # noqa: E402
from lagscope.security.secret_box import SecretBox  # noqa: E402
from lagscope.series_store.victoria import VictoriaMetrics, series_writer  # noqa: E402
from lagscope.store_setup import upgrade  # noqa: E402

BATCH = 60  # servers per transaction: the owner's default batch (owner_batch_instances)
CHANNEL_VALUES = [m.name for m in SERIES if m.per == "channel"]
INSTANCE_VALUES = [m.name for m in SERIES if m.per == "instance"]
_TICKS = 100 / os.sysconf("SC_CLK_TCK")  # /proc's clock ticks → seconds, ×100 below


def proc_cpu_s(pids: Callable[[], list[int]]) -> float:
    """utime + stime of the processes ``pids`` names (those gone since are not counted)."""
    total = 0
    for pid in pids():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total * _TICKS / 100


def children_of(parent: int) -> Callable[[], list[int]]:
    def pids() -> list[int]:
        found = [parent]
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(stat[1]) == parent:
                    found.append(int(entry.name))
        return found

    return pids


def pid_listening(port: int) -> int:
    """The pid of the process listening on 127.0.0.1:``port`` (from /proc/net/tcp)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        parts = line.split()
        if parts[3] == "0A" and int(parts[1].split(":")[1], 16) == port:
            inodes.add(parts[9])
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    return int(entry.name)
        except OSError:
            continue
    raise RuntimeError(f"nothing listens on {port}")


def rows_for(
    rng: random.Random, at: datetime, channels: list[int], instances: list[int]
) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]]]:
    samples = {}
    for cid in channels:
        row: dict[str, Any] = {"channel_id": cid, "ts": at, "verdict": 1, "disagreement": False}
        lag = rng.uniform(0, 50)
        for name in CHANNEL_VALUES:
            row[name] = lag if name == "lag_s" else rng.randint(0, 5000) / 7
        row["seconds_behind_source"] = int(lag)
        row["trx_behind"] = int(lag * 40)
        samples[cid] = row
    polled = {}
    for iid in instances:
        row = {"instance_id": iid, "ts": at, "reachable": True}
        for name in INSTANCE_VALUES:
            row[name] = rng.randint(0, 100_000) / 1000
        polled[iid] = row
    return samples, polled


def integral(samples: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
    # Integer columns take integers: the generated rows put a float in each series column.
    table = Sample.__table__
    for row in samples.values():
        for name in CHANNEL_VALUES:
            if not isinstance(table.c[name].type, Scaled) and row[name] is not None:
                row[name] = int(row[name])
    return samples


def build(sessions: Any, count: int, now: datetime) -> tuple[list[int], list[int]]:
    box = SecretBox("bench-secret", b"unpolled-salt")
    channels, instances = [], []
    with sessions() as session, session.begin():
        for first in range(0, count, 500):
            cluster = inventory.create_cluster(session, f"fleet{first // 500}")
            replicas = [
                inventory.add_instance(session, box, cluster, f"r{n}", "127.0.0.1", 3306, "m", "")
                for n in range(first, min(count, first + 500))
            ]
            for replica in replicas:
                replica.channels.append(Channel(name="", first_seen_at=now - timedelta(days=1)))
            session.flush()
            channels += [r.channels[0].id for r in replicas]
            instances += [r.id for r in replicas]
    return channels, instances


class Timed:
    def __init__(self, server_pids: Callable[[], list[int]]) -> None:
        self.server_pids = server_pids
        self.own = self.server = self.wall = 0.0

    def __enter__(self) -> Timed:
        self._own, self._wall = time.process_time(), time.perf_counter()
        self._server = proc_cpu_s(self.server_pids)
        return self

    def __exit__(self, *_: object) -> None:
        self.own += time.process_time() - self._own
        self.wall += time.perf_counter() - self._wall
        self.server += proc_cpu_s(self.server_pids) - self._server


def write_postgres(engine: Engine, samples: dict[int, Any], polled: dict[int, Any]) -> None:
    ids = list(polled)
    for first in range(0, len(ids), BATCH):
        batch = ids[first : first + BATCH]
        writes = TickWrites()
        writes.insert(Sample.__table__, [samples[i] for i in batch if i in samples])
        writes.insert(InstanceSample.__table__, [polled[i] for i in batch])
        with engine.begin() as conn:
            writes.send(conn)


def postgres_bytes(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(
            conn.scalar(
                text(
                    "SELECT sum(pg_total_relation_size(relid)) FROM ("
                    " SELECT relid FROM pg_partition_tree('samples')"
                    " UNION ALL SELECT relid FROM pg_partition_tree('instance_samples')) t"
                )
            )
        )


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def fleet(args: argparse.Namespace, count: int, server: ThrowawayPostgres, vm_dir: Path) -> None:
    url = server.new_database("ingest")
    upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    now = datetime.now(UTC).replace(microsecond=0)
    channels, instances = build(sessions, count, now)
    by_channel_instance = dict(zip(channels, instances, strict=True))
    rng = random.Random(count)
    with victoria_server(vm_dir) as vm_url:
        vm = VictoriaMetrics(vm_url)
        writer = series_writer(
            Settings(
                series_url=vm_url,
                secret_key=secrets.token_urlsafe(32),
                remote_write_max_waiting=10**9,
                remote_write_timeout_s=30.0,
            )
        )
        assert writer is not None
        vm_pid = pid_listening(int(vm_url.rsplit(":", 1)[1]))
        postmaster = int((server.data_dir / "postmaster.pid").read_text().split()[0])
        pg, victoria = Timed(children_of(postmaster)), Timed(lambda: [vm_pid])
        start = now - timedelta(seconds=args.seconds)
        # The queried channels' last hour, written first (not timed) through the same paths.
        queried = channels[:: max(1, count // args.query_channels)][: args.query_channels]
        q_instances = [by_channel_instance[c] for c in queried]
        for second in range(3600 - args.seconds):
            at = start - timedelta(seconds=3600 - args.seconds - second)
            samples, polled = rows_for(rng, at, queried, q_instances)
            integral(samples)
            write_postgres(engine, samples, polled)
            writer([TickFigures(Cluster(name="fleet"), samples, polled)])
            if second % 60 == 59:
                writer.send_waiting()
        writer.send_waiting()
        for second in range(args.seconds):
            at = start + timedelta(seconds=second, milliseconds=rng.randint(0, 999))
            samples, polled = rows_for(rng, at, channels, instances)
            integral(samples)
            with pg:
                write_postgres(engine, samples, polled)
            with victoria:
                writer([TickFigures(Cluster(name="fleet"), samples, polled)])
                writer.send_waiting()
        assert writer.stats.samples_dropped == 0 and writer.stats.waiting == 0, writer.stats
        httpx.get(f"{vm_url}/internal/force_flush", timeout=60)
        vm_flushed = du(vm_dir / "data")
        httpx.get(f"{vm_url}/internal/force_merge", timeout=600)
        vm_merged = du(vm_dir / "data")
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE"))
        pg_bytes = postgres_bytes(engine)
        polls = count * args.seconds + len(queried) * (3600 - args.seconds)
        timed_polls = count * args.seconds
        values = len(CHANNEL_VALUES) + len(INSTANCE_VALUES)
        print(f"\n== {count:,} channels polled every second for {args.seconds} s "
              f"({timed_polls:,} channel-polls timed, {values} values each)")  # fmt: skip
        for name, t in (("PostgreSQL", pg), ("VictoriaMetrics", victoria)):
            per_poll = (t.own + t.server) / timed_polls * 1e6
            print(
                f"  {name:>15}: writer CPU {t.own / timed_polls * 1e6:.1f} µs + server CPU "
                f"{t.server / timed_polls * 1e6:.1f} µs = {per_poll:.1f} µs per channel-poll "
                f"({per_poll / values:.2f} µs per value); wall {t.wall:.1f} s for "
                f"{args.seconds} s of polls ({args.seconds / t.wall:.1f}x real time)"
            )
        print(
            f"  disk per channel-poll: PostgreSQL {pg_bytes / polls:.0f} B "
            f"({pg_bytes / polls / values:.1f} B per value); VictoriaMetrics "
            f"{vm_flushed / polls:.1f} B flushed, {vm_merged / polls:.1f} B merged "
            f"({vm_merged / polls / values:.2f} B per value); "
            f"{polls:,} channel-polls stored"
        )
        query(args, sessions, vm, queried, now)
        vm.close()
        writer.stop()
    engine.dispose()


def query(args: argparse.Namespace, sessions: Any, vm: VictoriaMetrics, queried: list[int],
          now: datetime) -> None:  # fmt: skip
    end = now
    begin = end - timedelta(hours=1)
    answers: dict[str, Any] = {}
    timings: dict[str, list[float]] = {"PostgreSQL": [], "VictoriaMetrics": []}
    for _ in range(args.runs):
        for name, raw in (("PostgreSQL", None), ("VictoriaMetrics", vm)):
            with sessions() as session:
                t = time.perf_counter()
                found = query_series(session, "lag_s", begin, end, channel_ids=queried,
                                     points=600, raw=raw)  # fmt: skip
                timings[name].append((time.perf_counter() - t) * 1000)
            answers[name] = [s.points for s in found]
    for name, ms in timings.items():
        ms.sort()
        p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
        print(f"  1-hour query, {len(queried)} channels, 600 points, from {name}: "
              f"p50 {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms ({len(ms)} runs)")  # fmt: skip
    points = sum(len(p) for p in answers["PostgreSQL"])
    same = answers["PostgreSQL"] == answers["VictoriaMetrics"]
    print(f"  the two answers identical: {'yes' if same else 'NO'} ({points:,} buckets)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--seconds", type=int, default=60, help="seconds of polls timed")
    parser.add_argument("--query-channels", type=int, default=20)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    # Stopped with SIGTERM, the servers it started are stopped too (the finally blocks run).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    server = start_postgres()
    try:
        with tempfile.TemporaryDirectory(prefix="series-ingest-") as tmp:
            for count in args.channels:
                fleet(args, count, server, Path(tmp) / f"vm{count}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
