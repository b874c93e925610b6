"""Turn one tick's readings into stored rows: samples, instance rates, parameter changes, state.

The rows a tick appends (samples, instance samples, source progress, applier workers) go to
the batch's writes (tick_writes.py): one multi-row insert per table for the whole batch; the
parameter and episode rows through the session. The state the next tick needs (GTID progress,
counters, verdict window) is written to the store, so any worker can poll the cluster next.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import IntEnum
from typing import Any, cast

from sqlalchemy import Table, select
from sqlalchemy.orm import Session

from lagscope.analysis.causes.episodes import CAUGHT_UP_HOLD_S
from lagscope.analysis.channel_metrics import (
    ChannelMetrics,
    ChannelState,
    SourceView,
    channel_metrics,
    unreachable_metrics,
)
from lagscope.analysis.codes import Verdict
from lagscope.analysis.eta import EtaMemory, eta_to_json
from lagscope.analysis.heartbeat import writer_stopped_since
from lagscope.analysis.progress import progress_of
from lagscope.analysis.rates import CounterRates, counter_rates, rate
from lagscope.analysis.server_text import clean_text
from lagscope.collectors.snapshot import ChannelStatus, InstanceSnapshot
from lagscope.ingest.causes import ChannelTick, record_causes
from lagscope.ingest.reader import PollResult
from lagscope.ingest.source_progress import SourceProgressNow, channel_timeline, record_sources
from lagscope.ingest.tick_memory import KeptCounters, KeptEta, TickMemory, checkpoint_due
from lagscope.ingest.tick_writes import TickWrites
from lagscope.ingest.workers import record_workers
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
    by_id = {r.instance_id: r for r in readings}
    source = next((i for i in cluster.instances if i.role == "source"), None)
    source_reading = by_id.get(source.id) if source else None
    _judge_heartbeat_writer(cluster, source_reading.snapshot if source_reading else None)
    source_view = _source_view(source, source_reading, cluster.heartbeat_stopped_at)
    changed = [
        i.id
        for i in cluster.instances
        if (r := by_id.get(i.id)) and r.snapshot and _params_changed(i, r.snapshot, memory)
    ]
    params = _current_params(session, changed)
    progress = record_sources(session, cluster, by_id, writes, memory)
    summary = TickSummary()
    samples: list[dict[str, Any]] = []
    instance_samples: list[dict[str, Any]] = []
    polled: list[tuple[Instance, InstanceSnapshot, datetime]] = []
    ticks: list[ChannelTick] = []
    # Before any instance row is updated: the rates are over (its last poll, this one].
    rates: dict[int, CounterRates] = {}
    for i in cluster.instances:
        polled_snap = by_id[i.id].snapshot if i.id in by_id else None
        if polled_snap is not None:
            rates[i.id] = _counter_rates(i, polled_snap, memory)
    for instance in cluster.instances:
        reading = by_id.get(instance.id)
        if reading is None:
            continue
        at = datetime.fromtimestamp(reading.read_at, UTC)
        if reading.snapshot is None:
            summary.unreachable.append(instance.name)
            instance.last_polled_at, instance.last_error = at, _server_text(reading.error)
            instance.last_error_kind = reading.error_kind
            instance_samples.append({**_NO_READING, "instance_id": instance.id, "ts": at})
            samples.extend(_unreachable_samples(instance, reading.read_at, at, ticks, memory))
            continue
        snap = reading.snapshot
        instance_samples.append(_instance_sample(instance, snap, at, rates[instance.id]))
        polled.append((instance, snap, at))
        if snap.params_read:
            summary.params[instance.id] = snap.params
        if instance.id in changed:
            _record_params(session, instance, snap, params.get(instance.id, {}), at, summary)
        samples.extend(
            _channel_samples(
                session, cluster, instance, snap, source_view, at, progress, ticks, memory
            )
        )
        _update_instance(instance, snap, at, memory)
    snapshots = {i.id: s for i, s, _ in polled}
    record_causes(
        session,
        cluster,
        ticks,
        snapshots,
        rates,
        source_view,
        caught_up_hold_s,
        keep_statement_text,
        memory,
    )
    # Core rows, not the ORM's bulk path: that would autoflush first and convert each row again.
    writes.insert(_SAMPLES, samples)
    writes.insert(_INSTANCE_SAMPLES, instance_samples)
    record_workers(session, polled, writes, memory)
    summary.samples = len(samples)
    summary.cluster = cluster
    summary.sample_rows = {row["channel_id"]: row for row in samples}
    summary.instance_rows = {row["instance_id"]: row for row in instance_samples}
    session.flush()
    if send_now:
        writes.send(session.connection())
    return summary


_SAMPLES = cast(Table, Sample.__table__)
_INSTANCE_SAMPLES = cast(Table, InstanceSample.__table__)
# An unreachable instance's row: every column given (one executemany takes one set of keys).
_NO_READING: dict[str, Any] = {
    **dict.fromkeys(InstanceSample.__table__.columns.keys(), None),
    "reachable": False,
}


def _judge_heartbeat_writer(cluster: Cluster, source: InstanceSnapshot | None) -> None:
    """Is the writer's row on the source still advancing? A source that did not answer, or whose
    heartbeat table could not be read, leaves the last judgement as it was."""
    if cluster.heartbeat_mode == "off":
        cluster.heartbeat_stopped_at = None
        return
    if source is None or source.heartbeat is None:
        return
    own = source.heartbeat.newest(source.server_id)
    stopped = writer_stopped_since(
        own.ts if own else None, source.heartbeat.server_now, cluster.heartbeat_interval_s
    )
    cluster.heartbeat_stopped_at = None if stopped is None else datetime.fromtimestamp(stopped, UTC)


def _source_view(
    source: Instance | None, reading: PollResult | None, heartbeat_stopped_at: datetime | None
) -> SourceView | None:
    """The source in this tick; when it did not answer, what we last knew of it (no rate)."""
    if source is None:
        return None
    stopped_at = heartbeat_stopped_at.timestamp() if heartbeat_stopped_at else None
    snap = reading.snapshot if reading else None
    if snap is None:
        if source.gtid_executed is None:
            return None
        return SourceView(
            source.gtid_executed,
            source.server_id,
            None,
            source.clock_offset_s,
            heartbeat_stopped_at=stopped_at,
            server_uuid=source.server_uuid,
        )
    progress = _progress(snap)
    prev_at = source.last_ok_at.timestamp() if source.last_ok_at else None
    return SourceView(
        executed=snap.gtid.executed,
        server_id=snap.server_id,
        source_rate=rate(source.gtid_progress, prev_at, progress, snap.taken_at.timestamp()),
        clock_offset_s=snap.clock.offset_s,
        clock=snap.clock,
        strict_mode=snap.gtid.strict_mode is not False,
        heartbeat_stopped_at=stopped_at,
        parsed=snap.parsed,
        server_uuid=snap.server_uuid,
    )


def _progress(snap: InstanceSnapshot) -> int | None:
    try:
        return progress_of(snap.gtids(snap.gtid.executed))
    except ValueError:
        return None


def _update_instance(
    instance: Instance, snap: InstanceSnapshot, at: datetime, memory: TickMemory | None
) -> None:
    instance.flavor = snap.flavor.product
    instance.version = snap.flavor.version_string or str(snap.flavor)
    instance.server_id, instance.server_uuid = snap.server_id, snap.server_uuid
    instance.last_polled_at = instance.last_ok_at = at
    instance.last_error = _server_text("; ".join(f"{k}: {v}" for k, v in snap.problems.items()))
    instance.last_error_kind = None
    instance.clock_offset_s = snap.clock.offset_s
    instance.clock_resolution_s = snap.clock.resolution_s
    instance.gtid_executed = snap.gtid.executed
    instance.gtid_progress = _progress(snap)
    _remember_counters(instance, snap, memory)
    if snap.params_read:
        instance.params_read_at = at


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


def _counter_rates(
    instance: Instance, snap: InstanceSnapshot, memory: TickMemory | None
) -> CounterRates:
    kept = memory.counters.get(instance.id) if memory is not None else None
    if kept is not None:
        return counter_rates(kept.values, kept.at, snap.counters, snap.taken_at.timestamp())
    prev = dict(instance.last_counters or {})
    prev_at = prev.pop("_at", None)
    return counter_rates(prev or None, prev_at, snap.counters, snap.taken_at.timestamp())


def _instance_sample(
    instance: Instance, snap: InstanceSnapshot, at: datetime, rates: CounterRates
) -> dict[str, Any]:
    return {
        "instance_id": instance.id,
        "ts": at,
        "reachable": True,
        "round_trip_s": snap.round_trip_s,
        "clock_offset_s": snap.clock.offset_s,
        "commits_per_s": rates.commits_per_s,
        "binlog_commits_per_s": rates.binlog_commits_per_s,
        "binlog_group_commits_per_s": rates.binlog_group_commits_per_s,
        "log_fsyncs_per_s": rates.log_fsyncs_per_s,
        "data_fsyncs_per_s": rates.data_fsyncs_per_s,
        "data_written_per_s": rates.data_written_per_s,
        "log_written_per_s": rates.log_written_per_s,
        "dblwr_pages_per_s": rates.dblwr_pages_per_s,
        "binlog_fsync_s_per_s": rates.binlog_fsync_s_per_s,
        "relay_log_fsync_s_per_s": rates.relay_log_fsync_s_per_s,
        "redo_fsync_s_per_s": rates.redo_fsync_s_per_s,
        "fsync_latency_s": rates.fsync_latency_s,
        "semi_sync_on": rates.semi_sync_on,
        "semi_sync_avg_wait_s": rates.semi_sync_avg_wait_s,
        "redo_log_enabled": rates.redo_log_enabled,
    }


def params_digest(values: Mapping[str, str | None]) -> str:
    text = "\x1f".join(
        f"{k}\x1e{'' if v is None else v}\x1e{v is None:d}" for k, v in sorted(values.items())
    )
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _params_changed(instance: Instance, snap: InstanceSnapshot, memory: TickMemory | None) -> bool:
    if not snap.params_read:
        return False
    if memory is None:
        return params_digest(snap.params) != instance.params_digest
    # An owner remembers the last parameters read and their digest: the same values (nearly
    # always) are compared as a dict, not sorted, joined and hashed again.
    seen = memory.params.get(instance.id)
    if seen is None or seen[0] != snap.params:
        seen = memory.params[instance.id] = (snap.params, params_digest(snap.params))
    return seen[1] != instance.params_digest


def _current_params(session: Session, instance_ids: list[int]) -> dict[int, dict[str, ParamValue]]:
    current: dict[int, dict[str, ParamValue]] = {}
    if instance_ids:
        rows = session.scalars(select(ParamValue).where(ParamValue.instance_id.in_(instance_ids)))
        for row in rows:
            current.setdefault(row.instance_id, {})[row.name] = row
    return current


def _record_params(
    session: Session,
    instance: Instance,
    snap: InstanceSnapshot,
    known: Mapping[str, ParamValue],
    at: datetime,
    summary: TickSummary,
) -> None:
    """A value that differs from the stored one changed in (the last poll that read parameters,
    this poll]: failed polls in between only widen that window."""
    for name, value in snap.params.items():
        stored = known.get(name)
        if stored is None:
            session.add(ParamValue(instance_id=instance.id, name=name, value=value, since=at))
        elif stored.value != value:
            session.add(
                ParamChange(
                    instance_id=instance.id,
                    name=name,
                    old_value=stored.value,
                    new_value=value,
                    last_old_at=instance.params_read_at or stored.since,
                    first_new_at=at,
                )
            )
            summary.param_changes.append((instance.name, name, stored.value, value))
            stored.value, stored.since = value, at
    instance.params_digest = params_digest(snap.params)


def _channel_samples(
    session: Session,
    cluster: Cluster,
    instance: Instance,
    snap: InstanceSnapshot,
    source: SourceView | None,
    at: datetime,
    progress: SourceProgressNow,
    ticks: list[ChannelTick],
    memory: TickMemory | None,
) -> list[dict[str, Any]]:
    existing = {c.name: c for c in instance.channels}
    seen = {status.channel for status in snap.channels}
    for channel in existing.values():
        if channel.name not in seen and channel.gone_at is None:
            channel.gone_at = at  # RESET SLAVE ALL, or a channel removed
    new = [
        Channel(name=s.channel, first_seen_at=at)
        for s in snap.channels
        if s.channel not in existing
    ]
    if new:
        instance.channels.extend(new)
        session.flush()  # ids for the sample rows
        existing.update((c.name, c) for c in new)
    rows = []
    interval = cluster.heartbeat_interval_s if cluster.heartbeat_mode != "off" else None
    for status in snap.channels:
        channel = existing[status.channel]
        channel.gone_at = None
        timeline = channel_timeline(
            session, progress, status, snap.taken_at.timestamp(), parsed=snap.parsed
        )
        state = _state(channel, memory)
        metrics = channel_metrics(status, snap, source, state, interval, timeline)
        _remember_status(channel, status)
        _remember(channel, metrics, at, memory)
        channel.errant_gtids = metrics.errant_gtids
        rows.append(_sample_row(channel.id, at, metrics, status))
        ticks.append(ChannelTick(instance, channel, at.timestamp(), metrics, status, snap))
    return rows


def _server_text(text: str | None) -> str | None:
    """A server's message as stored: cleaned (a NUL would fail PostgreSQL's write of the whole
    tick), None when empty."""
    return clean_text(text) or None if text else None


def _remember_status(channel: Channel, status: ChannelStatus) -> None:
    channel.retrieved_gtids, channel.executed_gtids = status.retrieved_gtids, status.executed_gtids
    channel.last_io_errno, channel.last_io_error = (
        status.last_io_errno,
        _server_text(status.last_io_error),
    )
    channel.last_sql_errno, channel.last_sql_error = (
        status.last_sql_errno,
        _server_text(status.last_sql_error),
    )
    channel.source_server_id = status.source_server_id
    channel.source_host, channel.source_port = status.source_host, status.source_port
    channel.sql_delay_s = status.sql_delay


def _unreachable_samples(
    instance: Instance,
    read_at: float,
    at: datetime,
    ticks: list[ChannelTick],
    memory: TickMemory | None,
) -> list[dict[str, Any]]:
    rows = []
    for channel in instance.channels:
        if channel.gone_at is None:
            metrics = unreachable_metrics(_state(channel, memory), read_at)
            _remember(channel, metrics, at, memory, keep_progress_time=True)
            rows.append(_sample_row(channel.id, at, metrics))
            ticks.append(ChannelTick(instance, channel, read_at, metrics))
    return rows


def stored_classes(channel: Channel) -> tuple[Verdict, ...]:
    """The per-poll classes of the channel's last few polls as stored, oldest first."""
    return tuple(Verdict(int(c)) for c in channel.recent_classes.split(",") if c)


