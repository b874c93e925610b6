"""A poll's client CPU against the bare PyMySQL poll of the same statements, the poller alone:
one ``InstancePoller`` per lab server (source, replica1, replica2, replica1, replica2 — the
pipeline's mix), each polled in turn on this thread, no Celery, no owner, no store. What it
isolates is the reading: the poller's statements, its answer read and parsed
(collectors/answer_reader.py), the snapshot built. The bare poll (bench/poll_throughput.py's)
sends the same batches over plain PyMySQL and reads them with its cursor.

Prints, per round, the poller's CPU per poll, the bare poll's, and their ratio; ``--profile``
then prints a cProfile of the poller's rounds.

    .venv/bin/python bench/poll_parse.py --rounds 3 --polls 300
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.poller import InstancePoller
from lagscope.lab import Lab, LabConfig
from poll_throughput import bare_poll_cpu_ms  # bench/ is the script's dir

MIX = ("source", "replica1", "replica2", "replica1", "replica2")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--polls", type=int, default=300, help="polls of each server a round")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    lab = Lab.start(LabConfig(replicas=2))
    try:
        pollers = []
        for name in MIX:
            p = lab.connection_params(name, "monitor")
            spec = ConnectionSpec(
                host=p["host"], port=p["port"], user=p["user"], password=p["password"]
            )
            poller = InstancePoller(PyMySQLExecutor(spec))
            poller.poll()  # learns the server
            poller.poll()
            pollers.append(poller)

        def one_round() -> None:
            for _ in range(args.polls):
                for poller in pollers:
                    poller.poll()

        for n in range(args.rounds):
            cpu0 = time.process_time()
            one_round()
            per_poll = 1000 * (time.process_time() - cpu0) / (args.polls * len(pollers))
            bare = bare_poll_cpu_ms(lab, args.polls)
            print(
                f"round {n + 1}: poller {per_poll:.3f} ms per poll, bare PyMySQL poll"
                f" {bare:.3f} ms, poller / bare = {per_poll / bare:.2f}x"
            )
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            one_round()
            profile.disable()
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(30)
            print(out.getvalue())
        for poller in pollers:
            poller.close()
    finally:
        lab.stop()


if __name__ == "__main__":
    main()
