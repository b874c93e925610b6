"""The clock-offset incident: a replica restarted under libfaketime so its whole clock is shifted,
and how the offset is measured from this machine.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from lagscope.lab.incidents.common import Incident, _check_replica
from lagscope.lab.topology import Lab


@contextlib.contextmanager
def clock_offset(
    lab: Lab, *, replica: str = "replica2", offset_s: float = 2.0
) -> Iterator[Incident]:
    """Restart ``replica`` with its clock ``offset_s`` ahead (libfaketime); restart it with the
    true clock on leaving. ``details["measured_offset_s"]`` is the server's ``NOW(6)`` minus the
    midpoint of the query's round trip."""
    _check_replica(lab, replica)
    lab.set_clock_offset(replica, offset_s)
    began = time.time()  # the server is back, its clock shifted
    try:
        lab.wait_caught_up(timeout_s=60)
        measured = measure_clock_offset(lab, replica)
        yield Incident(
            "clock_offset",
            "clock_skew",
            replica,
            details={"offset_s": offset_s, "measured_offset_s": round(measured, 4)},
            started_at=began,
        )
    finally:
        lab.set_clock_offset(replica, 0.0)
        lab.wait_caught_up(timeout_s=60)


def measure_clock_offset(lab: Lab, name: str) -> float:
    """Server clock minus ours, from the midpoint of the query's round trip."""
    with lab.connect(name) as conn, conn.cursor() as cur:
        sent = time.time()
        cur.execute("SELECT UNIX_TIMESTAMP(NOW(6))")
        received = time.time()
        row = cur.fetchone()
    assert row is not None
    return float(row[0]) - (sent + received) / 2
