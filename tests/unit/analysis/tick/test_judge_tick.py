"""One tick's decisions judged without a database (analysis/tick/judge.py): the before is
built by hand as plain values, the source history is a list per stream, and the decisions are
read straight off the function's result."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import MappingProxyType

import pytest

from lagscope.analysis.causes.episodes import EpisodeState
from lagscope.analysis.causes.model import Cause, DiagnosisMemory, StepSeen
from lagscope.analysis.channel_metrics import ChannelState
from lagscope.analysis.codes import Verdict
from lagscope.analysis.tick import causes as tick_causes
from lagscope.analysis.tick.before import ChannelBefore, ClusterBefore, InstanceBefore
from lagscope.analysis.tick.judge import judge_tick, params_digest
from lagscope.analysis.tick.workers import WorkersBefore
from lagscope.analysis.timeline import ProgressPoint
from lagscope.collectors.flavor import ServerFlavor
from lagscope.collectors.snapshot import (
    ApplierWorker,
    ChannelStatus,
    HeartbeatReading,
    HeartbeatRow,
    InstanceSnapshot,
    IoState,
)
from lagscope.ingest.reader import PollResult as Poll
from tests.factories.snapshots import instance_snapshot

T0 = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
FLAVOR = ServerFlavor("mariadb", (10, 11, 9))
SOURCE, REPLICA = 1, 2


@dataclass
class History:
    """The source's stored points per (instance, stream), oldest first; counts its lookups."""

    points: dict[tuple[int, str], list[tuple[int, int]]] = field(default_factory=dict)
    lookups: int = 0

    def newest(self, instance_id: int, stream: str) -> tuple[int, int] | None:
        rows = self.points.get((instance_id, stream))
        return rows[-1] if rows else None

    def around(self, instance_id: int, stream: str, target: int) -> list[ProgressPoint]:
        self.lookups += 1
        rows = self.points.get((instance_id, stream), [])
        values = [v for _, v in rows]
        i = bisect.bisect_left(values, target)
        found = rows[max(i - 1, 0) : i + 1] if i > 0 else rows[:1]
        return [ProgressPoint(us / 1e6, v) for us, v in found]

    def record(self, second: float, seq: int) -> None:
        at_us = round((T0 + timedelta(seconds=second)).timestamp() * 1e6)
        self.points.setdefault((SOURCE, "0"), []).append((at_us, seq))


def at(second: float) -> float:
    return (T0 + timedelta(seconds=second)).timestamp()


def snap(second: float, server_id: int, executed: str, channels=(), **kw) -> InstanceSnapshot:
    return instance_snapshot(T0, second, server_id, executed, channels, **kw)


def status(source_seq: int, applied_seq: int, sql_running: bool = True, name: str = ""):
    return ChannelStatus(
        name, IoState.YES, sql_running, 0 if sql_running else None, source_server_id=1,
        retrieved_gtids=f"0-1-{source_seq}", executed_gtids=f"0-1-{applied_seq}",
    )  # fmt: skip


def channel(name: str = "", channel_id: int = 10, **kw) -> ChannelBefore:
    base = {
        "state": ChannelState(),
        "diagnosis": DiagnosisMemory(),
        "episode": EpisodeState(),
        "gone": False,
    }
    base.update(kw)
    return ChannelBefore(id=channel_id, name=name, **base)


def cluster(*channels: ChannelBefore, source_kw=None, replica_kw=None, **kw) -> ClusterBefore:
    source = InstanceBefore(SOURCE, "src", "source", "eu", **(source_kw or {}))
    replica = InstanceBefore(
        REPLICA, "r1", "replica", "us", channels=channels, **(replica_kw or {})
    )
    return ClusterBefore(poll_interval_s=1.0, instances=(source, replica), **kw)


def polls(second: float, source_seq: int, replica: InstanceSnapshot | None, error=None):
    return {
        SOURCE: Poll(SOURCE, at(second), snap(second, 1, f"0-1-{source_seq}")),
        REPLICA: Poll(REPLICA, at(second), replica, error),
    }


def test_a_replica_behind_its_source_is_measured_against_the_stored_history() -> None:
    history = History()
    for second in range(11):
        history.record(second, 100 * second)
    before = cluster(channel(), source_kw={"gtid_progress": 900, "last_ok_at": at(9)})
    replica = snap(10, 2, "0-2-5", (status(1000, 450),))
    decisions = judge_tick(before, polls(10, 1000, replica), history)
    (judged,) = decisions.channels
    # The source reached 450 at 4.5 s; read at 10 s: 5.5 s behind on the timeline.
    assert judged.metrics.timeline_lag_s == pytest.approx(5.5)
    assert judged.channel_id == 10 and judged.status is not None
    assert history.lookups == 1  # one lookup, for the one stream behind
    assert decisions.source_view is not None
    assert decisions.source_view.source_rate == pytest.approx(100.0)
    (progress,) = decisions.progress
    assert progress.instance_id == SOURCE and dict(progress.streams) == {"0": 1000}
    assert not progress.forget_all and not progress.went_back


