"""What this box can do for a fleet's polls alone: the bare poll run as a fleet, on time.

``--clusters`` logical clusters of one source and four replicas (the lab's three servers, as
:mod:`bench.poll_throughput` registers them), each logical server polled once per whole second
over a kept plain PyMySQL connection of its own (the same batch Lagscope sends it), by a pool of
``--threads`` threads: nothing parsed, nothing stored, no alerts. A poll is on time when its
answer's midpoint (between sending and reading, as Lagscope stamps a poll) falls within half a
second of its second; a poll not read by the next second is late.

It bounds :mod:`bench.poll_throughput`'s "ticks on time": the pipeline cannot beat the bare
fleet on the same box. Run alone, or after the pipeline with ``poll_throughput --bare-fleet``.

    .venv/bin/python bench/bare_fleet.py --clusters 100 --seconds 20
"""

from __future__ import annotations

import argparse
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pymysql

from lagscope.lab import Lab, LabConfig
from poll_throughput import REPLICAS_PER_CLUSTER, batch_of  # bench/ is the script's dir


@dataclass(frozen=True, slots=True)
class FleetRun:
    due: int
    on_time: int
    read: int
    cpu_ms_per_poll: float

    def line(self) -> str:
        return (
            f"bare fleet (plain PyMySQL, every server every second): {self.on_time} of"
            f" {self.due} polls on time ({self.on_time / self.due:.1%}), {self.read} read;"
            f" {self.cpu_ms_per_poll:.3f} ms CPU per poll"
        )


def run_fleet(lab: Lab, clusters: int, seconds: float, threads: int = 64) -> FleetRun:
    names = [
        name
        for _ in range(clusters)
        for name in (
            "source",
            *(("replica1", "replica2")[r % 2] for r in range(REPLICAS_PER_CLUSTER)),
        )
    ]
    batches = {name: batch_of(lab, name) for name in set(names)}
    connections = []
    for name in names:
        params, sql = batches[name]
        conn = pymysql.connect(
            host=params["host"], port=params["port"], user=params["user"],
            password=params["password"], autocommit=True,
            client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS,
        )  # fmt: skip
        connections.append((conn, sql, threading.Lock()))
    on_time = read = 0
    counted = threading.Lock()

    def poll(index: int, second: float) -> None:
        nonlocal on_time, read
        conn, sql, busy = connections[index]
        if not busy.acquire(blocking=False):  # its previous poll is still out: this one is late
            return
        try:
            sent = time.time()
            if sent - second >= 1.0:
                return
            with conn.cursor() as cur:
                cur.execute(sql)
                cur.fetchall()
                while cur.nextset():
                    cur.fetchall()
            taken = (sent + time.time()) / 2
        finally:
            busy.release()
        with counted:
            read += 1
            on_time += taken - second < 0.5

    pool = ThreadPoolExecutor(threads)
    second = float(int(time.time()) + 1)
    rounds = int(seconds)
    cpu0 = time.process_time()
    for _ in range(rounds):
        time.sleep(max(0.0, second - time.time()))
        for index in range(len(connections)):
            pool.submit(poll, index, second)
        second += 1.0
    pool.shutdown(wait=True)
    cpu = time.process_time() - cpu0
    for conn, _, _ in connections:
        conn.close()
    due = rounds * len(connections)
    return FleetRun(due, on_time, read, 1000 * cpu / max(read, 1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--threads", type=int, default=64)
    args = parser.parse_args()
    lab = Lab.start(LabConfig(replicas=2))
    try:
        instances = args.clusters * (1 + REPLICAS_PER_CLUSTER)
        for name in ("source", "replica1", "replica2"):
            with lab.connect(name) as conn, conn.cursor() as cur:
                cur.execute(f"SET GLOBAL max_connections = {instances + 200}")
        run_fleet(lab, args.clusters, 3, args.threads)  # warm-up
        print(run_fleet(lab, args.clusters, args.seconds, args.threads).line())
    finally:
        lab.stop()


if __name__ == "__main__":
    main()
