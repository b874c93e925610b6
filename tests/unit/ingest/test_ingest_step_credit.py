"""An ended episode's step, through ``record_tick`` on an in-memory store: credited to the
replica it changed, never to a sibling that changed in the same second (ingest/episodes.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.collectors.snapshot import (
    ChannelStatus,
    InstanceSnapshot,
    IoState,
)
from lagscope.ingest.reader import PollResult
from lagscope.ingest.recording import record_tick
from lagscope.inventory import instances as inventory
from lagscope.models import Channel, Cluster, Instance, ParamChange
from lagscope.models.episodes import Episode
from lagscope.security.secret_box import SecretBox
from tests.factories import memory_session
from tests.factories.snapshots import instance_snapshot

T0 = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
HOLD_S = 3.0
REPLICAS = ("replica1", "replica2")


@pytest.fixture
def session() -> Iterator[Session]:
    yield from memory_session()


@pytest.fixture
def cluster(session: Session) -> Cluster:
    box = SecretBox("a-test-key-long-enough-for-the-kdf-0123", b"0" * 16)
    cluster = inventory.create_cluster(session, "c")
    inventory.add_instance(session, box, cluster, "src", "127.0.0.1", 3306, "u", "pw", "source")
    for port, name in enumerate(REPLICAS, start=3307):
        inventory.add_instance(session, box, cluster, name, "127.0.0.1", port, "u", "pw", "replica")
    session.flush()
    return cluster


def _snap(second: float, server_id: int, executed: str, channels: tuple[ChannelStatus, ...] = (),
          params: dict[str, str | None] | None = None) -> InstanceSnapshot:  # fmt: skip
    return instance_snapshot(T0, second, server_id, executed, channels, params=params)


def tick(
    session: Session,
    cluster: Cluster,
    second: float,
    *,
    source_seq: int,
    applied: dict[str, int],
    stopped: frozenset[str] = frozenset(),
    params: dict[str, dict[str, str | None]] | None = None,
) -> None:
    """One poll of the source and both replicas; ``applied`` per replica name."""
    src, *replicas = cluster.instances
    at = (T0 + timedelta(seconds=second)).timestamp()
    readings = [PollResult(src.id, at, _snap(second, 1, f"0-1-{source_seq}"))]
    for server_id, replica in enumerate(replicas, start=2):
        running = replica.name not in stopped
        status = ChannelStatus(
            "", IoState.YES, running, 0 if running else None, source_server_id=1,
            retrieved_gtids=f"0-1-{source_seq}", executed_gtids=f"0-1-{applied[replica.name]}",
        )  # fmt: skip
        own = (params or {}).get(replica.name)
        readings.append(
            PollResult(replica.id, at, _snap(second, server_id, "0-2-5", (status,), own))
        )
    record_tick(session, cluster, readings, caught_up_hold_s=HOLD_S)
    session.flush()


def replica1_stopped(session: Session, cluster: Cluster) -> None:
    """Seconds 1–4: replica1's SQL thread stopped while the source writes; replica2 keeps up."""
    for second in range(1, 5):
        applied = {"replica1": 10, "replica2": 10 + second}
        tick(session, cluster, second, source_seq=10 + second, applied=applied,
             stopped=frozenset({"replica1"}))  # fmt: skip


def episode_of(session: Session, replica: str) -> Episode:
    episode = session.scalar(
        select(Episode)
        .join(Channel, Channel.id == Episode.channel_id)
        .join(Instance, Instance.id == Channel.instance_id)
        .where(Instance.name == replica)
    )
    assert episode is not None
    return episode


def change_on(session: Session, replica: str) -> ParamChange:
    change = session.scalar(
        select(ParamChange).join(Instance).where(Instance.name == replica, ParamChange.id > 0)
    )
    assert change is not None
    return change


def test_an_episode_ends_after_its_own_replicas_step_not_a_siblings_in_the_same_second(
    session: Session, cluster: Cluster
) -> None:
    before: dict[str, str | None] = {"sync_master_info": "1"}
    after: dict[str, str | None] = {"sync_master_info": "0"}
    tick(session, cluster, 0, source_seq=10, applied={"replica1": 10, "replica2": 10},
         params={"replica1": before, "replica2": before})  # fmt: skip
    replica1_stopped(session, cluster)  # an episode on replica1 only
    # Both replicas changed in the same second; replica2's row is written after replica1's.
    tick(session, cluster, 5, source_seq=20, applied={"replica1": 20, "replica2": 20},
         params={"replica1": after, "replica2": after})  # fmt: skip
    for second in range(6, 12):
        tick(session, cluster, second, source_seq=20, applied={"replica1": 20, "replica2": 20})
    own, sibling = change_on(session, "replica1"), change_on(session, "replica2")
    assert own.first_new_at == sibling.first_new_at and sibling.id > own.id
    episode = episode_of(session, "replica1")
    assert episode.ended_at is not None and episode.end_reason == "after_step"
    assert episode.ended_by_change_id == own.id


def test_a_siblings_step_alone_does_not_end_a_replicas_episode(
    session: Session, cluster: Cluster
) -> None:
    tick(session, cluster, 0, source_seq=10, applied={"replica1": 10, "replica2": 10},
         params={"replica2": {"sync_master_info": "1"}})  # fmt: skip
    replica1_stopped(session, cluster)
    tick(session, cluster, 5, source_seq=20, applied={"replica1": 20, "replica2": 20},
         params={"replica2": {"sync_master_info": "0"}})  # fmt: skip
    for second in range(6, 12):
        tick(session, cluster, second, source_seq=20, applied={"replica1": 20, "replica2": 20})
    episode = episode_of(session, "replica1")
    assert episode.ended_at is not None
    assert episode.end_reason == "by_itself" and episode.ended_by_change_id is None
