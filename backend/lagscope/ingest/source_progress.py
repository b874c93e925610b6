"""Keep each source's progress history in the store and read a channel's timeline lag from it.

The history (table ``source_progress``) is written once per tick for every instance that some
channel replicates from, so whichever worker polls the cluster next can use it, and it survives
restarts. The decisions (streams, went-back, interpolation) are in analysis/timeline.py; this
module only loads and saves. A channel needs at most three rows per stream: the newest, and the
two around its applied value, fetched by the primary key (instance, stream, ts).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, cast

from sqlalchemy import BigInteger, Connection, Table, bindparam, delete, insert, select, type_coerce
from sqlalchemy.orm import Session

from lagscope.analysis.timeline import (
    ProgressPoint,
    TimelineLag,
    replica_streams,
    source_streams,
    stream_lag,
    went_back,
)
from lagscope.collectors.gtid import GtidTexts
from lagscope.collectors.snapshot import ChannelStatus, InstanceSnapshot
from lagscope.ingest.reader import PollResult
from lagscope.ingest.tick_memory import TickMemory
from lagscope.ingest.tick_writes import TickWrites
from lagscope.models import Cluster, Instance, SourceProgress
from lagscope.models.types import to_micros

# One hour of source history: a replica further behind than that has an unknown timeline lag
# (the other lag sources still apply). 3,600 small rows per stream and source at 1 Hz.
RETENTION_S = 3600.0
# Two source polls further apart than this (Lagscope or the source down) do not bracket a lag:
# interpolating across the hole could be off by the whole hole, so the lag there is unknown.
MAX_GAP_S = 30.0
_PRUNE_US = 60_000_000
_TS = type_coerce(SourceProgress.ts, BigInteger())  # the stored µs, no datetime round trip


@dataclass(frozen=True, slots=True)
class SourceNow:
    """A source as read in this tick: its row id, its snapshot and its progress per stream."""

    instance_id: int
    snap: InstanceSnapshot
    streams: dict[str, int]


@dataclass(slots=True)
class SourceProgressNow:
    """This tick's sources by server_id (what a channel names as its source), and the cluster's
    own source for channels that name none we know."""

    by_server_id: dict[int, SourceNow] = field(default_factory=dict)
    default: SourceNow | None = None

    def for_channel(self, status: ChannelStatus) -> SourceNow | None:
        """The source the channel names; the cluster's source when it names none yet (0 before
        the IO thread first connects). A named source not read this tick (not in the inventory,
        or unreachable) gives None: measuring against another source would be a wrong figure."""
        if status.source_server_id:
            return self.by_server_id.get(status.source_server_id)
        return self.default


def record_sources(
    session: Session,
    cluster: Cluster,
    readings: Mapping[int, PollResult],
    writes: TickWrites | None = None,
    memory: TickMemory | None = None,
) -> SourceProgressNow:
    """Record the progress of every reachable instance some channel replicates from (the
    cluster's source, and intermediate sources in a chain or multi-source setup). With
    ``writes`` the new points go out with the batch; ``memory``: the newest points the
    cluster's last ticks stored."""
    named = {
        status.source_server_id
        for reading in readings.values()
        if reading.snapshot is not None
        for status in reading.snapshot.channels
        if status.source_server_id is not None
    }
    now = SourceProgressNow()
    for instance in cluster.instances:
        reading = readings.get(instance.id)
        snap = reading.snapshot if reading else None
        if snap is None or (instance.role != "source" and snap.server_id not in named):
            continue
        streams = record_progress(session, instance, snap, writes=writes, memory=memory)
        entry = SourceNow(instance.id, snap, streams)
        now.by_server_id[snap.server_id] = entry
        if instance.role == "source":
            now.default = entry
    return now


def _product(snap: InstanceSnapshot) -> Literal["mysql", "mariadb"]:
    return "mariadb" if snap.flavor.product == "mariadb" else "mysql"


def snapshot_streams(snap: InstanceSnapshot) -> dict[str, int]:
    source = snap.source
    return source_streams(
        _product(snap),
        snap.gtid.executed,
        source.binlog_file if source else None,
        source.binlog_position if source else None,
        parsed=snap.parsed,
    )


def record_progress(
    session: Session,
    instance: Instance,
    snap: InstanceSnapshot,
    retention_s: float = RETENTION_S,
    writes: TickWrites | None = None,
    memory: TickMemory | None = None,
) -> dict[str, int]:
    """Append this poll's point per stream; drop history that no longer describes the server
    (another server_id: a failover behind the same address; a stream that went backwards).

    Core statements on the session's connection: they must not autoflush the tick's pending
    ORM changes one by one (that doubled the cost of a tick), and times stay integers. The
    deletes run at once (before this tick's point, which ``writes`` may send later); the newest
    point per stream comes from ``memory`` when the last tick stored it."""
    db = session.connection()
    memory = TickMemory() if memory is None else memory
    at_us = to_micros(snap.taken_at)
    streams = snapshot_streams(snap)
    if instance.server_id is not None and instance.server_id != snap.server_id:
        db.execute(delete(SourceProgress).where(SourceProgress.instance_id == instance.id))
        for known in [k for k in memory.newest_progress if k[0] == instance.id]:
            del memory.newest_progress[known]
        newest = {}
    else:
        newest = {s: row for s in streams if (row := _newest(db, memory, instance.id, s))}
    back = went_back({s: value for s, (_, value) in newest.items()}, streams)
    cutoff_us = at_us - round(retention_s * 1e6)
    for stream in streams:
        scope = {"instance_id": instance.id, "stream": stream}
        if stream in back:
            db.execute(_DELETE_STREAM, scope)
        elif stream in newest and newest[stream][0] // _PRUNE_US != at_us // _PRUNE_US:
            # Pruned when a minute begins, not every tick: one DELETE a minute per stream.
            db.execute(_PRUNE_STREAM, {**scope, "cutoff": cutoff_us})
    if streams:
        rows = [
            {"instance_id": instance.id, "stream": s, "ts": snap.taken_at, "value": v}
            for s, v in streams.items()
        ]
        if writes is None:
            db.execute(_INSERT, rows)
        else:
            writes.insert(_TABLE, rows)
        for stream, value in streams.items():
            memory.newest_progress[(instance.id, stream)] = (at_us, value)
    return streams


def channel_timeline(
    session: Session,
    sources: SourceProgressNow,
    status: ChannelStatus,
    now: float,
    max_gap_s: float = MAX_GAP_S,
    parsed: GtidTexts | None = None,
) -> TimelineLag:
    """The channel's lag against its own source, read in this tick (see :class:`SourceNow`).
    ``parsed``: the replica snapshot's parsed GTID texts (the source's come with its snapshot)."""
    source = sources.for_channel(status)
    if source is None:
        return TimelineLag(None, unknown_reason="source not read in this tick")
    source_id, source_snap, source_now = source.instance_id, source.snap, source.streams
    applied = replica_streams(
        _product(source_snap),
        source_snap.gtid.executed,
        status.executed_gtids,
        status.relay_source_log_file,
        status.exec_source_log_pos,
        source_parsed=source_snap.parsed,
        replica_parsed=parsed,
    )
    if not source_now or not applied:
        return TimelineLag(None, unknown_reason="no comparable progress on the source")
    newest = ProgressPoint(source_snap.taken_at.timestamp(), 0)
    db = session.connection()
    worst = TimelineLag(0.0, 0.0)
    resolution = 0.0
    for stream, value in source_now.items():
        target = applied.get(stream, 0)
        current = ProgressPoint(newest.at, value)
        history = [current] if target >= value else _around(db, source_id, stream, target)
        if not history or history[-1] != current:
            # This tick's point may not be in the store yet (it goes out with the batch).
            history.append(current)
        lag = stream_lag(history, target, now, max_gap_s)
        if lag.lag_s is None:
            return lag
        resolution = max(resolution, lag.resolution_s or 0.0)
        if worst.lag_s is not None and lag.lag_s > worst.lag_s:
            worst = lag
    return TimelineLag(worst.lag_s, resolution)


def _around(db: Connection, instance_id: int, stream: str, target: int) -> list[ProgressPoint]:
    key = {"instance_id": instance_id, "stream": stream, "target": target}
    before = db.execute(_BEFORE, key).first()
    if before is None:
        after = db.execute(_AFTER, key).first()
    else:
        after = db.execute(_AFTER_TS, {**key, "ts": before[0]}).first()
    return [ProgressPoint(r[0] / 1e6, int(r[1])) for r in (before, after) if r is not None]


def _newest(
    db: Connection, memory: TickMemory, instance_id: int, stream: str
) -> tuple[int, int] | None:
    if (known := memory.newest_progress.get((instance_id, stream))) is not None:
        return known
    row = db.execute(_NEWEST, {"instance_id": instance_id, "stream": stream}).first()
    return None if row is None else (int(row[0]), int(row[1]))


# Built once with bound parameters: a tick runs them for every stream and lagging channel, and
# building the statement cost more than running it.
_SCOPE = (
    SourceProgress.instance_id == bindparam("instance_id"),
    SourceProgress.stream == bindparam("stream"),
)
_NEWEST = (
    select(_TS, SourceProgress.value).where(*_SCOPE).order_by(SourceProgress.ts.desc()).limit(1)
)
_BEFORE = (
    select(_TS, SourceProgress.value)
    .where(*_SCOPE, SourceProgress.value < bindparam("target"))
    .order_by(SourceProgress.ts.desc())
    .limit(1)
)
_AFTER = (
    select(_TS, SourceProgress.value)
    .where(*_SCOPE, SourceProgress.value >= bindparam("target"))
    .order_by(SourceProgress.ts)
    .limit(1)
)
_AFTER_TS = _AFTER.where(bindparam("ts", type_=BigInteger()) < _TS)
_DELETE_STREAM = delete(SourceProgress).where(*_SCOPE)
_PRUNE_STREAM = _DELETE_STREAM.where(bindparam("cutoff", type_=BigInteger()) > _TS)
_TABLE = cast(Table, SourceProgress.__table__)
_INSERT = insert(_TABLE)
