"""Applier workers and group commit over real HTTP.

Live: the real pipeline polls the MariaDB lab under a write load; setting
``slave_parallel_threads`` 0 → 4 on replica1 must show in the heatmap as more workers, several
of them busy, where serial apply had one; a monitoring user without PROCESS gets the GRANT it
lacks and its polls still succeed; the source's group-commit rates and the sync_binlog lane follow
a SET on the source. MySQL shapes: the recorded result sets of tests/fixtures go through the
poller, the recording and the API.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from lagscope.analysis.tick.workers import judge_workers
from lagscope.collectors.snapshot import InstanceSnapshot
from lagscope.config import Retention
from lagscope.demo.load import WriteLoad
from lagscope.errors import AccessDenied
from lagscope.ingest import rollups as maintenance
from lagscope.ingest.tick_memory import WorkerReading
from lagscope.ingest.tick_writes import TickWrites
from lagscope.ingest.workers import load_workers, workers_before, write_workers
from lagscope.inventory import instances as inventory
from lagscope.models import ApplierWorkerSample, Channel, Instance, Sample
from lagscope.security.secret_box import store_box
from tests.factories import secret_box
from tests.unit.collectors.test_recorded_flavors import load, replay

from .api_stack import ApiServer, api_server, sqlite_url
from .pipeline_stack import SECRET, Pipeline, now
from .waiting import wait_until

pytestmark = pytest.mark.integration


def iso(moment: datetime) -> str:
    return moment.isoformat()


@pytest.fixture(scope="module")
def pipeline_options() -> dict[str, object]:
    # Parameters and MariaDB's worker threads are read every poll here.
    return {"params_every_s": 1.0}


@pytest.fixture(scope="module")
def api_store(pipeline: Pipeline) -> str:
    return pipeline.url


def set_parallel_threads(conn, threads: int) -> None:
    """slave_parallel_threads can only change while the replica threads are stopped."""
    with conn.cursor() as cur:
        cur.execute("STOP SLAVE")
        cur.execute(f"SET GLOBAL slave_parallel_threads = {int(threads)}")
        cur.execute("START SLAVE")


def heatmap(api: ApiServer, cluster_id: int, since: datetime, name: str) -> dict[str, Any]:
    end = now()
    buckets = max(1, int((end - since).total_seconds() // 2))  # ~2 s per bucket
    with api.client() as c:
        response = c.get(
            f"/api/v1/clusters/{cluster_id}/applier-workers",
            params={"start": iso(since), "end": iso(end), "buckets": buckets},
        )
    assert response.status_code == 200, response.text
    (found,) = [i for i in response.json()["instances"] if i["instance_name"] == name]
    return found


def buckets_of(instance: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for channel in instance["channels"] for b in channel["buckets"]]


def busy_workers(buckets: list[dict[str, Any]]) -> set[int]:
    """Worker positions that were seen holding a transaction in any bucket."""
    return {
        i for b in buckets for i, share in enumerate(b["busy_share"]) if share is not None and share
    }


def seen(
    api: ApiServer, pipeline: Pipeline, since: datetime, workers: int, busy: int, reads: int
) -> dict[str, Any] | None:
    """replica1's heatmap since ``since`` once it has ``workers`` configured, ``reads`` readings
    and at least ``busy`` distinct workers seen busy; else None."""
    found = heatmap(api, pipeline.cluster_id, since, "replica1")
    buckets = buckets_of(found)
    if (
        found["configured_workers"] == workers
        and sum(b["reads"] for b in buckets) >= reads
        and len(busy_workers(buckets)) >= busy
    ):
        return found
    return None


def test_heatmap_shows_more_busy_workers_after_parallel_threads_0_to_4(
    lab, pipeline: Pipeline, api: ApiServer
):
    replica = lab.connect("replica1")
    load = WriteLoad(lambda: lab.connect("source"), threads=6, target_tps=2500)
    try:
        set_parallel_threads(replica, 0)
        load.start()
        serial_at = now()
        serial = wait_until(
            lambda: seen(api, pipeline, serial_at, workers=0, busy=1, reads=10),
            timeout_s=90,
            interval_s=1,
            message="ten serial readings of replica1, its SQL thread seen applying",
        )
        serial_buckets = buckets_of(serial)
        parallel_at = now()
        set_parallel_threads(replica, 4)
        parallel = wait_until(
            lambda: seen(api, pipeline, parallel_at, workers=4, busy=2, reads=1),
            timeout_s=120,
            interval_s=1,
            message="replica1's 4 workers, at least two of them seen busy",
        )
        pipeline.assert_alive()
    finally:
        load.stop()
        set_parallel_threads(replica, 0)
        replica.close()
    parallel_buckets = buckets_of(parallel)
    # Serial apply: one applier (the SQL thread as worker 0), never more than one busy.
    assert max(b["workers"] for b in serial_buckets) == 1
    assert busy_workers(serial_buckets) == {0}
    assert all(b["busy_avg"] <= 1 for b in serial_buckets)
    assert max(b["workers"] for b in parallel_buckets) == 4
    assert len(busy_workers(parallel_buckets)) > len(busy_workers(serial_buckets))
    assert serial["problem"] is None and parallel["problem"] is None
    newest = parallel["workers"]
    assert [w["worker_id"] for w in newest] == [1, 2, 3, 4]
    for name, buckets in (("serial", serial_buckets), ("parallel", parallel_buckets)):
        mean = sum(b["busy_avg"] for b in buckets) / len(buckets)
        print(f"\n{name}: {len(buckets)} buckets, busy avg {mean:.2f}, seen busy "
              f"{sorted(busy_workers(buckets))}")  # fmt: skip
    lab.wait_caught_up(timeout_s=120)


def test_a_monitoring_user_without_process_is_told_the_grant(
    lab, pipeline: Pipeline, api: ApiServer
):
    password = secrets.token_hex(12)
    admin = lab.connect("replica2")
    with admin.cursor() as cur:
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute("DROP USER IF EXISTS 'noproc'@'%'")
        cur.execute("CREATE USER 'noproc'@'%%' IDENTIFIED BY %s", (password,))
        cur.execute("GRANT BINLOG MONITOR, REPLICA MONITOR ON *.* TO 'noproc'@'%'")
        cur.execute("GRANT SELECT ON performance_schema.* TO 'noproc'@'%'")
    try:
        box = store_box(pipeline.sessions, SECRET)
        with pipeline.session() as session, session.begin():
            cluster = inventory.create_cluster(session, "noproc", poll_interval_s=1.0)
            server = lab.server("replica2")
            inventory.add_instance(
                session, box, cluster, "replica2-noproc", server.host, server.port, "noproc",
                password, "replica",
            )  # fmt: skip
            cluster_id = cluster.id
        since = now()
        found = wait_until(
            lambda: (i := heatmap(api, cluster_id, since, "replica2-noproc"))["problem"] and i,
            timeout_s=60,
            interval_s=0.5,
            message="the workers problem of the user without PROCESS",
        )
        assert found["problem"] == (
            "monitoring user lacks the privilege to read applier workers: "
            "GRANT PROCESS ON *.* TO 'noproc'@'<lagscope host>'"
        )
        assert found["channels"] == [] and found["workers"] == []
        with pipeline.session() as session:  # the rest of the poll still lands
            samples = session.scalar(
                select(func.count())
                .select_from(Sample)
                .join(Channel, Sample.channel_id == Channel.id)
                .join(Instance, Channel.instance_id == Instance.id)
                .where(Instance.name == "replica2-noproc", Sample.ts >= since)
            )
        assert samples
    finally:
        with pipeline.session() as session, session.begin():
            cluster_row = inventory.get_cluster(session, cluster_id)
            cluster_row.enabled = False
        with admin.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute("DROP USER IF EXISTS 'noproc'@'%'")
        admin.close()


def test_group_commit_rates_and_the_sync_binlog_lane_on_the_source(
    lab, pipeline: Pipeline, api: ApiServer
):
    source = lab.connect("source")
    with source.cursor() as cur:
        cur.execute("SELECT @@global.sync_binlog")
        (before,) = cur.fetchone()
    load = WriteLoad(lambda: lab.connect("source"), threads=6, target_tps=1500)
    since = now()
    flipped = "1" if int(before) == 0 else "0"

    def group_commit() -> dict[str, Any]:
        with api.client() as c:
            response = c.get(
                f"/api/v1/clusters/{pipeline.cluster_id}/group-commit",
                params={"start": iso(since), "end": iso(now()), "points": 100},
            )
        assert response.status_code == 200, response.text
        return response.json()

    try:
        load.start()
        with source.cursor() as cur:
            cur.execute(f"SET GLOBAL sync_binlog = {int(flipped)}")
        body = wait_until(
            lambda: (
                (g := group_commit())["series"]["commits_per_group"]["points"]
                and any(lane["name"] == "sync_binlog" and lane["changes"] for lane in g["lanes"])
                and g
            ),
            timeout_s=60,
            interval_s=1,
            message="group commit figures and the sync_binlog change on the source",
        )
    finally:
        load.stop()
        with source.cursor() as cur:
            cur.execute(f"SET GLOBAL sync_binlog = {int(before)}")
        source.close()
    assert body["instance_name"] == "source"
    commits = [p["avg"] for p in body["series"]["binlog_commits_per_s"]["points"]]
    groups = [p["avg"] for p in body["series"]["binlog_group_commits_per_s"]["points"]]
    assert max(commits) > 0 and max(groups) > 0
    assert all(p["avg"] >= 1 for p in body["series"]["commits_per_group"]["points"])
    (lane,) = [lane for lane in body["lanes"] if lane["name"] == "sync_binlog"]
    assert [(c["old_value"], c["new_value"]) for c in lane["changes"]] == [(str(before), flipped)]
    assert [s["value"] for s in lane["segments"]] == [str(before), flipped]
    assert {"semi_sync_avg_wait_s", "log_fsyncs_per_s"} <= set(body["series"])


# ------------------------------------------------------- MySQL shapes from recorded result sets


@pytest.fixture
def store_api(tmp_path) -> Iterator[ApiServer]:
    with api_server(sqlite_url(tmp_path)) as server:
        yield server


def record_workers(
    session: Session, replica: Instance, snap: InstanceSnapshot, at: datetime
) -> int:
    """One instance's workers judged and written as a tick does; returns the rows written."""
    known: dict[int, WorkerReading | None] = {}
    load_workers(session, known, [replica.id])
    before = workers_before(known[replica.id])
    judged = judge_workers(snap, at.timestamp(), before, replica.user)
    assert judged is not None
    writes = TickWrites()
    write_workers(writes, known, replica.id, at, judged)
    writes.send(session.connection())
    return len(judged.rows)