def test_a_caught_up_channel_needs_no_history() -> None:
    history = History()
    decisions = judge_tick(
        cluster(channel()), polls(3, 50, snap(3, 2, "", (status(50, 50),))), history
    )
    assert decisions.channels[0].metrics.timeline_lag_s == 0.0
    assert history.lookups == 0


def test_the_same_before_and_polls_give_the_same_decisions() -> None:
    history = History()
    for second in range(6):
        history.record(second, 10 * second)
    before = cluster(channel())
    tick = polls(5, 50, snap(5, 2, "", (status(50, 20, sql_running=False),)))
    first, second = judge_tick(before, tick, history), judge_tick(before, tick, history)
    assert [c.metrics for c in first.channels] == [c.metrics for c in second.channels]
    assert [c.causes for c in first.channels] == [c.causes for c in second.channels]
    assert before.instances[1].channels[0].episode == EpisodeState()  # the before is untouched


def test_a_stopped_applier_is_named_and_opens_an_episode() -> None:
    before = cluster(channel())
    decisions = judge_tick(
        before, polls(5, 50, snap(5, 2, "", (status(50, 20, sql_running=False),))), History()
    )
    (judged,) = decisions.channels
    assert [c["cause"] for c in judged.causes] == ["stopped"]
    assert judged.causes[0]["since"] == at(5)
    assert judged.episode is not None and judged.episode.opened
    assert judged.episode.state.main_cause == Cause.STOPPED
    assert judged.diagnosis is not None  # the memory the next tick starts from


def test_a_cause_keeps_the_poll_it_was_first_named_at() -> None:
    earlier = [{"cause": "stopped", "since": at(2)}]
    before = cluster(channel(causes=earlier))
    decisions = judge_tick(
        before, polls(5, 50, snap(5, 2, "", (status(50, 20, sql_running=False),))), History()
    )
    assert decisions.channels[0].causes[0]["since"] == at(2)


def test_an_unreachable_replica_keeps_its_channels_judged_without_a_status() -> None:
    kept = ChannelState(applied_progress=40, last_sample_at=at(4), verdict=Verdict.CAUGHT_UP)
    before = cluster(channel(state=kept), channel("gone", 11, gone=True))
    decisions = judge_tick(before, polls(5, 50, None, error="timed\x00 out"), History())
    (judged,) = decisions.channels  # the gone channel is not judged
    assert judged.status is None and judged.channel_id == 10
    assert judged.metrics.verdict == Verdict.UNREACHABLE
    replica = decisions.instance(REPLICA)
    assert replica is not None and replica.snapshot is None
    assert replica.error is not None and "\x00" not in replica.error  # cleaned server text


def test_channels_first_seen_and_gone() -> None:
    before = cluster(channel("a", 10), channel("b", 11))
    replica = snap(5, 2, "", (status(50, 50, name="a"), status(50, 50, name="c")))
    decisions = judge_tick(before, polls(5, 50, replica), History())
    assert [(c.name, c.channel_id) for c in decisions.channels] == [("a", 10), ("c", None)]
    assert decisions.gone == [(REPLICA, 11)]


def test_a_parameter_change_is_seen_with_its_window_and_becomes_the_newest_step() -> None:
    stored = MappingProxyType({"sync_binlog": "1", "slave_parallel_threads": "0"})
    replica_kw = {
        "params": stored,
        "params_digest": params_digest(stored),
        "params_read_at": at(3),
        "step": StepSeen(at(-60), "r1", "sync_binlog 0→1"),
    }
    seen: list[StepSeen | None] = []

    def spy(inputs, memory):
        seen.append(inputs.episode.step if inputs.episode else None)
        return (), memory

    in_episode = EpisodeState(started_at=at(1))
    before = cluster(channel(episode=in_episode), replica_kw=replica_kw)
    params = {"sync_binlog": "1", "slave_parallel_threads": "4", "sync_relay_log": "0"}
    replica = snap(5, 2, "", (status(50, 20),), params=params)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tick_causes, "diagnose", spy)
        decisions = judge_tick(before, polls(5, 50, replica), History())
    judged = decisions.instance(REPLICA)
    assert judged is not None and judged.params_digest == params_digest(params)
    assert [(c.name, c.old_value, c.new_value, c.last_old_at) for c in judged.param_changes] == [
        ("slave_parallel_threads", "0", "4", at(3))
    ]
    assert judged.params_added == ("sync_relay_log",)
    # The episode's context names this tick's change as the newest step (the stored one is a
    # minute older: not the same step).
    assert seen == [StepSeen(at(5), "r1", "slave_parallel_threads 0→4")]


