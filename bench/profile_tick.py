"""Where a tick's CPU goes: ``poll_cluster`` (and the alert evaluation after it) in-process under
cProfile, on the live lab, for ``--clusters`` logical clusters of one source and four replicas
(the same store :mod:`bench.poll_throughput` builds).

Prints the CPU per instance poll of the whole loop (process time: the poll threads included)
and the functions that take it, by own time and by cumulative time. No Celery, no beat: this is
the task's body, which is what a worker spends its CPU on.

    .venv/bin/python bench/profile_tick.py --clusters 10 --rounds 20
    .venv/bin/python bench/profile_tick.py --clusters 10 --rules 3   # with alert evaluation
    .venv/bin/python bench/profile_tick.py --clusters 30 --engine owner   # the owner's path
    .venv/bin/python bench/profile_tick.py --clusters 30 --engine owner --store postgresql
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from lagscope.alerts.evaluation import evaluate_cluster
from lagscope.config.settings import Settings
from lagscope.db import make_engine, make_session_factory
from lagscope.engine.alert_judge import AlertJudge
from lagscope.engine.owner import batch_figures
from lagscope.ingest.reader import ClusterReader
from lagscope.ingest.tick import TickOptions, poll_cluster
from lagscope.ingest.tick_batch import poll_clusters
from lagscope.ingest.tick_cache import TickCache
from lagscope.lab import Lab, LabConfig
from lagscope.models import Cluster
from lagscope.security.secret_box import SecretBox, store_box
from poll_throughput import (  # bench/ is the script's dir
    REPLICAS_PER_CLUSTER,
    SECRET,
    bare_poll_cpu_ms,
    build_store,
    store_url,
)


class OwnerBatches:
    """Batches ticked as a poll owner ticks them: its clusters kept in memory between ticks,
    one transaction per batch, then its alert judge on the batch's figures."""

    def __init__(self, sessions: sessionmaker[Session], box: SecretBox, reader: ClusterReader):
        self.sessions, self.box, self.reader = sessions, box, reader
        self.cache = TickCache()
        self.options = TickOptions(params_every_s=5.0)
        self.judge = AlertJudge(sessions, queue=lambda _delivery: None)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        with self.sessions() as session, session.begin():
            yield session

    def tick(self, cluster_ids: list[int], judged: bool = True) -> None:
        done = poll_clusters(
            self.transaction, self.box, self.reader, cluster_ids, self.options, self.cache
        )
        if judged:
            self.judge(batch_figures(done.values()))  # as the owner's after-batch hook does


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20, help="ticks per cluster, profiled")
    parser.add_argument("--warmup", type=int, default=5, help="ticks per cluster, not profiled")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--rules", type=int, default=0, help="alert rules (poll_throughput's)")
    parser.add_argument(
        "--engine",
        choices=("celery", "owner"),
        default="celery",
        help="celery: one poll_cluster per cluster; owner: the owner's batches, kept in memory",
    )
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument(
        "--batch-instances",
        type=int,
        default=Settings.model_fields["owner_batch_instances"].default,
        help="servers per batch (default: the owner's)",
    )
    parser.add_argument("--read-threads", type=int, default=64, help="an owner: 64")
    parser.add_argument(
        "--plain",
        action="store_true",
        help="no cProfile: CPU per poll (all threads, and the recording thread's) beside the"
        " bare poll measured in the same run (run it under py-spy for a sampled profile)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lagscope-profile-") as tmp:
        url, postgres = store_url(args.store, Path(tmp))
        lab = Lab.start(LabConfig(replicas=2))
        try:
            build_store(url, lab, args.clusters, args.rules)
            sessions = make_session_factory(make_engine(url))
            box = store_box(sessions, SECRET)
            reader = ClusterReader(max_threads=args.read_threads)
            with sessions() as s:
                ids = [c.id for c in s.query(Cluster).order_by(Cluster.id)]

            owner = OwnerBatches(sessions, box, reader)

            def owner_round() -> None:
                per_batch = max(1, args.batch_instances // (1 + REPLICAS_PER_CLUSTER))
                for start in range(0, len(ids), per_batch):
                    # The owner looks for rules every few seconds: without, nothing judged.
                    owner.tick(ids[start : start + per_batch], judged=bool(args.rules))

            def celery_round() -> None:
                for cluster_id in ids:
                    with sessions() as session, session.begin():
                        poll_cluster(session, box, reader, cluster_id, params_every_s=5.0)
                    with sessions() as session, session.begin():
                        evaluate_cluster(session, cluster_id, time.time())

            one_round = owner_round if args.engine == "owner" else celery_round
            for _ in range(args.warmup):
                one_round()
            profile = cProfile.Profile()
            cpu0, wall0, own0 = time.process_time(), time.perf_counter(), time.thread_time()
            if not args.plain:
                profile.enable()
            for _ in range(args.rounds):
                one_round()
                time.sleep(0.05)
            profile.disable()
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            own = time.thread_time() - own0
            bare = bare_poll_cpu_ms(lab, 400) if args.plain else None
        finally:
            lab.stop()
            if postgres is not None:
                postgres.stop()
    polls = args.rounds * len(ids) * (1 + REPLICAS_PER_CLUSTER)
    print(
        f"{polls} instance polls in {wall:.1f} s wall; process CPU {cpu:.2f} s ="
        f" {1000 * cpu / polls:.3f} ms per instance poll (under cProfile: slower than without)"
    )
    if bare is not None:
        print(
            f"the ticks' own thread (prepare, record, alerts): {1000 * own / polls:.3f} ms per"
            f" instance poll; bare poll {bare:.3f} ms; ratio {cpu / polls * 1000 / bare:.2f}x"
        )
        return
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(key).print_stats(args.top)
        print(f"--- by {key} ---")
        print(out.getvalue().split("\n", 6)[-1])


if __name__ == "__main__":
    main()
