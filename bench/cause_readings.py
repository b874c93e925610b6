"""What the cause readings cost a poll, on the real MariaDB lab (one source, one replica).

Three figures for replica1, polled over one persistent connection as the monitor user:
- healthy, cause readings in place (the registry as shipped: a trigger is checked, nothing sent);
- healthy, cause readings switched off (the registry without its cause rows: the batch of
  before), in alternating blocks with the previous one so both see the same machine load;
- behind: a replica1 session holds the row the SQL thread needs (the trigger stays on), so
  every poll sends the cause readings too (applier transactions, row and metadata-lock
  blockers, the relay log's table; the table's keys once).

Prints wall and client CPU per poll, median and p99. Figures, not assertions: the machine is
small and shared; run it a few times and quote medians.

    .venv/bin/python bench/cause_readings.py [--polls 2000] [--behind-polls 500]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from lagscope.collectors import poller as poller_module
from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.poller import InstancePoller
from lagscope.collectors.readings import READINGS
from lagscope.lab import Lab, LabConfig
from poll_latency import measure, percentile  # bench/ is the script's own directory

# The registry without its cause rows, and the workers back on their slow cadence only.
WITHOUT_CAUSES = tuple(replace(r, hurry=None) for r in READINGS if r.when is None)


@contextmanager
def causes_switched_off() -> Iterator[None]:
    kept = poller_module.READINGS
    poller_module.READINGS = WITHOUT_CAUSES
    try:
        yield
    finally:
        poller_module.READINGS = kept


def line(label: str, walls: list[float], cpus: list[float]) -> str:
    return (
        f"{label:34s} polls={len(walls):5d} "
        f"wall p50={statistics.median(walls) * 1e3:.3f} ms "
        f"p99={percentile(walls, 0.99) * 1e3:.3f} ms "
        f"cpu p50={statistics.median(cpus) * 1e3:.3f} ms mean={statistics.mean(cpus) * 1e3:.3f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--polls", type=int, default=2000, help="healthy polls per variant")
    parser.add_argument("--behind-polls", type=int, default=500)
    parser.add_argument("--block", type=int, default=100, help="polls per alternating block")
    args = parser.parse_args()
    lab = Lab.start(LabConfig(replicas=1, proxied=()))
    try:
        user, password = lab.credentials.monitor
        server = lab.server("replica1")
        spec = ConnectionSpec(server.host, server.port, user, password)
        poller = InstancePoller(PyMySQLExecutor(spec))
        with lab.connect("source") as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS bench")
            cur.execute("CREATE TABLE IF NOT EXISTS bench.t (id INT PRIMARY KEY, v INT)")
            cur.execute("INSERT IGNORE INTO bench.t VALUES (1, 0)")
            cur.execute("GRANT SELECT ON bench.* TO 'monitor'@'%'")
        lab.wait_caught_up(timeout_s=60)
        measure(poller, 200)  # warm up
        with_causes: tuple[list[float], list[float]] = ([], [])
        without: tuple[list[float], list[float]] = ([], [])
        for _ in range(max(1, args.polls // args.block)):
            w, c = measure(poller, args.block)
            with_causes[0].extend(w)
            with_causes[1].extend(c)
            with causes_switched_off():
                w, c = measure(poller, args.block)
            without[0].extend(w)
            without[1].extend(c)
        print(line("healthy, cause readings in place", *with_causes))
        print(line("healthy, cause readings off", *without))

        blocker = lab.connect("replica1")
        try:
            with blocker.cursor() as cur:
                cur.execute("BEGIN")
                cur.execute("SELECT * FROM bench.t WHERE id = 1 FOR UPDATE")
            with lab.connect("source") as conn, conn.cursor() as cur:
                cur.execute("UPDATE bench.t SET v = v + 1 WHERE id = 1")
            deadline = time.monotonic() + 30
            while (snap := poller.poll()).evidence is None or not snap.evidence.blockers:
                if time.monotonic() > deadline:
                    raise SystemExit("the replica never showed the blocked applier")
                time.sleep(0.2)
            walls, cpus = measure(poller, args.behind_polls)
            print(line("behind (trigger on), blocked applier", walls, cpus))
            evidence = poller.poll().evidence
            print("evidence:", evidence)
        finally:
            blocker.rollback()
            blocker.close()
        poller.close()
    finally:
        lab.stop()


if __name__ == "__main__":
    main()
