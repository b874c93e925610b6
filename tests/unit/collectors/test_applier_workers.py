"""Applier workers: busy/idle per flavor from recorded result sets, the privilege problem, the
per-read summary (counts and masks) and the heatmap built from stored reads."""

from __future__ import annotations

import pytest

from lagscope.analysis.workers import (
    StoredRead,
    from_mask,
    heatmap,
    summarize,
    to_mask,
)
from lagscope.collectors import applier_workers, replica_status
from lagscope.collectors.dialect import MARIADB
from lagscope.collectors.poller import RETRY_REFUSED_S, InstancePoller
from lagscope.collectors.snapshot import ApplierWorker
from lagscope.errors import AccessDenied
from tests.unit.collectors.test_poller import REPLICA, mariadb_answers
from tests.unit.collectors.test_recorded_flavors import FILES, load, replay
from tests.unit.fakes.executor import FakeExecutor, rs


@pytest.mark.parametrize("name", FILES)
def test_workers_busy_and_idle_per_flavor(name: str):
    fixture = load(name)
    _, poller = replay(fixture)
    snapshot = poller.poll()
    got = [
        {
            "channel": w.channel,
            "worker_id": w.worker_id,
            "thread_id": w.thread_id,
            "busy": w.busy,
            "idle_s": None if w.idle_s is None else round(w.idle_s, 6),
        }
        for w in snapshot.workers
    ]
    assert got == fixture["expected"]["workers"]
    assert "workers" not in snapshot.problems


def test_mysql_refusing_the_table_is_a_problem_with_the_grant_not_a_failed_poll():
    fixture = load("mysql80_replica.json")
    fake, poller = replay(fixture)
    denied = AccessDenied(
        "db:3306",
        "SELECT command denied to user 'mon'@'10.0.0.9' for table "
        "'replication_applier_status_by_worker'",
        1142,
    )
    sql = next(s for s in fake.answers if "replication_applier_status_by_worker" in s)
    fake.answers[sql] = denied
    snapshot = poller.poll()
    assert snapshot.channels and snapshot.workers == ()
    assert snapshot.problems["workers"] == (
        "monitoring user lacks the privilege to read applier workers: "
        "GRANT SELECT ON performance_schema.* TO <monitoring user>"
    )


def test_mariadb_without_process_sees_no_replication_threads_and_says_why():
    running = rs(REPLICA.columns, ("", "Yes", "Yes", 0, "0-1-50"))
    own_threads_only = rs(("id", "user", "command", "state", "time_ms", "info"))
    fake = FakeExecutor(
        mariadb_answers(
            **{
                replica_status.statement(MARIADB): running,
                applier_workers.statement(MARIADB): own_threads_only,
            }
        )
    )
    snapshot = InstancePoller(fake).poll()
    assert snapshot.workers == ()
    assert "GRANT PROCESS ON *.* TO" in snapshot.problems["workers"]


def test_a_stopped_mariadb_replica_without_threads_is_no_privilege_problem():
    stopped = rs(REPLICA.columns, ("", "No", "No", None, "0-1-50"))
    empty = rs(("id", "user", "command", "state", "time_ms", "info"))
    assert not applier_workers.hidden_by_privilege(
        MARIADB, empty, replica_status.parse(MARIADB, stopped)
    )


def _worker(i: int, busy: bool | None, idle_s: float | None = None, trx: str = "") -> ApplierWorker:
    return ApplierWorker(
        channel="", worker_id=i, thread_id=i, state="", busy=busy, idle_s=idle_s,
        last_applied_trx=trx,
    )  # fmt: skip


def test_masks_round_trip_beyond_one_byte():
    flags = [i % 3 == 0 for i in range(17)]
    mask = to_mask(flags)
    assert len(mask) == 3
    assert from_mask(mask, 17) == flags


def test_summary_counts_busy_and_recently_active_workers():
    workers = [
        _worker(2, busy=False, idle_s=0.3),  # idle since less than the interval: it worked
        _worker(1, busy=True, idle_s=0.0),
        _worker(3, busy=False, idle_s=12.0),
    ]
    (row,) = summarize(workers, {}, interval_s=1.0)
    assert (row.workers, row.busy, row.active) == (3, 1, 2)
    assert from_mask(row.busy_mask or b"", 3) == [True, False, False]  # worker-id order
    assert from_mask(row.active_mask, 3) == [True, True, False]


def test_mysql57_busy_is_unknown_and_active_comes_from_a_changed_transaction():
    workers = [_worker(1, None, trx="u:10"), _worker(2, None, trx="u:7")]
    (row,) = summarize(workers, {("", 1): "u:9", ("", 2): "u:7"}, interval_s=1.0)
    assert row.busy is None and row.busy_mask is None
    assert from_mask(row.active_mask, 2) == [True, False]


def test_heatmap_busy_share_per_worker_and_bucket():
    reads = [
        StoredRead(1_000, 2, to_mask([True, False]), to_mask([True, True])),
        StoredRead(2_000, 2, to_mask([True, True]), to_mask([True, True])),
        StoredRead(11_000, 4, to_mask([False, False, True, True]), to_mask([True] * 4)),
    ]
    first, second = heatmap(reads, start_ms=0, width_ms=10_000)
    assert (first.t, first.reads, first.workers) == (0, 2, 2)
    assert first.busy_share == [1.0, 0.5]
    assert first.busy_avg == pytest.approx(1.5)
    assert (second.t, second.workers, second.busy_share) == (10_000, 4, [0.0, 0.0, 1.0, 1.0])
    assert second.active_share == [1.0] * 4


def test_heatmap_without_busy_information_says_none():
    reads = [StoredRead(0, 2, None, to_mask([True, False]))]
    (bucket,) = heatmap(reads, 0, 1000)
    assert bucket.busy_share == [None, None] and bucket.busy_avg is None
    assert bucket.active_share == [1.0, 0.0]


def test_a_refused_workers_reading_is_tried_again_after_a_grant():
    fixture = load("mysql80_replica.json")
    fake, _ = replay(fixture)
    sql = next(s for s in fake.answers if "replication_applier_status_by_worker" in s)
    granted = fake.answers[sql]
    fake.answers[sql] = AccessDenied("db:3306", "SELECT command denied", 1142)
    now = [1_700_000_000.0]
    poller = InstancePoller(fake, clock=lambda: now[0])
    assert "workers" in poller.poll().problems
    fake.answers[sql] = granted  # the operator ran the GRANT
    now[0] += 30
    assert "workers" in poller.poll().problems  # not yet tried again: no statement per poll
    assert sql not in fake.batches[-1]
    now[0] += RETRY_REFUSED_S
    snapshot = poller.poll()
    assert "workers" not in snapshot.problems and len(snapshot.workers) == 4
