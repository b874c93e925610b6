"""How soon a parameter change is on the timeline: the real pipeline (lab, Redis, one worker,
beat, a SQLite store, no heartbeat, 1 s polling), ``--changes`` times ``SET GLOBAL sync_binlog``
toggled on replica1, each timed from the statement's return to the stored ``param_change``
(the row the timeline draws), and the change's window (``first_new_at`` − ``last_old_at``).

Prints p50 and max of both, in seconds and in poll intervals.

    .venv/bin/python bench/param_change.py --changes 10
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.integration.pipeline_stack import start_pipeline

from lagscope.lab import Lab, LabConfig
from lagscope.models import Instance, ParamChange

INTERVAL_S = 1.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--params-every", type=float, default=5.0, help="LAGSCOPE_PARAMS_EVERY_S")
    args = parser.parse_args()
    lab = Lab.start(LabConfig(replicas=2))
    shown: list[float] = []
    windows: list[float] = []
    try:
        with (
            tempfile.TemporaryDirectory(prefix="lagscope-bench-") as tmp,
            start_pipeline(
                lab, Path(tmp), params_every_s=args.params_every, heartbeat=False
            ) as pipe,
            lab.connect("replica1") as conn,
            conn.cursor() as cur,
        ):
            cur.execute("SELECT @@global.sync_binlog")
            value = int(cur.fetchone()[0])
            for n in range(args.changes):
                value = 1 - value
                time.sleep(0.37 * (n % 3))  # changes fall at different points of a tick
                cur.execute(f"SET GLOBAL sync_binlog = {value}")
                made = time.time()
                change = None
                while change is None and time.time() - made < 30:
                    with pipe.session() as s:
                        change = s.scalar(
                            select(ParamChange)
                            .join(Instance)
                            .where(
                                Instance.name == "replica1",
                                ParamChange.name == "sync_binlog",
                                ParamChange.new_value == str(value),
                            )
                            .order_by(ParamChange.id.desc())
                        )
                    if change is not None and change.first_new_at.timestamp() < made - 1:
                        change = None  # an earlier toggle to the same value
                    time.sleep(0.02)
                if change is None:
                    print(f"change {n}: not seen within 30 s")
                    continue
                shown.append(time.time() - made)
                windows.append((change.first_new_at - change.last_old_at).total_seconds())
            cur.execute(f"SET GLOBAL sync_binlog = {value}")
    finally:
        lab.stop()
    for label, values in (("on the timeline after", shown), ("change window", windows)):
        if values:
            p50, top = statistics.median(values), max(values)
            print(
                f"{label}: p50 {p50:.2f} s ({p50 / INTERVAL_S:.1f} intervals),"
                f" max {top:.2f} s ({top / INTERVAL_S:.1f} intervals), n={len(values)}"
            )


if __name__ == "__main__":
    main()
