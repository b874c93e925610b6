"""Lag that tells the truth when a thread or the heartbeat writer stops.

The real lab and pipeline (Redis, Celery worker and beat, the ``lagscope heartbeat`` writer,
a SQLite store read back by the test). Each test leaves the lab replicating and caught up, and
the writer running, even on failure.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime

import pytest
from sqlalchemy import select

from lagscope.alerts import rules as alert_rules
from lagscope.alerts.state import Phase
from lagscope.analysis.codes import LagSource, Verdict
from lagscope.history.status import InstanceState, cluster_status
from lagscope.models import AlertRule, AlertState, Instance, Sample

from .pipeline_stack import Pipeline, now, start_pipeline
from .waiting import wait_until

pytestmark = pytest.mark.integration

REPLICAS = ("replica1", "replica2")
# The replicas stay caught up (the source is idle once the writer stops): the lag stays under
# the verdict's caught-up bound, 1 s, while the heartbeat's own age goes far beyond.
CAUGHT_UP_LAG_BOUND_S = 1.0
HEARTBEAT_AGE_SHOWN_S = 15.0


@pytest.fixture(scope="module")
def pipeline(lab, tmp_path_factory) -> Iterator[Pipeline]:
    with start_pipeline(lab, tmp_path_factory.mktemp("lagtruth")) as started:
        yield started


def caught_up_window(pipe: Pipeline, name: str, since: datetime) -> bool:
    """The last three samples caught up: the verdict window is full of caught-up polls."""
    rows = pipe.samples(name, since)
    return len(rows) >= 3 and all(r.verdict == Verdict.CAUGHT_UP for r in rows[-3:])


def test_a_duplicate_key_stop_is_never_shown_caught_up(lab, pipeline: Pipeline):
    """Seen once: right after a duplicate-key error one sample said sql_running=false
    and caught_up, the two caught-up polls before it outvoting the stop."""
    started = now()
    wait_until(
        lambda: caught_up_window(pipeline, "replica1", started), timeout_s=30, message="caught up"
    )
    replica = lab.connect("replica1")
    try:
        with lab.connect("source") as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS lagtruth")
            cur.execute("CREATE TABLE IF NOT EXISTS lagtruth.t (id INT PRIMARY KEY)")
        lab.wait_caught_up(timeout_s=30)
        table_made = now()
        wait_until(
            lambda: caught_up_window(pipeline, "replica1", table_made),
            timeout_s=30,
            message="caught up after the table",
        )
        # The error is raised between two polls: the polls before it were all caught up.
        with replica.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute("INSERT INTO lagtruth.t VALUES (17)")
        with lab.connect("source") as conn, conn.cursor() as cur:
            cur.execute("INSERT INTO lagtruth.t VALUES (17)")

        def stopped_rows() -> list[Sample]:
            rows = pipeline.samples("replica1", table_made)
            return [r for r in rows if r.sql_running is False]

        wait_until(lambda: len(stopped_rows()) >= 3, timeout_s=30, message="three stopped polls")
        rows = pipeline.samples("replica1", table_made)
        first = next(i for i, r in enumerate(rows) if r.sql_running is False)
        assert first >= 1 and rows[first - 1].verdict == Verdict.CAUGHT_UP, [
            (r.sql_running, r.verdict) for r in rows
        ]
        shown = [(r.ts, r.verdict) for r in stopped_rows()]
        assert all(v == Verdict.BROKEN for _, v in shown), shown
    finally:
        with replica.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute("DELETE FROM lagtruth.t WHERE id = 17")
            cur.execute("START SLAVE SQL_THREAD")
        replica.close()
    lab.wait_caught_up(timeout_s=60)
    restarted = now()
    wait_until(
        lambda: caught_up_window(pipeline, "replica1", restarted),
        timeout_s=30,
        message="caught up again",
    )


def source_state(pipe: Pipeline) -> InstanceState:
    with pipe.session() as s:
        found = cluster_status(s, pipe.cluster_id, now())
    return next(i for i in found.instances if i.role == "source")


def test_a_stopped_heartbeat_writer_is_not_lag(lab, pipeline: Pipeline):
    """Seen once: with the writer stopped, caught-up replicas were shown 2,734 s behind.
    Stop it: the lag stays right, the status says why, an alert fires; start it again."""
    lab.wait_caught_up(timeout_s=60)
    started = now()
    for name in REPLICAS:
        wait_until(
            lambda name=name: (
                (row := pipeline.latest(name)) is not None
                and row.lag_source == LagSource.HEARTBEAT
                and row.ts > started
            ),
            timeout_s=30,
            message=f"{name}'s lag from the running writer",
        )
    assert source_state(pipeline).heartbeat_problem is None
    with pipeline.session() as s, s.begin():
        rule = alert_rules.create_rule(
            s,
            {
                "name": "heartbeat writer stopped",
                "metric": "heartbeat_writer_stale",
                "threshold": 0.5,
                "instance_id": s.scalar(select(Instance.id).where(Instance.name == "source")),
            },
        )
        rule_id = rule.id
    writer = next(p for p in pipeline.processes if p.name == "heartbeat")
    try:
        writer.stop()
        stopped = now()
        shown = wait_until(
            lambda: source_state(pipeline).heartbeat_problem, timeout_s=60, message="the reason"
        )
        assert shown.startswith("heartbeat writer stopped since ")
        since = source_state(pipeline).heartbeat_stopped_at
        assert since is not None and since <= stopped

        def firing() -> bool:
            with pipeline.session() as s:
                states = s.scalars(select(AlertState).where(AlertState.rule_id == rule_id)).all()
                return any(st.phase == Phase.FIRING for st in states)

        wait_until(firing, timeout_s=60, message="the stale-writer alert firing")
        for name in REPLICAS:
            wait_until(
                lambda name=name: (
                    (row := pipeline.latest(name)) is not None
                    and (row.heartbeat_lag_s or 0.0) > HEARTBEAT_AGE_SHOWN_S
                ),
                timeout_s=60,
                message=f"{name}'s heartbeat {HEARTBEAT_AGE_SHOWN_S:g} s old",
            )
        for name in REPLICAS:
            rows = pipeline.samples(name, stopped)
            wrong = [
                (r.ts, r.lag_s, r.lag_source, r.heartbeat_lag_s, r.verdict)
                for r in rows
                if r.lag_s is None
                or r.lag_s > CAUGHT_UP_LAG_BOUND_S
                or r.verdict != Verdict.CAUGHT_UP
            ]
            assert not wrong, (name, wrong)
            aged = [r for r in rows if (r.heartbeat_lag_s or 0.0) > CAUGHT_UP_LAG_BOUND_S]
            assert aged and all(r.lag_source != LagSource.HEARTBEAT for r in aged)
            assert not rows[-1].disagreement
            gaps = [(b.ts - a.ts).total_seconds() for a, b in itertools.pairwise(rows)]
            assert gaps and max(gaps) < 10, gaps  # the pipeline kept polling all along
    finally:
        pipeline.restart("heartbeat")
        with pipeline.session() as s, s.begin():
            s.get_one(AlertRule, rule_id).enabled = False
    wait_until(
        lambda: source_state(pipeline).heartbeat_problem is None,
        timeout_s=60,
        message="the reason gone with the writer back",
    )
    restarted = now()
    for name in REPLICAS:
        wait_until(
            lambda name=name: (
                (row := pipeline.latest(name)) is not None
                and row.lag_source == LagSource.HEARTBEAT
                and row.ts > restarted
            ),
            timeout_s=30,
            message=f"{name}'s lag from the heartbeat again",
        )
