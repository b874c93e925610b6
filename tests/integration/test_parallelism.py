"""The source's binlog windows on the real lab (MariaDB): marked, read after writes from
several sessions, grouped by group commit and simulated; the API's answer."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from lagscope.collectors.binlog_dump import read_dump_window
from lagscope.collectors.binlog_sample import read_mark, read_window
from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.db import make_engine, make_session_factory
from lagscope.errors import AccessDenied
from lagscope.history.parallelism import parallelism
from lagscope.ingest.commit_samples import sample_all
from lagscope.inventory import instances as inventory
from lagscope.models import (
    ApplierWorkerSample,
    Channel,
    CommitSample,
    InstanceSample,
    ParamChange,
    ParamValue,
    Sample,
)
from lagscope.security.secret_box import store_box
from lagscope.store_setup import upgrade

from .api_stack import api_server

pytestmark = pytest.mark.integration

SECRET = "parallelism-test-secret-5d2c8e1b7a4f9063-Rw"
WRITERS, EACH = 8, 40


def write_concurrently(lab) -> None:
    conn = lab.connect("source")
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS parallelism_test")
        cur.execute(
            "CREATE TABLE IF NOT EXISTS parallelism_test.t"
            " (id INT AUTO_INCREMENT PRIMARY KEY, writer INT, v VARCHAR(64))"
        )
    conn.close()

    def writer(n: int) -> None:
        own = lab.connect("source")
        try:
            with own.cursor() as cur:
                for i in range(EACH):
                    cur.execute(
                        "INSERT INTO parallelism_test.t (writer, v) VALUES (%s, %s)", (n, str(i))
                    )
                    own.commit()
        finally:
            own.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)


def test_a_window_after_concurrent_writes_is_grouped_and_simulated(lab, tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    sessions = make_session_factory(make_engine(url))
    box = store_box(sessions, SECRET)
    user, password = lab.credentials.monitor
    with sessions() as s, s.begin():
        cluster = inventory.create_cluster(s, "lab")
        server = lab.server("source")
        source = inventory.add_instance(
            s, box, cluster, "source", server.host, server.port, user, password, "source"
        )
        source.flavor = "mariadb"  # what the first poll would have set
        cluster_id = cluster.id

    assert sample_all(sessions, box, None, time.time()) == 0  # the first run only marks
    write_concurrently(lab)
    assert sample_all(sessions, box, None, time.time()) == 1
    with sessions() as s:
        window = s.scalars(select(CommitSample).where(CommitSample.transactions > 0)).one()
        found = parallelism(s, cluster_id)
    assert window.transactions >= WRITERS * EACH * 0.5  # the window holds most of them
    assert found.source == "source" and found.transactions == window.transactions
    assert found.conservative[1] == 1.0 and found.optimistic[1] == 1.0
    assert found.optimistic[4] >= found.conservative[4] >= 1.0
    assert found.optimistic[4] > 3.0  # the bound: no parents, near-equal sizes
    print(
        f"\n{found.transactions} transactions in {found.groups} group commits"
        f" (mean {found.mean_group_size:.2f}); conservative 2/4/8 workers:"
        f" {found.conservative[2]:.2f} {found.conservative[4]:.2f} {found.conservative[8]:.2f}"
    )

    with api_server(url, secret_key=SECRET) as api, api.client() as client:
        answer = client.get(f"/api/v1/clusters/{cluster_id}/parallelism")
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert [p["workers"] for p in body["conservative"]] == list(range(1, 17))
        assert body["transactions"] == found.transactions
        assert client.get("/api/v1/clusters/999/parallelism").status_code == 404


def test_a_journal_step_that_adds_workers_shows_predicted_and_measured_capacity(tmp_path):
    """Rows written directly, every figure known: the source committed in groups of 3, the
    replica applied 500 trx/s behind a backlog with one applier, then 900 with 4 workers on 2
    cores. Predicted 500 × min(3, 2) = 1,000 trx/s; measured 900: −10 %."""
    at = datetime(2030, 1, 1, tzinfo=UTC)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    sessions = make_session_factory(make_engine(url))
    box = store_box(sessions, SECRET)
    with sessions() as s, s.begin():
        cluster = inventory.create_cluster(s, "lab")
        source = inventory.add_instance(
            s, box, cluster, "source", "127.0.0.1", 1, "u", "p", "source"
        )
        replica = inventory.add_instance(s, box, cluster, "replica1", "127.0.0.1", 2, "u", "p")
        channel = Channel(instance_id=replica.id, name="", first_seen_at=at - timedelta(days=1))
        s.add(channel)
        s.flush()
        s.add(
            CommitSample(
                instance_id=source.id,
                taken_at=at - timedelta(minutes=3),
                transactions=60,
                groups=[[400, 410, 420]] * 20,
            )
        )
        s.add(
            ParamChange(
                instance_id=replica.id,
                name="slave_parallel_threads",
                old_value="0",
                new_value="4",
                last_old_at=at - timedelta(seconds=1),
                first_new_at=at,
            )
        )
        for i in range(-120, 120):
            rate = 500.0 if i < 0 else 900.0
            s.add(
                Sample(
                    channel_id=channel.id,
                    ts=at + timedelta(seconds=i),
                    verdict=2,
                    lag_s=30.0,
                    source_rate=1200.0,
                    apply_rate=rate,
                    not_received=0,
                    received_not_applied=5000,
                )
            )
        cluster_id = cluster.id
    with api_server(url, secret_key=SECRET, replica_cores=2) as api, api.client() as client:
        answer = client.get(
            f"/api/v1/clusters/{cluster_id}/journal",
            params={
                "start": (at - timedelta(minutes=5)).isoformat(),
                "end": (at + timedelta(minutes=5)).isoformat(),
                "width_s": 100,
                "settle_s": 5,
                "min_samples": 10,
            },
        )
        assert answer.status_code == 200, answer.text
        (step,) = answer.json()["steps"]
        (impact,) = step["impacts"]
        prediction = impact["prediction"]
        assert prediction["workers_before"] == 1 and prediction["workers_after"] == 4
        assert prediction["mode"] == "conservative" and prediction["cores"] == 2
        assert prediction["stream_allows"] == pytest.approx(3.0, rel=0.05)
        assert prediction["factor"] == pytest.approx(2.0)
        assert prediction["predicted"] == pytest.approx(1000.0)
        assert prediction["measured"] == pytest.approx(900.0)
        assert prediction["error"] == pytest.approx(-0.1)
        assert impact["after"]["capacity"] == pytest.approx(900.0)


def test_a_journal_step_that_relaxes_flush_shows_predicted_and_measured_capacity(tmp_path):
    """Rows written directly, every figure known. Before the step the serial applier applied
    500 trx/s behind a backlog with 2 threads always busy, one of them waiting for the relay
    log; the binary log's fsyncs took 0.2 s/s over 500 fsyncs/s (0.4 ms each) and InnoDB
    fsynced 500 times a second. Per transaction: 4 thread-ms, of which redo 0.4 + binlog 0.4 +
    relay wait 2. Relaxing all three leaves 1.2 ms: predicted 500 × 4 / 1.2 = 1,666.7 trx/s;
    measured 2,000: +20 %. A replica whose settings did not change gets no prediction."""
    at = datetime(2030, 1, 1, tzinfo=UTC)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    sessions = make_session_factory(make_engine(url))
    box = store_box(sessions, SECRET)
    with sessions() as s, s.begin():
        cluster = inventory.create_cluster(s, "lab")
        inventory.add_instance(s, box, cluster, "source", "127.0.0.1", 1, "u", "p", "source")
        replicas = [
            inventory.add_instance(s, box, cluster, name, "127.0.0.1", port, "u", "p")
            for name, port in (("replica1", 2), ("replica2", 3))
        ]
        channels = []
        for replica in replicas:
            channel = Channel(instance_id=replica.id, name="", first_seen_at=at - timedelta(days=1))
            s.add(channel)
            channels.append(channel)
        s.flush()
        for name, old, new in (
            ("innodb_flush_log_at_trx_commit", "1", "2"),
            ("sync_binlog", "1", "0"),
            ("sync_relay_log", "1", "0"),
        ):
            s.add(
                ParamChange(
                    instance_id=replicas[0].id,
                    name=name,
                    old_value=old,
                    new_value=new,
                    last_old_at=at - timedelta(seconds=1),
                    first_new_at=at,
                )
            )
        for i in range(-120, 120):
            ts = at + timedelta(seconds=i)
            for channel in channels:
                s.add(
                    Sample(
                        channel_id=channel.id,
                        ts=ts,
                        verdict=2,
                        lag_s=30.0,
                        source_rate=2500.0,
                        apply_rate=500.0 if i < 0 else 2000.0,
                        not_received=0,
                        received_not_applied=50000,
                    )
                )
            if i < 0:
                s.add(
                    InstanceSample(
                        instance_id=replicas[0].id,
                        ts=ts,
                        reachable=True,
                        commits_per_s=500.0,
                        binlog_group_commits_per_s=500.0,
                        data_fsyncs_per_s=500.0,
                        binlog_fsync_s_per_s=0.2,
                        relay_log_fsync_s_per_s=0.8,
                        fsync_latency_s=0.0003,
                    )
                )
                s.add(
                    ApplierWorkerSample(
                        instance_id=replicas[0].id,
                        ts=ts,
                        channel="",
                        workers=2,
                        busy=2,
                        busy_mask=b"\x03",
                        active=2,
                        active_mask=b"\x03",
                        errors=0,
                        relay_waiting=1,
                    )
                )
        cluster_id = cluster.id
    with api_server(url, secret_key=SECRET) as api, api.client() as client:
        answer = client.get(
            f"/api/v1/clusters/{cluster_id}/journal",
            params={
                "start": (at - timedelta(minutes=5)).isoformat(),
                "end": (at + timedelta(minutes=5)).isoformat(),
                "width_s": 100,
                "settle_s": 5,
                "min_samples": 10,
            },
        )
        assert answer.status_code == 200, answer.text
        (step,) = answer.json()["steps"]
        by_name = {i["channel"]["instance_name"]: i for i in step["impacts"]}
        assert by_name["replica2"]["durability"] is None
        durability = by_name["replica1"]["durability"]
        assert durability["settings"] == [
            "innodb_flush_log_at_trx_commit 1 → 2",
            "sync_binlog 1 → 0",
            "sync_relay_log 1 → 0",
        ]
        assert durability["applier_s_per_trx"] == pytest.approx(0.004)
        removed = {r["what"]: r["s_per_trx"] for r in durability["removed"]}
        assert removed == pytest.approx(
            {"redo log fsync": 0.0004, "binary log fsync": 0.0004, "relay-log wait": 0.002}
        )
        assert durability["capped"] is False and durability["unknown"] == []
        assert durability["factor"] == pytest.approx(4 / 1.2)
        assert durability["predicted"] == pytest.approx(2000 / 1.2)
        assert durability["measured"] == pytest.approx(2000.0)
        assert durability["error"] == pytest.approx(0.2)


def test_the_parallelism_answer_predicts_relaxing_a_strict_replica_behind_now(tmp_path):
    """The last 2 minutes as the journal test's before window (4 thread-ms per transaction at
    500 trx/s; redo 0.4, binlog 0.4, relay wait 2): relaxing all three predicts 1,666.7 trx/s.
    replica2, behind with relaxed settings, and replica3, strict but caught up, get nothing."""
    now = datetime.now(UTC)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    sessions = make_session_factory(make_engine(url))
    box = store_box(sessions, SECRET)
    with sessions() as s, s.begin():
        cluster = inventory.create_cluster(s, "lab")
        inventory.add_instance(s, box, cluster, "source", "127.0.0.1", 1, "u", "p", "source")
        replicas = [
            inventory.add_instance(s, box, cluster, f"replica{n}", "127.0.0.1", 1 + n, "u", "p")
            for n in (1, 2, 3)
        ]
        channels = [
            Channel(instance_id=r.id, name="", first_seen_at=now - timedelta(days=1))
            for r in replicas
        ]
        s.add_all(channels)
        s.flush()
        strict = {"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "1", "sync_relay_log": "1"}
        relaxed = {"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0", "sync_relay_log": "0"}
        for replica, values in zip(replicas, (strict, relaxed, strict), strict=True):
            for name, value in values.items():
                s.add(ParamValue(instance_id=replica.id, name=name, value=value, since=now))
        for i in range(-110, 0):
            ts = now + timedelta(seconds=i)
            for n, channel in enumerate(channels):
                behind = n < 2
                s.add(
                    Sample(
                        channel_id=channel.id,
                        ts=ts,
                        verdict=2 if behind else 0,
                        lag_s=30.0 if behind else 0.0,
                        source_rate=2500.0 if behind else 300.0,
                        apply_rate=500.0 if behind else 300.0,
                        not_received=0,
                        received_not_applied=50000 if behind else 0,
                    )
                )
            for replica in replicas:
                s.add(
                    InstanceSample(
                        instance_id=replica.id,
                        ts=ts,
                        reachable=True,
                        commits_per_s=500.0,
                        binlog_group_commits_per_s=500.0,
                        data_fsyncs_per_s=500.0,
                        binlog_fsync_s_per_s=0.2,
                    )
                )
                s.add(
                    ApplierWorkerSample(
                        instance_id=replica.id,
                        ts=ts,
                        channel="",
                        workers=2,
                        busy=2,
                        busy_mask=b"\x03",
                        active=2,
                        active_mask=b"\x03",
                        errors=0,
                        relay_waiting=1,
                    )
                )
        cluster_id = cluster.id
    with api_server(url, secret_key=SECRET) as api, api.client() as client:
        answer = client.get(f"/api/v1/clusters/{cluster_id}/parallelism")
        assert answer.status_code == 200, answer.text
        (found,) = answer.json()["durability"]
        assert found["instance"] == "replica1"
        prediction = found["prediction"]
        assert prediction["settings"] == [
            "innodb_flush_log_at_trx_commit 1 → 2",
            "sync_binlog 1 → 0",
            "sync_relay_log 1 → 0",
        ]
        assert prediction["predicted"] == pytest.approx(2000 / 1.2)
        assert prediction["measured"] is None and prediction["error"] is None


def test_the_replication_protocol_reads_the_same_group_commits_and_needs_replication_slave(lab):
    """The dump reader (MySQL's path to its commit parents) on the lab's MariaDB source: from
    one mark, the same window read over COM_BINLOG_DUMP as by SHOW BINLOG EVENTS gives the same
    group commits and sizes. The monitoring user, without REPLICATION SLAVE, is refused with
    the privilege named; the lab's replication user is not."""
    server = lab.server("source")

    def spec(user: str) -> ConnectionSpec:
        login, password = getattr(lab.credentials, user)
        return ConnectionSpec(server.host, server.port, login, password, connect_timeout_s=3.0,
                              read_timeout_s=6.0)  # fmt: skip

    monitor = PyMySQLExecutor(spec("monitor"))
    try:
        mark = read_mark(monitor)
        assert mark is not None
        write_concurrently(lab)
        shown = read_window(monitor, mark)
    finally:
        monitor.close()
    with pytest.raises(AccessDenied, match="REPLICATION SLAVE"):
        read_dump_window(spec("monitor"), mark, mariadb=True)
    dumped = read_dump_window(spec("repl"), mark, mariadb=True, limit=shown.events)
    assert dumped.checksum  # MariaDB 10.11 writes CRC32 by default: the trailer was skipped
    assert dumped.parents == []  # MariaDB's GTID events carry group-commit ids, not parents
    assert dumped.groups == [list(g) for g in shown.groups]
    assert sum(len(g) for g in dumped.groups) >= WRITERS * EACH * 0.5
    assert max(len(g) for g in dumped.groups) > 1  # concurrent writers group-committed
