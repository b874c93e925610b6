"""Episodes through ``record_tick`` on an in-memory store: the channel's current causes, the
Episode and EpisodeCause rows on the tracker's events, how an episode ended, the ETA stored on
the channel, and the parameters diagnosis gets (analysis/tick/causes.py, ingest/episodes.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.analysis.causes.model import Cause, CauseInputs, DiagnosisMemory, Finding
from lagscope.analysis.tick import causes as tick_causes
from lagscope.collectors.snapshot import (
    ChannelStatus,
    InstanceSnapshot,
    IoState,
)
from lagscope.ingest import tick_before
from lagscope.ingest.reader import PollResult
from lagscope.ingest.recording import record_tick
from lagscope.ingest.tick_memory import TickMemory
from lagscope.inventory import instances as inventory
from lagscope.models import Channel, Cluster, ParamChange
from lagscope.models.episodes import Episode, EpisodeCause
from lagscope.security.secret_box import SecretBox
from tests.factories import memory_session
from tests.factories.snapshots import instance_snapshot

T0 = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
HOLD_S = 3.0


@pytest.fixture
def session() -> Iterator[Session]:
    yield from memory_session()


@pytest.fixture
def cluster(session: Session) -> Cluster:
    return make_cluster(session)


def make_cluster(session: Session) -> Cluster:
    box = SecretBox("a-test-key-long-enough-for-the-kdf-0123", b"0" * 16)
    cluster = inventory.create_cluster(session, "c")
    for name, port, role in (("src", 3306, "source"), ("r1", 3307, "replica")):
        inventory.add_instance(session, box, cluster, name, "127.0.0.1", port, "u", "pw", role)
    session.flush()
    return cluster


def _snap(second: float, server_id: int, executed: str, channels: tuple[ChannelStatus, ...] = (),
          params: dict[str, str | None] | None = None,
          counters: dict[str, int] | None = None) -> InstanceSnapshot:  # fmt: skip
    return instance_snapshot(T0, second, server_id, executed, channels, params=params,
                             counters=counters)  # fmt: skip


def tick(
    session: Session,
    cluster: Cluster,
    second: float,
    *,
    source_seq: int,
    applied_seq: int,
    sql_running: bool = True,
    replica_answers: bool = True,
    replica_params: dict[str, str | None] | None = None,
    channel_gone: bool = False,
    memory: TickMemory | None = None,
    source_counters: dict[str, int] | None = None,
) -> None:
    src, replica = cluster.instances
    at = (T0 + timedelta(seconds=second)).timestamp()
    source_snap = _snap(second, 1, f"0-1-{source_seq}", counters=source_counters)
    readings = [PollResult(src.id, at, source_snap)]
    if replica_answers:
        status = ChannelStatus(
            "", IoState.YES, sql_running, None if not sql_running else 0, source_server_id=1,
            retrieved_gtids=f"0-1-{source_seq}", executed_gtids=f"0-1-{applied_seq}",
        )  # fmt: skip
        snap = _snap(second, 2, "0-2-5", () if channel_gone else (status,), replica_params)
        readings.append(PollResult(replica.id, at, snap))
    else:
        readings.append(PollResult(replica.id, at, None, "timed out"))
    record_tick(session, cluster, readings, caught_up_hold_s=HOLD_S, memory=memory)
    session.flush()


def channel(session: Session) -> Channel:
    row = session.scalar(select(Channel))
    assert row is not None
    return row


def segments(session: Session) -> list[tuple[str, bool]]:
    rows = session.scalars(select(EpisodeCause).order_by(EpisodeCause.id))
    return [(Cause(r.cause).label, r.ended_at is not None) for r in rows]


def test_a_stopped_applier_opens_an_episode_named_stopped_and_it_ends_by_itself(
    session: Session, cluster: Cluster
) -> None:
    seq = 100
    for second in range(3):
        tick(session, cluster, second, source_seq=seq + second, applied_seq=seq + second)
    assert session.scalar(select(Episode)) is None
    assert channel(session).current_causes == []
    for second in range(3, 8):  # SQL thread stopped, the source writes on
        tick(
            session,
            cluster,
            second,
            source_seq=seq + 10 * second,
            applied_seq=seq + 2,
            sql_running=False,
        )
    ch = channel(session)
    assert [c["cause"] for c in ch.current_causes or []] == ["stopped"]
    assert (ch.current_causes or [])[0]["since"] <= (T0 + timedelta(seconds=4)).timestamp()
    episode = session.scalar(select(Episode))
    assert episode is not None and ch.episode_id == episode.id and episode.ended_at is None
    assert episode.cluster_id == cluster.id and episode.channel_id == ch.id
    assert episode.main_cause == Cause.STOPPED
    assert segments(session) == [("stopped", False)]
    cause_row = session.scalar(select(EpisodeCause))
    assert cause_row is not None and "stopped" in cause_row.sentence
    # Started again, catches up at once and stays caught up for the hold.
    for second in range(8, 14):
        tick(session, cluster, second, source_seq=seq + 80, applied_seq=seq + 80)
    session.refresh(episode)
    assert episode.ended_at is not None
    assert episode.end_reason == "by_itself" and episode.ended_by_change_id is None
    assert segments(session) == [("stopped", True)]
    assert channel(session).episode_id is None
    assert channel(session).current_causes == []


def test_an_episode_with_a_parameter_change_inside_ended_after_that_step(
    session: Session, cluster: Cluster
) -> None:
    params = {"slave_parallel_threads": "0"}
    tick(session, cluster, 0, source_seq=10, applied_seq=10, replica_params=params)
    for second in range(1, 5):
        tick(session, cluster, second, source_seq=10 + second, applied_seq=10, sql_running=False)
    changed = {"slave_parallel_threads": "4"}
    tick(session, cluster, 5, source_seq=20, applied_seq=20, replica_params=changed)
    for second in range(6, 12):
        tick(session, cluster, second, source_seq=20, applied_seq=20)
    change = session.scalar(select(ParamChange))
    episode = session.scalar(select(Episode))
    assert change is not None and episode is not None
    assert episode.end_reason == "after_step" and episode.ended_by_change_id == change.id


def test_with_an_owners_memory_each_parameter_change_is_recorded_once(
    session: Session, cluster: Cluster
) -> None:
    memory = TickMemory()  # an owner remembers the parameters last read and their digest
    reads = [{"sync_binlog": "1"}, {"sync_binlog": "1"}, {"sync_binlog": "0"}]
    reads += [{"sync_binlog": "0"}, {"sync_binlog": "1"}, {"sync_binlog": "1"}]
    for second, params in enumerate(reads):
        tick(session, cluster, second, source_seq=10 + second, applied_seq=10 + second,
             replica_params=params, memory=memory)  # fmt: skip
    changes = session.scalars(select(ParamChange).order_by(ParamChange.id)).all()
    assert [(c.old_value, c.new_value) for c in changes] == [("1", "0"), ("0", "1")]


def test_an_unreachable_replica_is_an_episode_too(session: Session, cluster: Cluster) -> None:
    tick(session, cluster, 0, source_seq=10, applied_seq=10)
    for second in range(1, 5):
        tick(session, cluster, second, source_seq=10, applied_seq=10, replica_answers=False)
    assert [c["cause"] for c in channel(session).current_causes or []] == ["unreachable"]
    assert session.scalar(select(Episode.main_cause)) == Cause.UNREACHABLE


def test_the_eta_and_its_window_are_stored_on_the_channel(
    session: Session, cluster: Cluster
) -> None:
    for second in range(6):  # the source writes 20/s, the replica applies 10/s
        tick(session, cluster, second, source_seq=100 + 20 * second, applied_seq=100 + 10 * second)
    ch = channel(session)
    assert ch.eta is not None and ch.eta["never"] is True and ch.eta["basis"] == "rates"
    assert ch.eta["falling_behind_per_s"] == pytest.approx(10.0)
    assert ch.eta_memory is not None and len(ch.eta_memory["rates"]) == 5


def test_diagnosis_gets_stored_parameters_when_the_poll_did_not_read_them(
    session: Session, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []

    def spy(
        inputs: CauseInputs, memory: DiagnosisMemory
    ) -> tuple[tuple[Finding, ...], DiagnosisMemory]:
        seen.append(
            {
                "params": dict(inputs.params),
                "source": inputs.source.name if inputs.source else None,
                "siblings": inputs.siblings,
                "rates": inputs.rates,
            }
        )
        return (), DiagnosisMemory.from_json({"polls": int(memory.data.get("polls", 0)) + 1})

    monkeypatch.setattr(tick_causes, "diagnose", spy)
    params = {"sync_binlog": "1"}
    tick(session, cluster, 0, source_seq=10, applied_seq=10, replica_params=params)
    tick_before._PARAMS_CACHE.clear()  # another worker process polls next
    tick(session, cluster, 1, source_seq=11, applied_seq=11)
    tick(session, cluster, 2, source_seq=12, applied_seq=12)
    assert [s["params"] for s in seen] == [params] * 3
    assert {s["source"] for s in seen} == {"src"}
    assert seen[0]["siblings"] == ()  # one replica channel: no sibling
    assert seen[0]["rates"] is not None  # the replica's counter rates, as the sample's
    assert channel(session).diagnosis_memory == {"polls": 3}


def test_a_failing_rule_does_not_stop_the_tick(
    session: Session, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(inputs: CauseInputs, memory: DiagnosisMemory) -> Any:
        raise RuntimeError("a bug in a rule")

    monkeypatch.setattr(tick_causes, "diagnose", broken)
    tick(session, cluster, 0, source_seq=10, applied_seq=10)
    assert channel(session).verdict is not None and channel(session).current_causes == []


def test_a_channel_removed_mid_episode_ends_it(session: Session, cluster: Cluster) -> None:
    tick(session, cluster, 0, source_seq=10, applied_seq=10)
    for second in range(1, 4):
        tick(session, cluster, second, source_seq=10 + second, applied_seq=10, sql_running=False)
    tick(session, cluster, 4, source_seq=20, applied_seq=10, channel_gone=True)  # RESET SLAVE ALL
    episode = session.scalar(select(Episode))
    assert episode is not None and episode.end_reason == "replica_removed"
    assert episode.ended_at == T0 + timedelta(seconds=4)
    assert segments(session) == [("stopped", True)]
    assert channel(session).episode_id is None