def test_the_same_parameters_change_nothing() -> None:
    stored = MappingProxyType({"sync_binlog": "1"})
    kw = {"params": stored, "params_digest": params_digest(stored), "params_read_at": at(3)}
    replica = snap(5, 2, "", (status(50, 50),), params={"sync_binlog": "1"})
    decisions = judge_tick(cluster(channel(), replica_kw=kw), polls(5, 50, replica), History())
    judged = decisions.instance(REPLICA)
    assert judged is not None and judged.params_digest is None and not judged.param_changes


def test_counter_rates_start_from_the_counters_the_last_tick_left() -> None:
    kw = {"counters": {"Handler_commit": 100}, "counters_at": at(4)}
    replica = snap(5, 2, "", (status(50, 50),), counters={"Handler_commit": 350})
    decisions = judge_tick(cluster(channel(), replica_kw=kw), polls(5, 50, replica), History())
    judged = decisions.instance(REPLICA)
    assert judged is not None and judged.rates is not None
    assert judged.rates.commits_per_s == pytest.approx(250.0)


def test_a_source_history_that_went_back_or_changed_server_is_dropped() -> None:
    history = History()
    for second in range(3):
        history.record(second, 1000 + second)
    back = judge_tick(cluster(source_kw={"server_id": 1}), polls(3, 5, None), history)
    assert back.progress[0].went_back == frozenset({"0"}) and not back.progress[0].forget_all
    moved = judge_tick(cluster(source_kw={"server_id": 7}), polls(3, 2000, None), history)
    assert moved.progress[0].forget_all


def test_the_heartbeat_writer_judged_from_the_source_and_kept_when_it_is_not_read() -> None:
    beat = HeartbeatReading((HeartbeatRow(1, at(-30)),), server_now=at(5), table="hb")
    source = snap(5, 1, "0-1-50", heartbeat=beat)
    before = cluster(channel(), heartbeat_mode="table", heartbeat_interval_s=1.0)
    tick = {SOURCE: Poll(SOURCE, at(5), source), REPLICA: Poll(REPLICA, at(5), None, "down")}
    stopped = judge_tick(before, tick, History()).heartbeat_stopped_at
    assert stopped == pytest.approx(at(-30))
    kept = cluster(channel(), heartbeat_mode="table", heartbeat_stopped_at=at(-30))
    unread = {SOURCE: Poll(SOURCE, at(6), None, "down")}
    assert judge_tick(kept, unread, History()).heartbeat_stopped_at == at(-30)
    off = cluster(channel(), heartbeat_stopped_at=at(-30))
    assert judge_tick(off, unread, History()).heartbeat_stopped_at is None


def test_applier_workers_are_counted_against_the_last_reading() -> None:
    workers = (
        ApplierWorker("", 1, 11, "applying", last_applied_trx="0-1-7", busy=True, idle_s=0.0),
        ApplierWorker("", 2, 12, "idle", last_applied_trx="0-1-5", busy=False, idle_s=30.0),
        ApplierWorker("", 3, 13, "idle", last_applied_trx="0-1-6", busy=False, idle_s=30.0),
    )
    last = [
        {"channel": "", "worker_id": 2, "last_applied_trx": "0-1-5"},
        {"channel": "", "worker_id": 3, "last_applied_trx": "0-1-4"},
    ]
    kw = {"workers": WorkersBefore(at(4), None, last), "user": "mon"}
    replica = snap(5, 2, "", (status(50, 50),), workers=workers)
    decisions = judge_tick(cluster(channel(), replica_kw=kw), polls(5, 50, replica), History())
    judged = decisions.instance(REPLICA)
    assert judged is not None and judged.workers is not None
    (row,) = judged.workers.rows
    # Worker 1 holds a transaction; 3 applied one since the last read; 2 did nothing.
    assert (row.workers, row.busy, row.active) == (3, 1, 2)
    assert judged.workers.stored_before and judged.workers.problem is None
    assert [w["worker_id"] for w in judged.workers.workers or []] == [1, 2, 3]


def test_workers_hidden_by_a_missing_privilege_name_the_grant_for_the_user() -> None:
    problems = MappingProxyType({"workers": "monitoring user lacks the privilege"})
    replica = snap(5, 2, "", (status(50, 50),), problems=problems)
    before = cluster(channel(), replica_kw={"user": "mon"})
    judged = judge_tick(before, polls(5, 50, replica), History()).instance(REPLICA)
    assert judged is not None and judged.workers is not None
    assert judged.workers.workers is None and not judged.workers.stored_before
    assert "'mon'@'<lagscope host>'" in (judged.workers.problem or "")
