"""Record one tick: load what it starts from, judge it (analysis/tick/judge.py), write.

The judgement is one pure function; this module only loads the before (tick_before.py) and
writes the decisions. The rows a tick appends (samples, instance samples, source progress,
applier workers) go to the batch's writes (tick_writes.py): one multi-row insert per table for
the whole batch; the parameter and episode rows through the session. The state the next tick
needs (GTID progress, counters, verdict window) is written to the store, so any worker can poll
the cluster next; a poll owner's memory (tick_memory.py) keeps the larger memories and hands
them to the store only every checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import IntEnum
from typing import Any, cast

from sqlalchemy import Table, update
from sqlalchemy.orm import Session

from lagscope.analysis.causes.episodes import CAUGHT_UP_HOLD_S
from lagscope.analysis.causes.serial import episode_state_to_json
from lagscope.analysis.channel_metrics import ChannelMetrics
from lagscope.analysis.eta import eta_to_json
from lagscope.analysis.tick.decisions import ChannelJudged, InstanceJudged, TickDecisions
from lagscope.analysis.tick.judge import judge_tick, server_text
from lagscope.collectors.snapshot import ChannelStatus, InstanceSnapshot
from lagscope.ingest.episodes import close_removed, record_episode_step
from lagscope.ingest.reader import PollResult
from lagscope.ingest.source_progress import StoreHistory, write_progress
from lagscope.ingest.tick_before import cluster_before, remember_params
from lagscope.ingest.tick_memory import (
    KeptCounters,
    KeptDiagnosis,
    KeptEta,
    TickMemory,
    checkpoint_due,
)
from lagscope.ingest.tick_writes import TickWrites
from lagscope.ingest.workers import write_workers
from lagscope.metrics_catalog import CHANNEL_COLUMNS
from lagscope.models import (
    Channel,
    Cluster,
    Instance,
    InstanceSample,
    ParamChange,
    ParamValue,
    Sample,
)
from lagscope.models.loaded import assign


@dataclass(slots=True)
class TickSummary:
    samples: int = 0
    unreachable: list[str] = field(default_factory=list)
    param_changes: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)
    # The cluster as the tick left it, and the rows the tick wrote, by channel and by instance
    # id: what its alerts are judged on.
    cluster: Cluster | None = None
    sample_rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    instance_rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    # By instance id, the parameters this tick read (the remote write pushes them every poll).
    params: dict[int, Mapping[str, str | None]] = field(default_factory=dict)


def record_tick(
    session: Session,
    cluster: Cluster,
    readings: Sequence[PollResult],
    caught_up_hold_s: float = CAUGHT_UP_HOLD_S,
    keep_statement_text: bool = False,
    writes: TickWrites | None = None,
    memory: TickMemory | None = None,
) -> TickSummary:
    """``caught_up_hold_s``: how long a channel stays caught up before its episode ends;
    ``keep_statement_text``: whether the causes keep statements' full text beside digests;
    ``writes``: where the appended rows go (sent with the batch; None: sent now); ``memory``:
    what the cluster's last ticks stored (tick_memory.py)."""
    send_now = writes is None
    writes = TickWrites() if writes is None else writes
    polls = {r.instance_id: r for r in readings}
    history = StoreHistory(session.connection(), memory)
    before = cluster_before(session, cluster, memory, polls)
    decisions = judge_tick(before, polls, history, caught_up_hold_s, keep_statement_text)
    summary = write_tick(session, cluster, decisions, writes, memory)
    if send_now:
        writes.send(session.connection())
    return summary


def write_tick(
    session: Session,
    cluster: Cluster,
    decisions: TickDecisions,
    writes: TickWrites,
    memory: TickMemory | None = None,
) -> TickSummary:
    """Write what the tick decided; the appended rows go to ``writes``."""
    summary = TickSummary(cluster=cluster)
    stopped = decisions.heartbeat_stopped_at
    assign(cluster, {"heartbeat_stopped_at": None if stopped is None else _at(stopped)})
    db = session.connection()
    for progress in decisions.progress:
        write_progress(db, progress, writes, memory)
    instances = {i.id: i for i in cluster.instances}
    instance_rows: list[dict[str, Any]] = []
    workers = memory.workers if memory is not None else {}
    for judged in decisions.instances:
        instance = instances[judged.id]
        if judged.snapshot is None:
            summary.unreachable.append(instance.name)
            instance_rows.append(_unreachable(instance, judged))
            continue
        instance_rows.append(_instance_row(judged))
        if judged.workers is not None:
            write_workers(writes, workers, judged.id, _at(judged.at), judged.workers)
        if judged.snapshot.params_read:
            summary.params[judged.id] = judged.snapshot.params
        if judged.params_digest is not None:
            _write_params(session, instance, judged, summary)
        _update_instance(instance, judged, memory)
    channels = _channels(session, cluster, decisions)
    samples = []
    for judged_channel in decisions.channels:
        channel = channels[(judged_channel.instance_id, judged_channel.name)]
        samples.append(_write_channel(channel, judged_channel, memory))
    for judged_channel in decisions.channels:
        channel = channels[(judged_channel.instance_id, judged_channel.name)]
        _write_causes(session, cluster, channel, judged_channel, memory)
    for instance in cluster.instances:
        for channel in instance.channels:
            if channel.gone_at is not None and channel.episode_id is not None:
                close_removed(session, channel)
    # Core rows, not the ORM's bulk path: that would autoflush first and convert each row again.
    writes.insert(_SAMPLES, samples)
    writes.insert(_INSTANCE_SAMPLES, instance_rows)
    summary.samples = len(samples)
    summary.sample_rows = {row["channel_id"]: row for row in samples}
    summary.instance_rows = {row["instance_id"]: row for row in instance_rows}
    session.flush()
    return summary


