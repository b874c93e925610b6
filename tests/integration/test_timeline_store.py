"""The source-timeline history on a real store (SQLite file, schema by Alembic): recorded per
source and stream, pruned, reset on failover, and read back per channel against its own source.

Snapshots are built by hand (the poll path has its own tests); the expected lags are worked out
in the comments. No lab is needed; marked ``integration`` because it migrates a real store.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.analysis.tick import sources
from lagscope.analysis.tick.sources import SourceProgressNow, judge_progress, judge_sources
from lagscope.analysis.timeline import TimelineLag
from lagscope.collectors.flavor import ServerFlavor
from lagscope.collectors.snapshot import (
    ChannelStatus,
    ClockReading,
    GtidState,
    InstanceSnapshot,
    IoState,
)
from lagscope.ingest.reader import PollResult
from lagscope.ingest.source_progress import StoreHistory, write_progress
from lagscope.ingest.tick_before import cluster_before, instance_before
from lagscope.models import Cluster, Instance, SourceProgress
from tests.factories import make_cluster, sqlite_store

pytestmark = pytest.mark.integration

T0 = datetime(2026, 11, 23, 6, 0, tzinfo=UTC)
MARIADB = ServerFlavor("mariadb", (10, 11, 9))


@dataclass(frozen=True)
class Store:
    sessions: sessionmaker[Session]
    cluster_id: int


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with sqlite_store(tmp_path) as sessions:
        with sessions() as session, session.begin():
            servers = [("src", 3306, "source"), ("src2", 3308, "replica"), ("r1", 3307)]
            cluster, _ = make_cluster(session, "timeline", servers)
            cluster_id = cluster.id
        yield Store(sessions, cluster_id)


def snap(second: float, server_id: int, gtid: str, channels=()) -> InstanceSnapshot:
    return InstanceSnapshot(
        server="x",
        flavor=MARIADB,
        dialect="mariadb",
        taken_at=T0 + timedelta(seconds=second),
        round_trip_s=0.001,
        server_id=server_id,
        server_uuid=None,
        read_only=False,
        clock=ClockReading(0.0, 0.001),
        gtid=GtidState(executed=gtid),
        channels=tuple(channels),
    )


def channel(name: str, source_server_id: int, slave_pos: str) -> ChannelStatus:
    return ChannelStatus(
        name, IoState.YES, True, 0, source_server_id=source_server_id, executed_gtids=slave_pos
    )


def instances(session: Session, cluster_id: int) -> dict[str, Instance]:
    cluster = session.get(Cluster, cluster_id)
    assert cluster is not None
    return {i.name: i for i in cluster.instances}


def rows(session: Session, instance_id: int) -> int:
    return (
        session.scalar(select(func.count()).where(SourceProgress.instance_id == instance_id)) or 0
    )


def record_progress(
    session: Session, src: Instance, snapshot: InstanceSnapshot, retention_s: float = 3600.0
) -> None:
    """One source's point, judged (analysis/tick/sources.py) and written, as a tick does."""
    history = StoreHistory(session.connection())
    before = instance_before(src, (), {}, None, None)
    judged = judge_progress(before, snapshot, history, retention_s)
    write_progress(session.connection(), judged)


def channel_timeline(
    session: Session, progress: SourceProgressNow, status: ChannelStatus, now: float
) -> TimelineLag:
    return sources.channel_timeline(progress, StoreHistory(session.connection()), status, now)


def tick(session: Session, cluster_id: int, second: float, src: str, src2: str, replica=()):
    """Record one tick: src (server 1), src2 (server 3), and r1 with ``replica`` channels."""
    named = instances(session, cluster_id)
    readings = {
        named["src"].id: PollResult(named["src"].id, 0, snap(second, 1, src)),
        named["src2"].id: PollResult(named["src2"].id, 0, snap(second, 3, src2)),
        named["r1"].id: PollResult(named["r1"].id, 0, snap(second, 2, "", replica)),
    }
    # src2 is only recorded because a channel names it (multi-source); src is the cluster source.
    before = cluster_before(session, session.get(Cluster, cluster_id))  # type: ignore[arg-type]
    progress, judged = judge_sources(before, readings, StoreHistory(session.connection()))
    for point in judged:
        write_progress(session.connection(), point)
    for instance in named.values():  # as recording's _update_instance does after the tick
        reading = readings[instance.id]
        instance.server_id = reading.snapshot.server_id if reading.snapshot else None
    session.flush()
    return progress


