"""How long the MariaDB lab takes to start and stop (source + 2 replicas, replica2 proxied).

"Started" means every server answers, users and the heartbeat table exist, and both replicas
have caught up with the source (``Lab.start`` returns only then). The template datadir is built
once per MariaDB version and cached; the first run after installing MariaDB pays about a second
more, and is reported separately. Figures, not assertions: the machine is small and shared.

    .venv/bin/python bench/lab_start.py [--runs 5] [--replicas 2] [--delay-ms 0]
"""

from __future__ import annotations

import argparse
import statistics
import time

from lagscope.lab import Lab, LabConfig
from lagscope.lab.template import ensure_template


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    args = parser.parse_args()

    began = time.monotonic()
    ensure_template()
    print(f"template ready (cached or built) in {time.monotonic() - began:.2f} s")

    proxied = ("replica2",) if args.replicas >= 2 else ()
    config = LabConfig(replicas=args.replicas, proxied=proxied, proxy_delay_s=args.delay_ms / 1000)
    starts, stops = [], []
    for run in range(1, args.runs + 1):
        began = time.monotonic()
        lab = Lab.start(config)
        starts.append(time.monotonic() - began)
        began = time.monotonic()
        lab.stop()
        stops.append(time.monotonic() - began)
        print(f"run {run}: start {starts[-1]:.2f} s, stop {stops[-1]:.2f} s")
    print(
        f"median start {statistics.median(starts):.2f} s (min {min(starts):.2f}, "
        f"max {max(starts):.2f}); median stop {statistics.median(stops):.2f} s "
        f"over {args.runs} runs, source + {args.replicas} replicas"
    )


if __name__ == "__main__":
    main()