_SAMPLES = cast(Table, Sample.__table__)
_INSTANCE_SAMPLES = cast(Table, InstanceSample.__table__)
# An unreachable instance's row: every column given (one executemany takes one set of keys).
_NO_READING: dict[str, Any] = {
    **dict.fromkeys(InstanceSample.__table__.columns.keys(), None),
    "reachable": False,
}


def _at(epoch_s: float) -> datetime:
    return datetime.fromtimestamp(epoch_s, UTC)


def _unreachable(instance: Instance, judged: InstanceJudged) -> dict[str, Any]:
    at = _at(judged.at)
    instance.last_polled_at, instance.last_error = at, judged.error
    instance.last_error_kind = judged.error_kind
    return {**_NO_READING, "instance_id": instance.id, "ts": at}


def _update_instance(instance: Instance, judged: InstanceJudged, memory: TickMemory | None) -> None:
    snap = judged.snapshot
    assert snap is not None
    at = _at(judged.at)
    values = {
        "flavor": snap.flavor.product,
        "version": snap.flavor.version_string or str(snap.flavor),
        "server_id": snap.server_id,
        "server_uuid": snap.server_uuid,
        "last_polled_at": at,
        "last_ok_at": at,
        "last_error": judged.error,
        "last_error_kind": None,
        "clock_offset_s": snap.clock.offset_s,
        "clock_resolution_s": snap.clock.resolution_s,
        "gtid_executed": snap.gtid.executed,
        "gtid_progress": judged.gtid_progress,
    }
    if snap.params_read:
        values["params_read_at"] = at
    assign(instance, values)
    _remember_counters(instance, snap, memory)


def _remember_counters(
    instance: Instance, snap: InstanceSnapshot, memory: TickMemory | None
) -> None:
    """The counters the next tick's rates start from; an owner's ``memory`` keeps them and
    hands them to the store only every checkpoint (tick_memory.py)."""
    read_at = snap.taken_at.timestamp()
    kept = memory.counters.get(instance.id) if memory is not None else None
    stored_at = kept.stored_at if kept else None
    if stored_at is None or checkpoint_due(stored_at, read_at):
        instance.last_counters = {**snap.counters, "_at": read_at}
        stored_at = read_at
    if memory is not None:
        memory.counters[instance.id] = KeptCounters(snap.counters, read_at, stored_at)


def _instance_row(judged: InstanceJudged) -> dict[str, Any]:
    snap, rates = judged.snapshot, judged.rates
    assert snap is not None and rates is not None
    row = {
        "instance_id": judged.id,
        "ts": _at(judged.at),
        "reachable": True,
        "round_trip_s": snap.round_trip_s,
        "clock_offset_s": snap.clock.offset_s,
    }
    for name in _RATE_COLUMNS:
        row[name] = getattr(rates, name)
    return row


_RATE_COLUMNS = (
    "commits_per_s", "binlog_commits_per_s", "binlog_group_commits_per_s", "log_fsyncs_per_s",
    "data_fsyncs_per_s", "data_written_per_s", "log_written_per_s", "dblwr_pages_per_s",
    "binlog_fsync_s_per_s", "relay_log_fsync_s_per_s", "redo_fsync_s_per_s", "fsync_latency_s",
    "semi_sync_on", "semi_sync_avg_wait_s", "redo_log_enabled",
)  # fmt: skip


def _write_params(
    session: Session, instance: Instance, judged: InstanceJudged, summary: TickSummary
) -> None:
    snap = judged.snapshot
    assert snap is not None and judged.params_digest is not None
    at = _at(judged.at)
    for name in judged.params_added:
        session.add(
            ParamValue(instance_id=instance.id, name=name, value=snap.params[name], since=at)
        )
    for change in judged.param_changes:
        session.add(
            ParamChange(
                instance_id=instance.id,
                name=change.name,
                old_value=change.old_value,
                new_value=change.new_value,
                last_old_at=_at(change.last_old_at),
                first_new_at=at,
            )
        )
        session.execute(
            update(ParamValue)
            .where(ParamValue.instance_id == instance.id, ParamValue.name == change.name)
            .values(value=change.new_value, since=at)
        )
        summary.param_changes.append(
            (instance.name, change.name, change.old_value, change.new_value)
        )
    instance.params_digest = judged.params_digest
    remember_params(instance.id, judged.params_digest, snap.params)


