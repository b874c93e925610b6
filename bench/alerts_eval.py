"""Cost of alert evaluation after a tick, and of a rule's 24 h preview, on a SQLite store.

A cluster of a source and 3 replicas, 10 rules (one per metric kind, 7 channel metrics over the 3
channels and 3 server metrics over the 4 servers), 100 ticks; then a lag rule's preview over
86,400 raw samples on one channel. Figures, not assertions: the machine is small and shared.

``--figures`` compares the two ways in instead, per cluster tick: ``--clusters`` such clusters
ticked as a poll owner ticks them (tests/owner_ticks.py) into two stores built alike, one judged
on the ticks' figures (``evaluate_ticks``, the batch in one transaction, the rules kept), the
other read back (``evaluate_cluster``, a transaction per cluster, as the Celery path); the
median over the ticks of each run, and the median of ``--runs`` runs.

    .venv/bin/python bench/alerts_eval.py [--ticks 100]
    .venv/bin/python bench/alerts_eval.py --figures [--clusters 10 --ticks 60 --runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import event, insert, select
from sqlalchemy.orm import Session, sessionmaker

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.owner_ticks import OwnerTicks

from lagscope.alerts import rules as alert_rules
from lagscope.alerts.evaluation import evaluate_cluster, tick_rules_query
from lagscope.alerts.preview import preview
from lagscope.alerts.tick_figures import evaluate_ticks
from lagscope.db import make_engine, make_session_factory
from lagscope.inventory import instances as inventory
from lagscope.models import Channel, InstanceSample, Sample
from lagscope.security.secret_box import SecretBox
from lagscope.store_setup import upgrade

METRICS = (
    "lag",
    "sql_stopped",
    "io_stopped",
    "trx_behind",
    "replication_error",
    "eta",
    "lag_disagreement",
    "unreachable",
    "clock_skew",
    "param_changed",
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ticks", type=int, default=100)
    parser.add_argument("--figures", action="store_true", help="evaluate_ticks vs evaluate_cluster")
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.figures:
        compare(args.clusters, args.ticks, args.runs)
        return
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'store.db'}"
        upgrade(url)
        engine = make_engine(url)
        sessions = make_session_factory(engine)
        now = datetime.now(UTC).replace(microsecond=0)
        day_ago = now - timedelta(hours=24)
        (cluster_id,) = fleet(sessions, 1)
        with sessions() as s:
            channel_ids = list(s.scalars(select(Channel.id).order_by(Channel.id)))
        with sessions() as s, s.begin():
            # A lag alternating 1 s / 50 s every 10 minutes, for the preview.
            rows = [
                {
                    "channel_id": channel_ids[0],
                    "ts": day_ago + timedelta(seconds=i),
                    "verdict": 0,
                    "lag_s": 50.0 if (i // 600) % 2 else 1.0,
                    "sql_running": True,
                    "io_state": 1,
                    "trx_behind": 0,
                    "disagreement": False,
                }
                for i in range(86_400)
            ]
            s.execute(insert(Sample), rows)
        took = []
        t = now.timestamp()
        for k in range(args.ticks):
            t += 1
            at = datetime.fromtimestamp(t, UTC)
            with sessions() as s, s.begin():
                for cid in channel_ids:
                    s.add(
                        Sample(
                            channel_id=cid,
                            ts=at,
                            verdict=0,
                            lag_s=float(k % 50),
                            sql_running=True,
                            io_state=1,
                            trx_behind=k,
                            disagreement=False,
                        )
                    )
                for instance in inventory.get_cluster(s, cluster_id).instances:
                    s.add(InstanceSample(instance_id=instance.id, ts=at, reachable=True))
                    instance.last_polled_at = at
            with sessions() as s, s.begin():
                start = time.perf_counter()
                evaluate_cluster(s, cluster_id, t)
                took.append(time.perf_counter() - start)
        took.sort()
        print(
            f"evaluate_cluster, {len(METRICS)} rules, {args.ticks} ticks: "
            f"median {statistics.median(took) * 1000:.1f} ms, "
            f"p90 {took[int(len(took) * 0.9) - 1] * 1000:.1f} ms"
        )
        with sessions() as s:
            rule = alert_rules.get_rule(s, 1)
            runs = []
            for _ in range(3):
                start = time.perf_counter()
                incidents = preview(s, rule, now)
                runs.append(time.perf_counter() - start)
        print(
            f"preview of a lag rule over 86,400 samples: median {statistics.median(runs):.2f} s, "
            f"{len(incidents)} incidents"
        )
        engine.dispose()


def fleet(sessions: sessionmaker[Session], clusters: int) -> list[int]:
    """``clusters`` clusters of a source and 3 replicas with a channel each (seen a day ago),
    and the rules."""
    box = SecretBox("bench", b"unpolled-salt")
    seen = datetime.now(UTC) - timedelta(hours=24)
    with sessions() as s, s.begin():
        ids = []
        for n in range(clusters):
            cluster = inventory.create_cluster(s, f"bench{n}")
            inventory.add_instance(s, box, cluster, "src", "127.0.0.1", 3306, "m", "p", "source")
            for i in range(3):
                replica = inventory.add_instance(
                    s, box, cluster, f"r{i}", "127.0.0.1", 3307 + i, "m", "p"
                )
                replica.channels.append(Channel(name="", first_seen_at=seen))
            s.flush()
            ids.append(cluster.id)
        for metric in METRICS:
            alert_rules.create_rule(
                s, {"name": metric, "metric": metric, "threshold": 30, "for_s": 10}
            )
    return ids


def compare(clusters: int, ticks: int, runs: int) -> None:
    names = ("evaluate_ticks", "evaluate_cluster")
    per_tick: dict[str, list[float]] = {name: [] for name in names}
    reads: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            for name in names:
                took, selects = _judged(Path(tmp), name, clusters, ticks)
                per_tick[name].append(statistics.median(took) / clusters)
                reads[name].append(statistics.median(selects) / clusters)
    ours, theirs = (statistics.median(per_tick[n]) for n in names)
    print(
        f"{clusters} clusters, {len(METRICS)} rules, {ticks} ticks, median of {runs} runs, "
        f"per cluster tick: evaluate_ticks {ours * 1000:.2f} ms, evaluate_cluster "
        f"{theirs * 1000:.2f} ms ({theirs / ours:.1f}×); runs {_ms(per_tick[names[0]])}"
        f" vs {_ms(per_tick[names[1]])}; SELECTs per cluster tick "
        f"{statistics.median(reads[names[0]]):.1f} vs {statistics.median(reads[names[1]]):.1f}"
    )


def _ms(values: list[float]) -> str:
    return "/".join(f"{v * 1000:.2f}" for v in values)


def _judged(tmp: Path, name: str, clusters: int, ticks: int) -> tuple[list[float], list[int]]:
    """The seconds each tick's judging took (its transaction included) for the whole batch,
    and the SELECTs it sent."""
    url = f"sqlite:///{tmp / name}.db"
    upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    ids = fleet(sessions, clusters)
    with sessions() as s:
        rules = list(s.scalars(tick_rules_query()))
    owners = [OwnerTicks(sessions, cid) for cid in ids]
    start_at = datetime.now(UTC).replace(microsecond=0)
    took: list[float] = []
    selects: list[int] = []
    seen: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *a: seen.append(a[2]))
    for k in range(ticks):
        at = start_at + timedelta(seconds=k)
        figures = []
        for ticked in owners:
            cluster = ticked.cluster
            lag = {"lag_s": float(k % 50), "trx_behind": k}
            samples = {c.id: lag for i in cluster.instances for c in i.channels}
            figures.append(ticked.tick(at, samples, {i.id: {} for i in cluster.instances}))
        seen.clear()
        start = time.perf_counter()
        if name == "evaluate_ticks":
            with sessions() as s, s.begin():
                evaluate_ticks(s, figures, at.timestamp(), rules)
        else:
            for cluster_id in ids:
                with sessions() as s, s.begin():
                    evaluate_cluster(s, cluster_id, at.timestamp())
        took.append(time.perf_counter() - start)
        selects.append(sum(q.lstrip().startswith("SELECT") for q in seen))
    engine.dispose()
    return took, selects


if __name__ == "__main__":
    main()