def _state(channel: Channel, memory: TickMemory | None = None) -> ChannelState:
    classes = stored_classes(channel)
    kept = memory.eta.get(channel.id) if memory is not None else None
    return ChannelState(
        applied_progress=channel.applied_progress,
        last_sample_at=channel.last_sample_at.timestamp() if channel.last_sample_at else None,
        recent_classes=classes,
        verdict=Verdict(channel.verdict) if channel.verdict is not None else None,
        eta_memory=kept.memory if kept else EtaMemory.from_json(channel.eta_memory),
    )


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
    channel.recent_classes = ",".join(str(int(v)) for v in state.recent_classes)
    channel.verdict = int(metrics.verdict)
    channel.eta = eta_to_json(metrics.eta)
    kept = memory.eta.get(channel.id) if memory is not None else None
    stored_at = kept.stored_at if kept else None
    poll_at = at.timestamp()
    if stored_at is None or checkpoint_due(stored_at, poll_at):
        channel.eta_memory = state.eta_memory.to_json()
        stored_at = poll_at
    if memory is not None:
        memory.eta[channel.id] = KeptEta(state.eta_memory, stored_at)
    if not keep_progress_time:
        channel.applied_progress = state.applied_progress
        channel.last_sample_at = at


# (column, copied from the channel status as read?) for every stored per-channel value.
_SAMPLE_COLUMNS = tuple((m.name, m.from_status) for m in CHANNEL_COLUMNS)


def _sample_row(
    channel_id: int, at: datetime, m: ChannelMetrics, status: ChannelStatus | None = None
) -> dict[str, Any]:
    """The ``samples`` row, one column per catalog row; codes (verdict, lag source) as ints.
    ``status`` is None for a channel on a server that did not answer."""
    row: dict[str, Any] = {"channel_id": channel_id, "ts": at}
    for name, from_status in _SAMPLE_COLUMNS:
        value = getattr(status, name, None) if from_status else getattr(m, name)
        row[name] = int(value) if isinstance(value, IntEnum) else value
    return row