def _channels(
    session: Session, cluster: Cluster, decisions: TickDecisions
) -> dict[tuple[int, str], Channel]:
    """The tick's channels by (instance id, name): those first seen now are added (their ids
    go in the sample rows); those that left their replica are marked gone."""
    instances = {i.id: i for i in cluster.instances}
    gone = {channel_id for _, channel_id in decisions.gone}
    out: dict[tuple[int, str], Channel] = {}
    for instance in cluster.instances:
        for channel in instance.channels:
            out[(instance.id, channel.name)] = channel
    for judged in decisions.instances:
        if judged.snapshot is None:
            continue
        for channel in instances[judged.id].channels:
            if channel.id in gone:
                channel.gone_at = _at(judged.at)  # RESET SLAVE ALL, or a channel removed
    new = [c for c in decisions.channels if c.channel_id is None]
    for judged_channel in new:
        channel = Channel(name=judged_channel.name, first_seen_at=_at(judged_channel.at))
        instances[judged_channel.instance_id].channels.append(channel)
        out[(judged_channel.instance_id, judged_channel.name)] = channel
    if new:
        session.flush()  # ids for the sample rows
    return out


def _write_channel(
    channel: Channel, judged: ChannelJudged, memory: TickMemory | None
) -> dict[str, Any]:
    """The channel's state for the next tick, and its sample row."""
    at = _at(judged.at)
    reachable = judged.status is not None
    if judged.status is not None:
        _remember_status(channel, judged.status, judged.metrics.errant_gtids)
    _remember(channel, judged.metrics, at, memory, keep_progress_time=not reachable)
    return sample_row(channel.id, at, judged.metrics, judged.status)


def _write_causes(
    session: Session,
    cluster: Cluster,
    channel: Channel,
    judged: ChannelJudged,
    memory: TickMemory | None,
) -> None:
    if channel.current_causes != judged.causes:
        channel.current_causes = judged.causes
    if judged.diagnosis is not None:
        held = memory.diagnosis.get(channel.id) if memory is not None else None
        stored_at = held.stored_at if held else None
        if stored_at is None or checkpoint_due(stored_at, judged.at):
            channel.diagnosis_memory = judged.diagnosis.to_json()
            stored_at = judged.at
        if memory is not None:
            memory.diagnosis[channel.id] = KeptDiagnosis(judged.diagnosis, stored_at)
    assert judged.episode is not None
    state = record_episode_step(
        session, cluster, channel, judged.episode_before, judged.episode, judged.at
    )
    channel.episode_state = stored = episode_state_to_json(state)
    if memory is not None:
        memory.episodes[channel.id] = (stored, state)


def _remember_status(channel: Channel, status: ChannelStatus, errant: str | None) -> None:
    values = {
        "gone_at": None,
        "retrieved_gtids": status.retrieved_gtids,
        "executed_gtids": status.executed_gtids,
        "last_io_errno": status.last_io_errno,
        "last_io_error": server_text(status.last_io_error),
        "last_sql_errno": status.last_sql_errno,
        "last_sql_error": server_text(status.last_sql_error),
        "source_server_id": status.source_server_id,
        "source_host": status.source_host,
        "source_port": status.source_port,
        "sql_delay_s": status.sql_delay,
        "errant_gtids": errant,
    }
    assign(channel, values)


def _remember(
    channel: Channel,
    metrics: ChannelMetrics,
    at: datetime,
    memory: TickMemory | None = None,
    keep_progress_time: bool = False,
) -> None:
    """The channel's state for the next tick; an owner's ``memory`` keeps the ETA band's memory
    and hands it to the store only every checkpoint (tick_memory.py)."""
    state = metrics.state
    values = {
        "recent_classes": ",".join(str(int(v)) for v in state.recent_classes),
        "verdict": int(metrics.verdict),
        "eta": eta_to_json(metrics.eta),
    }
    if not keep_progress_time:
        values["applied_progress"] = state.applied_progress
        values["last_sample_at"] = at
    assign(channel, values)
    kept = memory.eta.get(channel.id) if memory is not None else None
    stored_at = kept.stored_at if kept else None
    poll_at = at.timestamp()
    if stored_at is None or checkpoint_due(stored_at, poll_at):
        channel.eta_memory = state.eta_memory.to_json()
        stored_at = poll_at
    if memory is not None:
        memory.eta[channel.id] = KeptEta(state.eta_memory, stored_at)


# (column, copied from the channel status as read?) for every stored per-channel value.
_SAMPLE_COLUMNS = tuple((m.name, m.from_status) for m in CHANNEL_COLUMNS)


def sample_row(
    channel_id: int, at: datetime, m: ChannelMetrics, status: ChannelStatus | None = None
) -> dict[str, Any]:
    """The ``samples`` row, one column per catalog row; codes (verdict, lag source) as ints.
    ``status`` is None for a channel on a server that did not answer."""
    row: dict[str, Any] = {"channel_id": channel_id, "ts": at}
    for name, from_status in _SAMPLE_COLUMNS:
        value = getattr(status, name, None) if from_status else getattr(m, name)
        row[name] = int(value) if isinstance(value, IntEnum) else value
    return row