def test_mysql80_workers_from_recorded_result_sets_reach_the_api(store_api: ApiServer):
    fixture = load("mysql80_replica.json")
    _, poller = replay(fixture)
    first, second = poller.poll(), poller.poll()
    t0 = datetime(2031, 1, 1, tzinfo=UTC)
    with store_api.sessions() as session, session.begin():
        cluster = inventory.create_cluster(session, "mysql80")
        box = secret_box("unused")
        inventory.add_instance(session, box, cluster, "src", "127.0.0.1", 1, "u", "p", "source")
        replica = inventory.add_instance(
            session, box, cluster, "r80", "127.0.0.1", 2, "mon", "p", "replica"
        )
        written = record_workers(session, replica, first, t0)
        written += record_workers(session, replica, second, t0 + timedelta(seconds=1))
        cluster_id = cluster.id
    assert written == 2
    with store_api.client() as c:
        response = c.get(
            f"/api/v1/clusters/{cluster_id}/applier-workers",
            params={"start": iso(t0), "end": iso(t0 + timedelta(seconds=10)), "buckets": 1},
        )
    assert response.status_code == 200, response.text
    (r80,) = response.json()["instances"]
    (channel,) = r80["channels"]
    (bucket,) = channel["buckets"]
    # Workers 1 and 2 apply, 3 and 4 ended their last transaction 58 and 141 ms before the read.
    assert bucket["busy_share"] == [1.0, 1.0, 0.0, 0.0]
    assert bucket["busy_avg"] == 2.0
    assert bucket["workers"] == 4 and bucket["reads"] == 2
    # The second read is 1 s after the first: every worker did some work within it.
    assert bucket["active_share"] == [1.0, 1.0, 0.5, 0.5]
    assert [w["applying_trx"] != "" for w in r80["workers"]] == [True, True, False, False]
    assert r80["problem"] is None


