"""The real lag of replica1, read by the test itself, not by Lagscope.

The newest load row applied on the replica carries the source's commit clock (row events copy
``created_at``; the lab shares one clock). It is found by the primary key, not by
``MAX(created_at)``: that column has no index and the whole suite fills the table (e2e and
integration loads at 2,500 trx/s), so the scan took 0.6 s (1.6 s at worst) at 1.5 M rows on a
replica under strict flush, against 2 ms by id. A truth that slow missed its own pace and said
little about *when* it was true. Ids follow commit order to within the few transactions in
flight at once (a few ms of commit clock at 2,500 trx/s).
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Iterable

from lagscope.models import Sample

NEWEST_SQL = "SELECT UNIX_TIMESTAMP(created_at) FROM lagscope_load.events ORDER BY id DESC LIMIT 1"
# Two truth readings further apart than this are not interpolated between (the lag may have
# turned in between).
MAX_GAP_S = 2.0


def newest_applied_s(lab) -> float:
    """The source commit time (epoch s) of the newest load row applied on replica1."""
    with lab.connect("replica1") as conn, conn.cursor() as cur:
        cur.execute(NEWEST_SQL)
        (newest,) = cur.fetchone()
    return float(newest)


class TruthRecorder:
    """Reads the real lag about 4 times a second in a thread, as (epoch s, lag s) pairs.

    How many readings it gets is up to the machine; tests pair Lagscope's samples with the
    readings around them (:meth:`pairs`) and count pairs, not readings."""

    def __init__(self, lab, every_s: float = 0.25) -> None:
        self._lab = lab
        self._every_s = every_s
        self.readings: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TruthRecorder:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(self._every_s):
            before = time.time()
            newest = newest_applied_s(self._lab)
            at = (before + time.time()) / 2  # the read happened in between
            self.readings.append((at, at - newest))

    def at(self, ts: float) -> float | None:
        """The truth at ``ts``, interpolated between the readings around it (None outside, or
        when they are more than MAX_GAP_S apart)."""
        readings = list(self.readings)  # the thread appends meanwhile
        i = bisect.bisect_left(readings, (ts, float("-inf")))
        if i < len(readings) and readings[i][0] == ts:
            return readings[i][1]
        if i == 0 or i == len(readings):
            return None
        (t0, l0), (t1, l1) = readings[i - 1], readings[i]
        if t1 - t0 > MAX_GAP_S:
            return None
        return l0 + (l1 - l0) * (ts - t0) / (t1 - t0)

    def pairs(self, rows: Iterable[Sample]) -> list[tuple[Sample, float]]:
        """Each of Lagscope's samples with the truth at its time, where the truth is known."""
        return [(r, t) for r in rows if (t := self.at(r.ts.timestamp())) is not None]
