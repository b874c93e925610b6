"""Poll latency of one instance over a persistent connection, on the real MariaDB lab.

Prints median and p99 wall time and client CPU per poll for the source and a replica (with and
without the heartbeat reading), and the cost of connection setup (flavor + catalog). Figures,
not assertions: the machine is small and shared, so run it a few times and quote medians.

    .venv/bin/python bench/poll_latency.py [--polls 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time

from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.poller import InstancePoller
from lagscope.lab import Lab, LabConfig


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(poller: InstancePoller, polls: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(polls):
        w0, c0 = time.perf_counter(), time.process_time()
        poller.poll()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return walls, cpus


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--polls", type=int, default=2000)
    args = parser.parse_args()
    started = time.perf_counter()
    lab = Lab.start(LabConfig(replicas=2, proxied=("replica2",)))
    print(f"lab start: {time.perf_counter() - started:.2f} s")
    try:
        user, password = lab.credentials.monitor
        for name, heartbeat in (
            ("source", None),
            ("replica1", None),
            ("replica1", HeartbeatTable()),
        ):
            server = lab.server(name)
            spec = ConnectionSpec(server.host, server.port, user, password)
            poller = InstancePoller(PyMySQLExecutor(spec), heartbeat=heartbeat)
            s0 = time.perf_counter()
            poller.poll()  # connection + flavor + catalog + first poll
            setup = time.perf_counter() - s0
            measure(poller, 100)  # warm up
            walls, cpus = measure(poller, args.polls)
            label = f"{name}{' +heartbeat' if heartbeat else ''}"
            print(
                f"{label:22s} polls={args.polls} first={setup * 1e3:.2f} ms "
                f"wall p50={statistics.median(walls) * 1e3:.3f} ms "
                f"p99={percentile(walls, 0.99) * 1e3:.3f} ms "
                f"cpu p50={statistics.median(cpus) * 1e3:.3f} ms "
                f"=> {1 / statistics.mean(walls):.0f} polls/s serial"
            )
            poller.close()
    finally:
        lab.stop()


if __name__ == "__main__":
    main()
