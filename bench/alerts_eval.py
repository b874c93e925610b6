"""Cost of alert evaluation after a tick, and of a rule's 24 h preview, on a SQLite store.

A cluster of a source and 3 replicas, 10 rules (one per metric kind, 7 channel metrics over the 3
channels and 3 server metrics over the 4 servers), 100 ticks; then a lag rule's preview over
86,400 raw samples on one channel. Figures, not assertions: the machine is small and shared.

    .venv/bin/python bench/alerts_eval.py [--ticks 100]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import insert

from lagscope.alerts import rules as alert_rules
from lagscope.alerts.evaluation import evaluate_cluster
from lagscope.alerts.preview import preview
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'store.db'}"
        upgrade(url)
        engine = make_engine(url)
        sessions = make_session_factory(engine)
        now = datetime.now(UTC).replace(microsecond=0)
        day_ago = now - timedelta(hours=24)
        with sessions() as s, s.begin():
            cluster = inventory.create_cluster(s, "bench")
            box = SecretBox("bench", b"unpolled-salt")
            inventory.add_instance(s, box, cluster, "src", "127.0.0.1", 3306, "m", "p", "source")
            channels = []
            for i in range(3):
                replica = inventory.add_instance(
                    s, box, cluster, f"r{i}", "127.0.0.1", 3307 + i, "m", "p"
                )
                channel = Channel(name="", first_seen_at=day_ago)
                replica.channels.append(channel)
                channels.append(channel)
            s.flush()
            cluster_id, channel_ids = cluster.id, [c.id for c in channels]
            for metric in METRICS:
                alert_rules.create_rule(
                    s, {"name": metric, "metric": metric, "threshold": 30, "for_s": 10}
                )
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


if __name__ == "__main__":
    main()
