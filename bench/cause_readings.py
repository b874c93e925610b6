"""What the cause readings cost a poll, on the real MariaDB lab (one source, one replica).

Three figures for replica1, polled over one persistent connection as the monitor user:
- healthy, cause readings in place (the registry as shipped: a trigger is checked, nothing sent);
- healthy, cause readings switched off (the registry without its cause rows: the batch of
  before), in alternating blocks with the previous one so both see the same machine load;
- behind: a replica1 session holds the row the SQL thread needs (the trigger stays on), so
  every poll sends the cause readings too (applier transactions, row and metadata-lock
  blockers, the relay log's table; the table's keys once).

Prints wall and client CPU per poll, median and p99, and for the behind polls what the server
did for them: its internal temporary tables per poll (``Created_tmp_tables``, and of those
``Created_tmp_disk_tables``: Aria, as every information_schema table with a BLOB column is;
global counters read on replica1 before and after, nothing else runs there), the statements
per poll and the information_schema tables they name (each named table is filled once per
statement), and how many statements join one. Figures, not assertions: the machine is small
and shared; run it a few times and quote medians.

    .venv/bin/python bench/cause_readings.py [--polls 2000] [--behind-polls 500]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from lagscope.collectors import poller as poller_module
from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor, ResultSet
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


_I_S_TABLE = re.compile(r"information_schema\.\w+", re.IGNORECASE)
_SCHEMA_TABLE = re.compile(r"(information_schema|performance_schema)\.\w+", re.IGNORECASE)


class Counting(PyMySQLExecutor):
    """The real executor, keeping the last batch's statements."""

    last: Sequence[str] = ()

    def run(self, statements: Sequence[str]) -> list[ResultSet]:
        self.last = list(statements)
        return super().run(statements)


def batch_shape(statements: Sequence[str]) -> str:
    i_s = [len(_I_S_TABLE.findall(sql)) for sql in statements]
    joins = sum(1 for n, sql in zip(i_s, statements, strict=True)
                if n and len(_SCHEMA_TABLE.findall(sql)) > 1)  # fmt: skip
    return (
        f"statements={len(statements)} information_schema tables named={sum(i_s)} "
        f"statements joining one={joins}"
    )


def tmp_tables(lab: Lab) -> dict[str, int]:
    with lab.connect("replica1") as conn, conn.cursor() as cur:
        cur.execute("SHOW GLOBAL STATUS LIKE 'Created_tmp%tables'")
        rows: Any = cur.fetchall()
    return {str(name): int(value) for name, value in rows}


def per_poll(before: dict[str, int], after: dict[str, int], polls: int) -> str:
    tables = (after["Created_tmp_tables"] - before["Created_tmp_tables"]) / polls
    disk = (after["Created_tmp_disk_tables"] - before["Created_tmp_disk_tables"]) / polls
    return f"server temporary tables per poll={tables:.2f} (on disk, Aria: {disk:.2f})"


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
        executor = Counting(spec)
        poller = InstancePoller(executor)
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
        before = tmp_tables(lab)
        measure(poller, args.block)
        print(f"{'healthy':34s} {batch_shape(executor.last)}")
        print(f"{'':34s} {per_poll(before, tmp_tables(lab), args.block)}")

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
            before = tmp_tables(lab)
            walls, cpus = measure(poller, args.behind_polls)
            after = tmp_tables(lab)
            print(line("behind (trigger on), blocked applier", walls, cpus))
            print(f"{'':34s} {batch_shape(executor.last)}")
            print(f"{'':34s} {per_poll(before, after, args.behind_polls)}")
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
