"""An owner keeps each channel's diagnosis memory and ETA memory, and each instance's counters,
with the cluster and stores them only every DIAGNOSIS_CHECKPOINT_S (ingest/tick_memory.py): the
causes, the ETA and the rates a tick gives are the same as with them stored every tick, the rows
are written at the checkpoints only, and an owner that takes over from the stored memory goes on
naming the same causes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.ingest.tick_memory import DIAGNOSIS_CHECKPOINT_S, TickMemory
from lagscope.models import Cluster, InstanceSample
from tests.factories import memory_session
from tests.unit.ingest.test_ingest_episodes import (
    T0,
    channel,
    cluster,
    make_cluster,
    session,
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

    with _second_memory_session() as (session2, cluster2):
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
    with _second_memory_session() as (session2, cluster2):
        taken_over, _ = stopped_then_draining(session2, cluster2, TickMemory(), new_owner_at=14)
    assert taken_over == every_tick


def _etas(
    session: Session, cluster: Cluster, memory: TickMemory | None
) -> tuple[list[object], list[float | None]]:
    """Each tick's ETA as stored on the channel, and the poll time of the newest rate in the
    ETA memory stored on the channel's row after it (None: no rate yet)."""
    etas: list[object] = []
    newest: list[float | None] = []
    for second in range(20):
        # Falling behind for eight seconds, then applying at twice the source's pace.
        source = SEQ + 10 * second
        applied = SEQ + 5 * second if second < 8 else min(source, SEQ + 40 + 20 * (second - 8))
        tick(session, cluster, second, source_seq=source, applied_seq=applied, memory=memory)
        row = channel(session)
        etas.append(row.eta)
        rates = (row.eta_memory or {}).get("rates") or []
        newest.append(float(rates[-1][0]) - T0.timestamp() if rates else None)
    return etas, newest


def test_the_eta_memory_kept_gives_the_same_eta_and_is_stored_at_checkpoints(
    session: Session, cluster: Cluster
) -> None:
    every_tick, newest_each = _etas(session, cluster, None)
    # The pace is averaged over the memory's window: it eases from 5/s as the drain starts.
    paces = {e["falling_behind_per_s"] for e in every_tick if isinstance(e, dict)} - {None}
    assert len(paces) >= 3, every_tick
    rated = [s for s, n in enumerate(newest_each) if n is not None]
    assert rated and all(newest_each[s] == float(s) for s in rated), newest_each

    with _second_memory_session() as (session2, cluster2):
        kept = TickMemory()
        in_memory, newest_kept = _etas(session2, cluster2, kept)
        assert in_memory == every_tick
        step = int(DIAGNOSIS_CHECKPOINT_S)
        # The row's memory moves only at checkpoints (the first poll stores one at once).
        checkpoints = {n for n in newest_kept if n is not None}
        assert checkpoints and all(n % step == 0 for n in checkpoints), newest_kept
        assert len(checkpoints) < len(rated)
        (held,) = kept.eta.values()
        assert held.memory.rates[-1][0] - T0.timestamp() == 19.0


def _commit_rates(
    session: Session, cluster: Cluster, memory: TickMemory | None
) -> tuple[list[float | None], list[float]]:
    """The source's commits per second stored at each tick (its pace changes every few
    seconds), and the poll time of the counters stored on its row after each tick."""
    rates: list[float | None] = []
    stored: list[float] = []
    source = next(i for i in cluster.instances if i.role == "source")
    commits = 0
    for second in range(20):
        commits += 100 * (1 + second // 3)
        tick(session, cluster, second, source_seq=SEQ + second, applied_seq=SEQ + second,
             memory=memory, source_counters={"Binlog_commits": commits})  # fmt: skip
        newest = session.scalars(
            select(InstanceSample)
            .where(InstanceSample.instance_id == source.id)
            .order_by(InstanceSample.ts.desc())
        ).first()
        assert newest is not None
        rates.append(newest.commits_per_s)
        session.refresh(source)
        stored.append(float((source.last_counters or {})["_at"]) - T0.timestamp())
    return rates, stored


def test_the_counters_kept_give_the_same_rates_and_are_stored_at_checkpoints(
    session: Session, cluster: Cluster
) -> None:
    every_tick, stored_each = _commit_rates(session, cluster, None)
    assert stored_each == [float(s) for s in range(20)]
    assert every_tick[0] is None and every_tick[1:] == [100.0 * (1 + s // 3) for s in range(1, 20)]

    with _second_memory_session() as (session2, cluster2):
        kept = TickMemory()
        in_memory, stored_kept = _commit_rates(session2, cluster2, kept)
        assert in_memory == every_tick
        step = int(DIAGNOSIS_CHECKPOINT_S)
        assert stored_kept == [float(s - s % step) for s in range(20)]


@contextmanager
def _second_memory_session() -> Iterator[tuple[Session, Cluster]]:
    """Another in-memory store with the same cluster (the fixtures make one per test)."""
    sessions = memory_session()
    session2 = next(sessions)
    try:
        yield session2, make_cluster(session2)
    finally:
        sessions.close()
