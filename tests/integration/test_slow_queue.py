"""A slow job that is stuck never stops the polls, and its time limit ends it. All real: the
lab's cluster, Redis, ``lagscope worker`` (the polls' worker and its slow-queue child) and
``lagscope beat``; the stuck job is the binlog window of a fake MariaDB source on 127.0.0.1
that trickles its ``SHOW BINLOG EVENTS`` answer one row a second for a day.

The fake sits in the pipeline as a cluster of its own, so it is polled too: it accepts any
number of connections, answers a poll at once (oddly: that costs its own sample only) and
holds only the binlog reader (tests/unit/fakes/fake_mariadb_binlog.py). Beat sends the window job
every 3 s: with the slow jobs on the polls' queue, two stuck jobs would fill both of the
polls' slots within seconds and the lab's samples would stop. That first test runs the Celery
engine, pinned: only there do the polls share Celery's worker with anything (the owner engine
polls in a process of its own).

``lagscope worker`` ends when one of its children (the slow jobs' worker, the poll owner) dies
alone: the second test, on the default engine."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from sqlalchemy import select

from lagscope.inventory import instances as inventory
from lagscope.models import CommitSample, Instance
from lagscope.security.secret_box import store_box
from lagscope.store_setup import upgrade
from tests.unit.fakes.fake_mariadb_binlog import FakeMariaDBBinlog

from .pipeline_stack import SECRET, now, start_pipeline
from .stack import ManagedProcess, RedisServer, lagscope_command, poll_engine
from .waiting import wait_until

pytestmark = pytest.mark.integration

SAMPLES_WHILE_HELD = 12
TIME_LIMIT_S = 40


def test_a_stuck_binlog_window_never_stops_the_labs_polls_and_its_time_limit_ends_it(lab, tmp_path):
    env = {
        # The polls as Celery tasks in the polls' worker, beside which the slow one runs.
        "LAGSCOPE_POLL_ENGINE": "celery",
        "LAGSCOPE_COMMIT_SAMPLE_EVERY_S": "3",
        # Only Celery's limit may end the window: its own deadline is far away.
        "LAGSCOPE_BINLOG_WINDOW_DEADLINE_S": "3600",
        "LAGSCOPE_SLOW_JOB_TIME_LIMIT_S": str(TIME_LIMIT_S),
    }
    with (
        FakeMariaDBBinlog(("trickle", 86_400, 1.0)) as fake,
        start_pipeline(lab, tmp_path, heartbeat=False, extra_env=env) as pipe,
    ):
        box = store_box(pipe.sessions, SECRET)
        with pipe.session() as s, s.begin():
            cluster = inventory.create_cluster(s, "trickling", poll_interval_s=1.0)
            odd = inventory.add_instance(
                s, box, cluster, "odd", "127.0.0.1", fake.port, "mon", "pw", "source"
            )
            odd.flavor = "mariadb"
            s.flush()
            odd_id = odd.id
        worker = next(p for p in pipe.processes if p.name == "worker")

        # The first run marks the fake's position, the next reads its window: held from then.
        wait_until(lambda: fake.trickling, timeout_s=90, message="a binlog window held")
        held_since = now()
        seen: list[int] = [0]

        def lab_samples() -> bool:
            seen[0] = len(pipe.answered("replica1", held_since))
            return seen[0] >= SAMPLES_WHILE_HELD

        try:
            wait_until(lab_samples, timeout_s=SAMPLES_WHILE_HELD * 2.5)
        except AssertionError:
            raise AssertionError(
                f"{seen[0]} samples of the lab's replica in {SAMPLES_WHILE_HELD * 2.5:g} s while "
                f"the window was held ({fake.trickling} held now), {SAMPLES_WHILE_HELD} due"
            ) from None
        # Provably the same job still stuck: its trickle never ended.
        assert fake.trickling == 1 and fake.trickles_ended == 0, "the window was not held"
        pipe.assert_alive()

        # The slow job's time limit ends it: Celery raises in it at 90 %, the read is
        # abandoned (its connection closed) and the row says why.
        wait_until(
            lambda: fake.trickles_ended >= 1, timeout_s=TIME_LIMIT_S * 2, message="the job ended"
        )
        wait_until(
            lambda: "Soft time limit" in worker.log_text(),
            timeout_s=30,
            message="Celery's soft time limit in the worker's log",
        )

        def cut_row() -> CommitSample | None:
            with pipe.session() as s:
                return s.scalars(
                    select(CommitSample).where(
                        CommitSample.instance_id == odd_id, CommitSample.problem.is_not(None)
                    )
                ).first()

        row = wait_until(cut_row, timeout_s=30, message="the cut window's row")
        assert row is not None and row.problem is not None
        assert "SoftTimeLimitExceeded" in row.problem
        with pipe.session() as s:
            assert s.get(Instance, odd_id) is not None
        pipe.assert_alive()
        # The lab is still polled after it.
        after = now()
        wait_until(lambda: len(pipe.answered("replica1", after)) >= 3, timeout_s=15)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(p) for p in text]
    return found


@pytest.mark.parametrize(
    ("queue", "what"),
    [("slow", "the slow jobs' worker"), ("owner", "the poll owner")],
    ids=["slow-jobs-worker", "poll-owner"],
)
def test_a_child_dying_alone_stops_its_polls_worker_too(tmp_path, queue, what):
    """``lagscope worker`` runs the slow queue's worker as a child (and, with the owner engine,
    the poll owner as another); if one dies alone (an OOM kill), the polls' worker must not go
    on reporting itself healthy while no rollup, retention or binlog window runs (or no poll):
    it stops, and its supervisor restarts them all."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    redis = RedisServer(tmp_path)
    env = {
        **os.environ,
        "LAGSCOPE_DATABASE_URL": url,
        "LAGSCOPE_BROKER_URL": redis.url,
        "LAGSCOPE_SECRET_KEY": SECRET,
    }
    argv = lagscope_command("worker", "--concurrency", "1", "--without-gossip", "--without-mingle")
    worker = ManagedProcess("worker", argv, tmp_path, env)
    try:
        wait_until(
            lambda: worker.log_text().count("ready.") >= 2, timeout_s=90, message="both ready"
        )
        if queue == "owner" and poll_engine(env) != "owner":
            pytest.skip("no poll owner: the default engine is not the owner engine")
        # Told apart by their command lines: `lagscope worker --queues slow|owner --child`.
        child = [
            pid
            for pid in _children(worker.pid)
            if f"\0--queues\0{queue}\0--child" in Path(f"/proc/{pid}/cmdline").read_text()
        ]
        assert len(child) == 1, child
        os.kill(child[0], signal.SIGKILL)
        wait_until(
            lambda: worker.proc.poll() is not None, timeout_s=60, message="the polls' worker ended"
        )
        assert f"{what} ended (exit -9)" in worker.log_text()
    finally:
        worker.stop(grace_s=20)
        redis.stop()