def test_mysql_denied_table_is_stored_as_a_problem_with_the_users_grant(store_api: ApiServer):
    fixture = load("mysql80_replica.json")
    fake, poller = replay(fixture)
    sql = next(s for s in fake.answers if "replication_applier_status_by_worker" in s)
    fake.answers[sql] = AccessDenied("db:3306", "SELECT command denied", 1142)
    snapshot = poller.poll()
    with store_api.sessions() as session, session.begin():
        cluster = inventory.create_cluster(session, "mysql80-denied")
        replica = inventory.add_instance(
            session,
            secret_box("unused"),
            cluster,
            "r",
            "127.0.0.1",
            2,
            "mon",
            "p",
            "replica",
        )
        record_workers(session, replica, snapshot, datetime(2031, 1, 1, tzinfo=UTC))
        cluster_id = cluster.id
    with store_api.client() as c:
        body = c.get(f"/api/v1/clusters/{cluster_id}/applier-workers").json()
    assert body["instances"][0]["problem"] == (
        "monitoring user lacks the privilege to read applier workers: "
        "GRANT SELECT ON performance_schema.* TO 'mon'@'<lagscope host>'"
    )


def test_worker_samples_follow_raw_retention(store_api: ApiServer):
    old, fresh = datetime(2031, 1, 1, tzinfo=UTC), datetime(2031, 1, 9, tzinfo=UTC)
    with store_api.sessions() as session, session.begin():
        cluster = inventory.create_cluster(session, "retention")
        replica = inventory.add_instance(
            session,
            secret_box("unused"),
            cluster,
            "r",
            "127.0.0.1",
            2,
            "u",
            "p",
            "replica",
        )
        for ts in (old, fresh):
            session.add(
                ApplierWorkerSample(
                    instance_id=replica.id, ts=ts, channel="", workers=1, busy=0,
                    busy_mask=b"\x00", active=0, active_mask=b"\x00", errors=0,
                )
            )  # fmt: skip
        instance_id = replica.id
    with store_api.sessions() as session, session.begin():
        deleted = maintenance.enforce_retention(
            session, fresh.timestamp(), Retention(raw_days=3, minute_days=60, hour_days=730)
        )
    assert deleted["applier_worker_samples"] == 1
    with store_api.sessions() as session:
        kept = session.scalars(
            select(ApplierWorkerSample.ts).where(ApplierWorkerSample.instance_id == instance_id)
        ).all()
    assert kept == [fresh]
