"""How many channel-polls per second Celery workers sustain, end to end.

A real lab (source + 2 replicas), a real Redis, ``--workers`` ``lagscope worker`` processes
(prefork, ``--concurrency`` each; 2 = this box's cores) and ``lagscope beat``; ``--clusters``
logical clusters of one source and four replicas each, all pointed at the lab's servers (each
logical instance has its own connection). The store is SQLite, or a throwaway PostgreSQL with
``--store postgresql``. For ``--seconds`` after a warm-up it counts the samples that reached the
store, and prints:

- channel-polls/s stored (and the share of the ideal 1 per channel per second),
- batch duration p50/p99 and ticks per batch (Celery's "succeeded in" for poll_clusters: one
  task ticks the clusters of a batch),
- instance round trip p50/p99 (the poll batch, from instance_samples),
- per worker: ticks/s, instance polls/s, cores and CPU per instance poll (from its log, /proc),
- worker CPU per instance poll (all worker processes), and servers per core at 1 s from it,
- the bare poll (the median of 5 measurements), measured in the same run once the workers have
  stopped: the same batches (one source and four replicas per cluster tick) sent by plain
  PyMySQL over a kept connection, one round trip each, results read, nothing else; and the
  pipeline's ratio to it,
- the floor: the same batches with every packet read off the socket and nothing decoded.

    .venv/bin/python bench/poll_throughput.py --clusters 100 --seconds 30
    .venv/bin/python bench/poll_throughput.py --clusters 30 --store postgresql --workers 2
    .venv/bin/python bench/poll_throughput.py --clusters 30 --rules 3   # with alert evaluation
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pymysql
from pymysql.constants import COMMAND, SERVER_STATUS
from pymysql.protocol import EOFPacketWrapper, OKPacketWrapper
from sqlalchemy import func, select

from lagscope.alerts.rules import create_rule
from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor, ResultSet
from lagscope.collectors.poller import InstancePoller
from lagscope.db import make_engine, make_session_factory
from lagscope.demo.processes import ManagedProcess, RedisServer, lagscope_command
from lagscope.inventory import instances as inventory
from lagscope.lab import Lab, LabConfig
from lagscope.models import Instance, InstanceSample, Sample
from lagscope.security.secret_box import store_box
from lagscope.store_setup import upgrade

REPLICAS_PER_CLUSTER = 4
SECRET = "bench-secret-3b7e9d1c5a2f4086-Lm"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def cpu_seconds(root_pid: int) -> float:
    """utime+stime of a process and all its descendants (the prefork children)."""
    return sum(cpu_by_role(root_pid).values())


def cpu_by_role(root_pid: int) -> dict[str, float]:
    """utime+stime of a worker's processes by what they are: the poll owner (``--queues
    owner``), the slow jobs' worker (``--queues slow``) and Celery's default queue (the rest:
    the worker and its prefork pool)."""
    ticks = os.sysconf("SC_CLK_TCK")
    found = {"owner": 0.0, "slow": 0.0, "celery": 0.0}
    for pid in _tree(root_pid):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        role = "celery"
        if b"--queues" in argv:
            role = argv[argv.index(b"--queues") + 1].decode()
        found[role if role in found else "celery"] += (int(fields[11]) + int(fields[12])) / ticks
    return found


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


class _Recording(PyMySQLExecutor):
    """The real executor, keeping the statements of the last batch."""

    last: Sequence[str] = ()

    def run(self, statements: Sequence[str]) -> list[ResultSet]:
        self.last = list(statements)
        return super().run(statements)


def batch_of(lab: Lab, name: str) -> tuple[dict[str, Any], str]:
    """The monitor's connection parameters for ``name`` and the batch Lagscope's poller sends
    it in a steady poll (the second: the first also learns the server)."""
    params = lab.connection_params(name, "monitor")
    spec = ConnectionSpec(
        host=params["host"], port=params["port"], user=params["user"], password=params["password"]
    )
    recording = _Recording(spec)
    poller = InstancePoller(recording)
    poller.poll()
    poller.poll()
    poller.close()
    return params, ";\n".join(recording.last)


def bare_poll_cpu_ms(lab: Lab, rounds: int) -> float:
    """Client CPU per bare poll, over the pipeline's mix: per round one source batch and
    ``REPLICAS_PER_CLUSTER`` replica batches, each one round trip with its results read."""
    return _cpu_per_batch_ms(lab, rounds, _read_decoded)


def floor_cpu_ms(lab: Lab, rounds: int) -> float:
    """The physical floor: the same batches, every packet of the answer read off the socket
    and nothing decoded (only the status flag that says another result set follows)."""
    return _cpu_per_batch_ms(lab, rounds, _read_raw)


def _cpu_per_batch_ms(lab: Lab, rounds: int, read: Callable[[Any, str], None]) -> float:
    """Client CPU per batch sent and read by ``read`` over plain PyMySQL connections."""
    names = ["source", *(("replica1", "replica2")[r % 2] for r in range(REPLICAS_PER_CLUSTER))]
    connections = []
    for name in names:
        params, sql = batch_of(lab, name)
        conn = pymysql.connect(
            host=params["host"], port=params["port"], user=params["user"],
            password=params["password"], autocommit=True,
            client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS,
        )  # fmt: skip
        connections.append((conn, sql))
    cpu0 = time.process_time()
    for _ in range(rounds):
        for conn, sql in connections:
            read(conn, sql)
    cpu = time.process_time() - cpu0
    for conn, _ in connections:
        conn.close()
    return 1000 * cpu / (rounds * len(connections))


def _read_decoded(conn: Any, sql: str) -> None:
    with conn.cursor() as cur:
        cur.execute(sql)
        cur.fetchall()
        while cur.nextset():
            cur.fetchall()


def _read_raw(conn: Any, sql: str) -> None:
    conn._execute_command(COMMAND.COM_QUERY, sql)
    more = True
    while more:
        first = conn._read_packet()
        if first.is_ok_packet():
            more = bool(
                OKPacketWrapper(first).server_status & SERVER_STATUS.SERVER_MORE_RESULTS_EXISTS
            )
            continue
        for _ in range(first.read_length_encoded_integer() + 1):  # field packets, then EOF
            conn._read_packet()
        while not (packet := conn._read_packet()).is_eof_packet():
            pass
        status = EOFPacketWrapper(packet).server_status
        more = bool(status & SERVER_STATUS.SERVER_MORE_RESULTS_EXISTS)


# What a fleet with alerting judges every tick (--rules): lag, broken replication, a dead server.
RULES = (
    {"name": "lag over 30 s", "metric": "lag", "threshold": 30.0, "for_s": 60.0},
    {"name": "replication error", "metric": "replication_error", "threshold": 0.5},
    {"name": "unreachable", "metric": "unreachable", "threshold": 0.5, "for_s": 10.0},
)


def monitor_sessions(lab: Lab) -> dict[str, int]:
    """The monitoring user's sessions on each lab server (Lagscope's polling connections)."""
    user = lab.credentials.monitor[0]
    found = {}
    for name in ("source", "replica1", "replica2"):
        with lab.connect(name) as conn, conn.cursor() as cur:
            cur.execute(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = %s", (user,)
            )
            found[name] = int(cur.fetchone()[0])
    return found


def store_url(kind: str, workdir: Path) -> tuple[str, Any]:
    """The store's URL: a SQLite file in ``workdir``, or a throwaway PostgreSQL (returned too,
    for the caller to stop)."""
    if kind != "postgresql":
        return f"sqlite:///{workdir / 'store.db'}", None
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.integration.postgres import start_postgres

    postgres = start_postgres()
    return postgres.url, postgres


def build_store(url: str, lab: Lab, clusters: int, rules: int = 0) -> None:
    upgrade(url)
    sessions = make_session_factory(make_engine(url))
    box = store_box(sessions, SECRET)
    user, password = lab.credentials.monitor
    real = [lab.server("replica1"), lab.server("replica2")]
    with sessions() as session, session.begin():
        for fields in RULES[:rules]:
            create_rule(session, fields)
        for n in range(clusters):
            cluster = inventory.create_cluster(session, f"bench-{n}")
            src = lab.server("source")
            inventory.add_instance(
                session, box, cluster, "source", src.host, src.port, user, password, "source"
            )
            for r in range(REPLICAS_PER_CLUSTER):
                server = real[r % 2]
                inventory.add_instance(
                    session, box, cluster, f"replica{r}", server.host, server.port, user, password
                )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--warmup", type=float, default=10)
    parser.add_argument("--concurrency", type=int, default=2, help="pool processes per worker")
    parser.add_argument("--workers", type=int, default=1, help="lagscope worker processes")
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument(
        "--engine", choices=("celery", "owner"), default="celery",
        help="LAGSCOPE_POLL_ENGINE: beat's dispatched tasks, or the shards' owners",
    )  # fmt: skip
    parser.add_argument("--bare-rounds", type=int, default=400, help="bare-poll rounds (× 5)")
    parser.add_argument(
        "--rules", type=int, default=0, choices=range(len(RULES) + 1),
        help="alert rules over every cluster (lag, replication error, unreachable)",
    )  # fmt: skip
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="lagscope-bench-"))
    lab = Lab.start(LabConfig(replicas=2))
    redis = RedisServer(workdir)
    postgres = None
    processes: list[ManagedProcess] = []
    try:
        instances = args.clusters * (1 + REPLICAS_PER_CLUSTER)
        # Celery: every logical instance may hold a connection per worker pool process.
        per_instance = 1 if args.engine == "owner" else args.concurrency * args.workers
        connections = instances * per_instance + 200
        for name in ("source", "replica1", "replica2"):
            with lab.connect(name) as conn, conn.cursor() as cur:
                cur.execute(f"SET GLOBAL max_connections = {connections}")
        url, postgres = store_url(args.store, workdir)
        build_store(url, lab, args.clusters, args.rules)
        env = {**os.environ, "LAGSCOPE_DATABASE_URL": url, "LAGSCOPE_BROKER_URL": redis.url,
               "LAGSCOPE_SECRET_KEY": SECRET, "LAGSCOPE_POLL_ENGINE": args.engine}  # fmt: skip
        workers = []
        for n in range(args.workers):
            argv = lagscope_command(
                "worker", "--concurrency", str(args.concurrency), "--without-gossip",
                "--without-mingle", "-n", f"bench{n}@%h",
            )  # fmt: skip
            worker = ManagedProcess(f"worker{n}", argv, workdir, env)
            processes.append(worker)
            worker.wait_for_log("ready.")
            workers.append(worker)
        processes.append(
            ManagedProcess(
                "beat", lagscope_command("beat", "-s", str(workdir / "beat")), workdir, env
            )
        )
        time.sleep(args.warmup)
        offsets = [len(w.log_text()) for w in workers]
        start, roles0 = time.time(), [cpu_by_role(w.pid) for w in workers]
        time.sleep(args.seconds)
        end, roles1 = time.time(), [cpu_by_role(w.pid) for w in workers]
        cpu0 = [sum(r.values()) for r in roles0]
        cpu1 = [sum(r.values()) for r in roles1]
        roles = {
            role: sum(b[role] - a[role] for a, b in zip(roles0, roles1, strict=True))
            for role in roles0[0]
        }
        sessions_now = monitor_sessions(lab)
        logs = [w.log_text()[o:] for w, o in zip(workers, offsets, strict=True)]
        if os.environ.get("BENCH_KEEP_LOGS"):
            for n, text in enumerate(logs):
                Path(os.environ["BENCH_KEEP_LOGS"], f"worker{n}.log").write_text(text)
        # The bare polls run on a box without the worker and beat, as the worker's did not.
        for process in reversed(processes):
            process.stop()
        processes.clear()
        # The median of several: one measurement of a few seconds moved by ±20 % between runs.
        bare_ms = statistics.median(bare_poll_cpu_ms(lab, args.bare_rounds) for _ in range(5))
        floor_ms = statistics.median(floor_cpu_ms(lab, args.bare_rounds) for _ in range(5))
        cpus = [b - a for a, b in zip(cpu0, cpu1, strict=True)]
        report(url, logs, args, start, end, cpus, bare_ms, floor_ms, roles)
        # Each lab server stands for many logical instances: source in every cluster, each
        # replica in half of the replica slots.
        half = args.clusters * REPLICAS_PER_CLUSTER // 2
        logical = {"source": args.clusters, "replica1": half, "replica2": half}
        per = {name: sessions_now[name] / logical[name] for name in logical}
        print("Lagscope sessions per monitored instance (PROCESSLIST, monitoring user):"
              f" {', '.join(f'{n} {v:.2f}' for n, v in per.items())}")  # fmt: skip
    finally:
        for process in reversed(processes):
            process.stop()
        redis.stop()
        if postgres is not None:
            postgres.stop()
        lab.stop()


def report(
    url: str,
    logs: list[str],
    args: argparse.Namespace,
    start: float,
    end: float,
    cpus: list[float],
    bare_ms: float,
    floor_ms: float,
    roles: dict[str, float],
) -> None:
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    # The whole seconds whose ticks fall in the window: a tick is due at its second and read
    # just after it, so a window of 20.1 s can hold 21 ticks' readings but 20 due seconds.
    first, last = math.ceil(start), math.floor(end)  # due: first … last − 1
    window = (datetime.fromtimestamp(first, UTC), datetime.fromtimestamp(last, UTC))
    with sessions() as s:
        samples = (
            s.scalar(select(func.count()).select_from(Sample).where(Sample.ts.between(*window)))
            or 0
        )
        polls = s.scalars(
            select(InstanceSample.round_trip_s).where(
                InstanceSample.ts.between(*window), InstanceSample.reachable
            )
        ).all()
        # A tick starts on its whole second; one whose source was read in the first half of
        # its interval is on time (the ideal: one per cluster per second).
        source_ts = s.scalars(
            select(InstanceSample.ts).join(Instance)
            .where(InstanceSample.ts.between(*window), Instance.role == "source")
        ).all()  # fmt: skip
        unreachable = s.scalar(
            select(func.count()).select_from(InstanceSample)
            .where(InstanceSample.ts.between(*window), InstanceSample.reachable.is_(False))
        )  # fmt: skip
    engine.dispose()
    seconds = last - first  # the polls' window; the CPU was measured over ``wall``
    wall = end - start
    ideal = args.clusters * REPLICAS_PER_CLUSTER * seconds
    pattern = r"poll_clusters\[[^\]]+\] succeeded in ([0-9.]+)s: (\d+)"
    per_worker = [[(float(s), int(n)) for s, n in re.findall(pattern, log)] for log in logs]
    batches = [b for found in per_worker for b in found]
    instance_polls = len(polls) + (unreachable or 0)
    print(f"engine={args.engine} store={args.store} clusters={args.clusters} rules={args.rules}"
          f" instances={args.clusters * (1 + REPLICAS_PER_CLUSTER)} workers={args.workers}"
          f" concurrency={args.concurrency} window={seconds:.0f} s")  # fmt: skip
    print(f"channel-polls stored: {samples / seconds:.0f}/s ({samples / ideal:.1%} of ideal)")
    on_time = sum(1 for ts in source_ts if ts.timestamp() % 1.0 < 0.5)
    due = args.clusters * seconds
    print(f"ticks on time (read within half an interval of their second): {on_time}"
          f" of {due:.0f} due ({on_time / due:.1%})")  # fmt: skip
    print(f"instance polls: {instance_polls / seconds:.0f}/s, unreachable (deadline) {unreachable}")
    if batches:
        ticks = sum(n for _, n in batches)
        print(f"batch duration {_p50_p99([s for s, _ in batches], 'ms')} ({len(batches)} batches,"
              f" {ticks / len(batches):.1f} ticks per batch)")  # fmt: skip
    rtts = [p for p in polls if p is not None]
    if rtts:
        print(f"instance round trip {_p50_p99(rtts, 'ms')}")
    for n, (found, cpu_s) in enumerate(zip(per_worker, cpus, strict=True)):
        worker_ticks = sum(t for _, t in found)
        worker_polls = worker_ticks * (1 + REPLICAS_PER_CLUSTER)
        # The batches logged while the CPU was measured: both over the wall window.
        per = "-"
        if worker_polls:
            per = f"{_per_poll_ms(cpu_s, wall, worker_polls, end - start):.3f} ms per instance poll"
        print(f"  worker{n}: {worker_ticks / wall:.1f} ticks/s, {worker_polls / wall:.0f}"
              f" instance polls/s, {cpu_s / wall:.2f} cores, {per}")  # fmt: skip
    if instance_polls:
        cpu_s = sum(cpus)
        per_poll_ms = _per_poll_ms(cpu_s, wall, instance_polls, seconds)
        print(f"worker CPU: {cpu_s / wall:.2f} cores, {per_poll_ms:.3f} ms per instance poll")
        print(f"servers per core at 1 s (1 / CPU per poll): {1000 / per_poll_ms:.0f}")
        print(
            f"bare poll (same batches, plain PyMySQL): {bare_ms:.3f} ms client CPU per poll;"
            f" pipeline / bare = {per_poll_ms / bare_ms:.2f}x"
        )
        print(
            f"floor (same batches, packets read, nothing decoded): {floor_ms:.3f} ms;"
            f" pipeline / floor = {per_poll_ms / floor_ms:.2f}x"
        )
        # With the owner engine the polls are the owner's alone: Celery's processes (the
        # default queue and the slow jobs') idle beside it, a fixed cost per worker, not per
        # poll.
        shares = ", ".join(f"{role} {cpu / wall:.3f} cores" for role, cpu in roles.items())
        print(f"by process: {shares}")
        if args.engine == "owner":
            owner_ms = _per_poll_ms(roles["owner"], wall, instance_polls, seconds)
            print(
                f"poll owner CPU: {owner_ms:.3f} ms per instance poll; owner / bare ="
                f" {owner_ms / bare_ms:.2f}x; servers per core at 1 s {1000 / owner_ms:.0f}"
            )


def _per_poll_ms(cpu_s: float, cpu_window_s: float, polls: int, polls_window_s: float) -> float:
    """CPU per poll as the CPU's rate over the polls' rate: each counted over its own window."""
    return cpu_s / cpu_window_s / (polls / polls_window_s) * 1e3


def _p50_p99(seconds: list[float], unit: str) -> str:
    p50, p99 = statistics.median(seconds) * 1e3, percentile(seconds, 0.99) * 1e3
    return f"p50={p50:.2f} {unit} p99={p99:.2f} {unit}"


if __name__ == "__main__":
    main()
