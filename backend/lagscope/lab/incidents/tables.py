"""The incidents' tables: created on the source, filled on every server at once without being
logged (the fill is setup, not part of the incident), sized to this machine's speed so the cause
lasts long enough to be seen, and dropped once the replicas have caught up.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from lagscope.errors import InvalidInput
from lagscope.lab.incidents.common import MAX_ROWS, SCHEMA, _running, _sql, query
from lagscope.lab.servers import LabError
from lagscope.lab.topology import Lab


def _create(lab: Lab, table: str, columns: str) -> None:
    """(Re)create ``lab_incidents.<table>`` on the source and wait until every replica has it."""
    query(lab, "source", f"CREATE DATABASE IF NOT EXISTS {SCHEMA}")
    query(lab, "source", _sql("DROP TABLE IF EXISTS {t}", table))
    query(lab, "source", _sql("CREATE TABLE {t} (", table) + columns + ") ENGINE=InnoDB")
    lab.wait_caught_up(timeout_s=60)


def _fill_everywhere(lab: Lab, table: str, rows: int, first: int = 1) -> float:
    """``(first, 0) … (rows, 0)`` into the table's two columns on every running server, not
    logged, all at once (MariaDB's sequence engine: ``seq_<first>_to_<rows>``). Returns the
    slowest server's seconds."""
    if not 1 <= first <= rows <= MAX_ROWS:
        raise InvalidInput(f"rows must be 1…{MAX_ROWS:,}, not {rows}")
    failures: list[BaseException] = []
    took: list[float] = []

    def fill(name: str) -> None:
        try:
            began = time.monotonic()
            with lab.connect(name) as conn, conn.cursor() as cur:
                cur.execute("SET SESSION sql_log_bin = 0")
                # The sequence engine's table name carries the row range.
                sequence = f"{SCHEMA}.seq_{int(first)}_to_{int(rows)}"
                cur.execute(
                    _sql("INSERT INTO {t} SELECT seq, 0 FROM {seq}", table).replace(
                        "{seq}", sequence
                    )
                )
            took.append(time.monotonic() - began)
        except BaseException as exc:  # re-raised below, in the caller's thread
            failures.append(exc)

    workers = [threading.Thread(target=fill, args=(name,)) for name in _running(lab)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if failures:
        raise LabError(f"filling {SCHEMA}.{table} failed: {failures[0]}") from failures[0]
    return max(took, default=0.0)


def _scan_s_per_row(lab: Lab, server: str, table: str, rows: int) -> float:
    """Seconds per row of a full scan of the table on ``server`` (a predicate no key serves),
    repeated for at least 0.2 s so that one scan's jitter does not decide."""
    statement = _sql("SELECT COUNT(*) FROM {t} WHERE n = -1", table)
    scans = 0
    with lab.connect(server) as conn, conn.cursor() as cur:
        began = time.monotonic()
        while scans < 3 or time.monotonic() - began < 0.2:
            cur.execute(statement)
            cur.fetchall()
            scans += 1
        took = time.monotonic() - began
    return took / (scans * rows)


def _fill_for(
    lab: Lab, table: str, lasting_s: float, cost: float, least: int, probe: int = 200_000
) -> int:
    """Fill the table with enough rows that the replicas' work on all of them (applying their
    changes, copying them) lasts about ``lasting_s``, on this machine, whatever its speed: a
    first ``probe`` rows are filled and timed, the work per row is taken as ``cost`` times a
    filled row's (a floor measured on the lab, so the real work lasts longer, never shorter),
    and the rest is filled. At least ``least`` rows. Returns the row count."""
    probe = min(probe, least)
    per_row_s = _fill_everywhere(lab, table, probe) / probe
    wanted = int(lasting_s / max(per_row_s * cost, 1e-9))
    rows = min(MAX_ROWS, max(least, wanted))
    if rows > probe:
        _fill_everywhere(lab, table, rows, first=probe + 1)
    return rows


@contextlib.contextmanager
def _table_lifetime(lab: Lab, table: str, catch_up_s: float = 300.0) -> Iterator[None]:
    """On leaving: wait until the replicas have caught up, then drop the table."""
    try:
        yield
    finally:
        lab.wait_caught_up(timeout_s=catch_up_s)
        if lab.is_running("source"):
            query(lab, "source", _sql("DROP TABLE IF EXISTS {t}", table))
            lab.wait_caught_up(timeout_s=catch_up_s)