def test_each_channel_against_its_own_source_with_history_in_the_store(store: Store) -> None:
    both = (channel("a", 1, ""), channel("b", 3, ""))
    with store.sessions() as session, session.begin():
        for t in range(41):  # src: 100 trx/s in domain 0; src2: 10 trx/s in domain 1
            progress = tick(session, store.cluster_id, t, f"0-1-{100 * t}", f"1-3-{10 * t}", both)
        a = channel("a", 1, "0-1-2050,1-3-400")
        b = channel("b", 3, "0-1-2050,1-3-400")
        lag_a = channel_timeline(session, progress, a, T0.timestamp() + 40)
        lag_b = channel_timeline(session, progress, b, T0.timestamp() + 40)
    # a: src reached 2050 at t=20.5 → 19.5 s; b: src2 is at 400, the replica has it all → 0.
    assert lag_a.lag_s == pytest.approx(19.5) and lag_a.resolution_s == pytest.approx(1.0)
    assert lag_b.lag_s == 0.0


def test_history_is_pruned_to_the_retention(store: Store) -> None:
    with store.sessions() as session, session.begin():
        src = instances(session, store.cluster_id)["src"]
        for t in range(60):
            record_progress(session, src, snap(t, 1, f"0-1-{t}"), retention_s=10)
        assert rows(session, src.id) == 60  # pruned once a minute, when a minute begins
        for t in range(60, 71):
            record_progress(session, src, snap(t, 1, f"0-1-{t}"), retention_s=10)
        # At t=60 the points before 60 − 10 = 50 went; 50 … 70 remain: 21 of them. At most
        # the retention plus a minute is ever kept.
        assert rows(session, src.id) == 21


def test_a_failover_or_reset_starts_a_new_history(store: Store) -> None:
    with store.sessions() as session, session.begin():
        src = instances(session, store.cluster_id)["src"]
        for t in range(20):
            record_progress(session, src, snap(t, 1, f"0-1-{1000 + 10 * t}"))
        src.server_id = 1
        # RESET MASTER on the same server: domain 0 goes back to 5. The old points would say the
        # source reached 100 twenty seconds ago; they are dropped instead.
        record_progress(session, src, snap(20, 1, "0-1-5"))
        assert rows(session, src.id) == 1
        for t in range(21, 25):
            record_progress(session, src, snap(t, 1, f"0-1-{5 + t}"))
        # Another server behind the same address (a failover): the whole history goes.
        record_progress(session, src, snap(25, 7, "0-7-9000"))
        assert rows(session, src.id) == 1


def test_a_replica_older_than_the_history_is_unknown_not_zero(store: Store) -> None:
    one = (channel("", 1, ""),)
    with store.sessions() as session, session.begin():
        for t in range(5):
            progress = tick(session, store.cluster_id, t, f"0-1-{5000 + t}", "1-3-1", one)
        lag = channel_timeline(session, progress, channel("", 1, "0-1-10"), T0.timestamp() + 4)
    assert lag.lag_s is None and lag.unknown_reason is not None


def test_a_channel_whose_source_was_not_read_has_no_timeline_lag(store: Store) -> None:
    with store.sessions() as session, session.begin():
        for t in range(5):
            progress = tick(session, store.cluster_id, t, f"0-1-{100 * t}", "1-3-1")
        stranger = channel("x", 99, "0-1-100")  # replicates from a server not in the inventory
        lag = channel_timeline(session, progress, stranger, T0.timestamp() + 4)
        connecting = channel("y", 0, "0-1-400")  # IO thread not connected yet: cluster source
        assert channel_timeline(session, progress, connecting, T0.timestamp() + 4).lag_s == 0.0
    assert lag.lag_s is None
