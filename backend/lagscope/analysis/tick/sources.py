"""The tick's sources: each one's progress per stream, what of its stored history goes, and a
channel's timeline lag against its own source (analysis/timeline.py holds the arithmetic).

Every reachable instance that some channel replicates from is a source here: the cluster's
source, and intermediate sources in a chain or multi-source setup.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from lagscope.analysis.tick.before import ClusterBefore, InstanceBefore, Poll, SourceHistory
from lagscope.analysis.tick.decisions import ProgressJudged
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

# One hour of source history: a replica further behind than that has an unknown timeline lag
# (the other lag sources still apply). 3,600 small rows per stream and source at 1 Hz.
RETENTION_S = 3600.0
# Two source polls further apart than this (Lagscope or the source down) do not bracket a lag:
# interpolating across the hole could be off by the whole hole, so the lag there is unknown.
MAX_GAP_S = 30.0
# History past retention is dropped when a minute begins, not every tick.
_PRUNE_US = 60_000_000


@dataclass(frozen=True, slots=True)
class SourceNow:
    """A source as read in this tick: its instance id, its snapshot and progress per stream."""

    instance_id: int
    snap: InstanceSnapshot
    streams: Mapping[str, int]


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


def judge_sources(
    before: ClusterBefore,
    polls: Mapping[int, Poll],
    history: SourceHistory,
    retention_s: float = RETENTION_S,
) -> tuple[SourceProgressNow, list[ProgressJudged]]:
    named = {
        status.source_server_id
        for poll in polls.values()
        if poll.snapshot is not None
        for status in poll.snapshot.channels
        if status.source_server_id is not None
    }
    now = SourceProgressNow()
    judged = []
    for instance in before.instances:
        poll = polls.get(instance.id)
        snap = poll.snapshot if poll else None
        if snap is None or (instance.role != "source" and snap.server_id not in named):
            continue
        progress = judge_progress(instance, snap, history, retention_s)
        judged.append(progress)
        entry = SourceNow(instance.id, snap, progress.streams)
        now.by_server_id[snap.server_id] = entry
        if instance.role == "source":
            now.default = entry
    return now, judged


def judge_progress(
    instance: InstanceBefore,
    snap: InstanceSnapshot,
    history: SourceHistory,
    retention_s: float = RETENTION_S,
) -> ProgressJudged:
    """This poll's point per stream, and the history that no longer describes the server
    (another server_id: a failover behind the same address; a stream that went backwards)."""
    at_us = _micros(snap.taken_at)
    streams = snapshot_streams(snap)
    if instance.server_id is not None and instance.server_id != snap.server_id:
        return ProgressJudged(instance.id, streams, at_us, forget_all=True)
    newest = {s: row for s in streams if (row := history.newest(instance.id, s))}
    back = went_back({s: value for s, (_, value) in newest.items()}, streams)
    prune = {
        s
        for s in streams
        if s not in back and s in newest and newest[s][0] // _PRUNE_US != at_us // _PRUNE_US
    }
    cutoff_us = at_us - round(retention_s * 1e6)
    return ProgressJudged(
        instance.id, streams, at_us, False, frozenset(back), frozenset(prune), cutoff_us
    )


def _micros(moment: datetime) -> int:
    """Epoch µs, exact (as the store's columns hold them): no float on the way."""
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


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


def channel_timeline(
    sources: SourceProgressNow,
    history: SourceHistory,
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
    source_snap, source_now = source.snap, source.streams
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
    newest_at = source_snap.taken_at.timestamp()
    worst = TimelineLag(0.0, 0.0)
    resolution = 0.0
    for stream, value in source_now.items():
        target = applied.get(stream, 0)
        current = ProgressPoint(newest_at, value)
        points = (
            [current] if target >= value else history.around(source.instance_id, stream, target)
        )
        if not points or points[-1] != current:
            # This tick's point may not be in the store yet (it goes out with the batch).
            points.append(current)
        lag = stream_lag(points, target, now, max_gap_s)
        if lag.lag_s is None:
            return lag
        resolution = max(resolution, lag.resolution_s or 0.0)
        if worst.lag_s is not None and lag.lag_s > worst.lag_s:
            worst = lag
    return TimelineLag(worst.lag_s, resolution)
