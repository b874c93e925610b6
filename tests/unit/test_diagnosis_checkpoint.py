"""An owner keeps each channel's diagnosis memory with the cluster and stores it only every
DIAGNOSIS_CHECKPOINT_S (ingest/tick_memory.py): the causes a tick names are the same as with
the memory stored every tick, the row is written at the checkpoints only, and an owner that
takes over from the stored memory goes on naming the same causes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session

from lagscope.ingest.tick_memory import DIAGNOSIS_CHECKPOINT_S, TickMemory
from lagscope.models import Cluster
from tests.unit.test_ingest_episodes import (
    T0,
    channel,
    cluster,
    make_cluster,
    session,
    store,
    tick,
)

__all__ = ["cluster", "session"]  # the fixtures this module uses

SEQ = 100


def stopped_then_draining(
    session: Session, cluster: Cluster, memory: TickMemory | None, new_owner_at: int | None = None
) -> tuple[list[list[str]], list[float]]:
    """The stop and the drain of test_ingest_catching_up, a tick a second: each tick's causes
    and the poll time of the diagnosis memory stored on the channel's row after it."""
    causes: list[list[str]] = []
    stored: list[float] = []
    for second in range(20):
        if second == new_owner_at:
            memory = TickMemory()  # another owner: only what the store holds
        source = SEQ + (second if second < 3 else 10 * second)
        applied = SEQ + second if second < 3 else min(source, SEQ + 2 + 30 * max(0, second - 11))
        tick(session, cluster, second, source_seq=source, applied_seq=applied,
             sql_running=not 3 <= second < 12, memory=memory)  # fmt: skip
        row = channel(session)
        causes.append([str(c["cause"]) for c in row.current_causes or []])
        stored.append(float((row.diagnosis_memory or {})["at"]) - T0.timestamp())
    return causes, stored


def test_kept_in_memory_it_names_the_same_causes_and_is_stored_at_checkpoints(
    session: Session, cluster: Cluster
) -> None:
    every_tick, stored_each = stopped_then_draining(session, cluster, None)
    assert stored_each == [float(s) for s in range(20)]
    assert any("catching_up" in c for c in every_tick), every_tick

    with _second_store() as (session2, cluster2):
        kept = TickMemory()
        in_memory, stored_kept = stopped_then_draining(session2, cluster2, kept)
        assert in_memory == every_tick
        step = int(DIAGNOSIS_CHECKPOINT_S)
        assert stored_kept == [float(s - s % step) for s in range(20)]
        (held,) = kept.diagnosis.values()
        assert held.memory.data["at"] - T0.timestamp() == 19.0
        assert held.memory.to_json() == channel(session).diagnosis_memory


def test_an_owner_taking_over_from_the_stored_memory_names_the_same_causes(
    session: Session, cluster: Cluster
) -> None:
    every_tick, _ = stopped_then_draining(session, cluster, None)
    with _second_store() as (session2, cluster2):
        taken_over, _ = stopped_then_draining(session2, cluster2, TickMemory(), new_owner_at=14)
    assert taken_over == every_tick


@contextmanager
def _second_store() -> Iterator[tuple[Session, Cluster]]:
    """Another in-memory store with the same cluster (the fixtures make one per test)."""
    sessions = store()
    session2 = next(sessions)
    try:
        yield session2, make_cluster(session2)
    finally:
        sessions.close()
