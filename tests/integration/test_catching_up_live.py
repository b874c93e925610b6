"""Catching up on the live lab, through the real pipeline (worker, beat, store; one poll a second,
no heartbeat): a paced write load on the source while replica1's SQL thread is stopped builds a
backlog whose episode's main cause is "replication stopped"; once the thread is started again
every poll of the drain is read as the store had it. Each names *catching up* after the stop
ended, with the cause that made the backlog beside it; none says *behind, cause not identified*.

(The receivers' fsyncs relaxed under load — the other drain the dashboard showed as not identified —
is covered by tests/unit/analysis/causes/test_causes_catching_up.py, and a step through record_tick
by tests/unit/ingest/test_ingest_catching_up.py: on this lab the relay-log incident's load with the
cause readings made MariaDB 10.11.19 replicas die of a signal 11 inside information_schema queries,
on the old code as on the new.)

The counts are printed (``pytest -s``): polls of the drain, catching up, not identified.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import func, select

from lagscope.analysis.codes import Verdict
from lagscope.lab import Lab
from lagscope.lab import incidents as inc
from lagscope.models import Channel, Sample

from .pipeline_stack import Pipeline
from .waiting import wait_until

pytestmark = pytest.mark.integration

REPLICA = "replica1"
# A backlog worth draining over several polls: the lab's replica applies thousands of trx/s.
BACKLOG_LAG_S = 45.0
TABLE = f"{inc.SCHEMA}.catching_up"
BEHIND = (int(Verdict.RECEIVE_BOUND), int(Verdict.APPLY_BOUND))


@pytest.fixture(scope="module")
def pipeline_options() -> dict[str, Any]:
    return {"heartbeat": False}


@dataclass
class Poll:
    at: float
    lag_s: float | None
    verdict: int
    causes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def labels(self) -> list[str]:
        return [str(c.get("cause")) for c in self.causes]


def read(pipe: Pipeline, channel_id: int) -> tuple[Poll | None, dict[str, Any]]:
    """The channel's newest poll with the causes it stored, and its episode state (one
    transaction: a tick stores its sample and the channel's causes together)."""
    with pipe.session() as s:
        channel = s.get(Channel, channel_id)
        latest = s.scalar(select(func.max(Sample.ts)).where(Sample.channel_id == channel_id))
        if channel is None or latest is None:
            return None, {}
        sample = s.scalar(
            select(Sample).where(Sample.channel_id == channel_id, Sample.ts == latest)
        )
        assert sample is not None
        poll = Poll(
            latest.timestamp(), sample.lag_s, sample.verdict, list(channel.current_causes or [])
        )
        return poll, dict(channel.episode_state or {})


class Load:
    """Threads inserting into ``lab_incidents.catching_up`` on the source, paced, until stopped."""

    def __init__(self, lab: Lab, threads: int, per_thread_per_s: float) -> None:
        self._lab, self._rate = lab, per_thread_per_s
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)

    def _run(self) -> None:
        with self._lab.connect("source") as conn, conn.cursor() as cur:
            began, count = time.monotonic(), 0
            while not self._stop.is_set():
                cur.execute(f"INSERT INTO {TABLE} (n) VALUES (1)")
                count += 1
                ahead = began + count / self._rate - time.monotonic()
                if ahead > 0:
                    self._stop.wait(ahead)


def sql_thread(lab: Lab, running: bool) -> None:
    with lab.connect(REPLICA) as conn, conn.cursor() as cur:
        cur.execute("START SLAVE SQL_THREAD" if running else "STOP SLAVE SQL_THREAD")


@pytest.fixture
def table(lab: Lab) -> Iterator[None]:
    inc.query(lab, "source", f"CREATE DATABASE IF NOT EXISTS {inc.SCHEMA}")
    inc.query(lab, "source", f"DROP TABLE IF EXISTS {TABLE}")
    inc.query(lab, "source", f"CREATE TABLE {TABLE} (id BIGINT AUTO_INCREMENT PRIMARY KEY, n INT)")
    yield
    sql_thread(lab, True)
    lab.wait_caught_up(timeout_s=120)
    inc.query(lab, "source", f"DROP TABLE IF EXISTS {TABLE}")


@pytest.mark.timeout(600)
def test_the_drain_after_a_stopped_applier_is_started_is_catching_up_with_the_main_cause(
    lab: Lab, pipeline: Pipeline, table: None
) -> None:
    channel_id = pipeline.channel_id(REPLICA)
    assert channel_id is not None
    with Load(lab, threads=2, per_thread_per_s=300.0):
        sql_thread(lab, False)

        def backlog_made() -> bool:
            poll, state = read(pipeline, channel_id)
            return bool(
                poll is not None
                and (poll.lag_s or 0.0) >= BACKLOG_LAG_S
                and state.get("main_cause") == "stopped"
            )

        wait_until(
            backlog_made,
            timeout_s=120,
            interval_s=0.2,
            message=f"{REPLICA} {BACKLOG_LAG_S:g} s behind, its episode's main cause the stop",
        )
        sql_thread(lab, True)
        started_at = time.time()
        polls: dict[float, Poll] = {}

        def drained() -> bool:
            # The load goes on: caught up is the verdict, not a zero lag.
            poll, _ = read(pipeline, channel_id)
            if poll is None or poll.at <= started_at:
                return False
            polls.setdefault(poll.at, poll)
            return poll.verdict == int(Verdict.CAUGHT_UP)

        wait_until(drained, timeout_s=180, interval_s=0.1, message=f"{REPLICA} caught up")
    ordered = [polls[at] for at in sorted(polls)]
    # The drain: polls behind with a backlog once the stop is no longer named.
    drain = [
        p
        for p in ordered
        if p.verdict in BEHIND and (p.lag_s or 0.0) >= 1.0 and "stopped" not in p.labels
    ]
    catching = [p for p in drain if p.labels[:1] == ["catching_up"]]
    unexplained = [p for p in drain if "unexplained" in p.labels]
    print(
        f"\n{REPLICA}: {len(ordered)} polls after the start, {len(drain)} draining, "
        f"{len(catching)} catching up, {len(unexplained)} not identified"
    )
    for p in ordered:
        print(f"  {p.at:.1f} lag={p.lag_s} verdict={p.verdict} {p.labels}")
    assert unexplained == [], f"not identified while draining: {len(unexplained)} polls"
    assert catching, f"catching up in none of {len(drain)} drain polls"
    assert len(catching) == len(drain), f"catching up in {len(catching)} of {len(drain)}"
    for p in catching:
        finding = p.causes[0]
        evidence = finding["evidence"]
        assert evidence["main_cause"] == "stopped", evidence
        assert evidence["after"] == "cause_ended", evidence
        assert "catching up since" in finding["sentence"]
        assert "after replication stopped ended" in finding["sentence"]
        assert "the backlog was made by replication stopped" in finding["sentence"]
