"""Source-timeline lag: how long ago the source was where a replica is now (docs/lag.md).

No heartbeat needed. Every poll Lagscope records the source's progress per *stream* (MySQL: one
stream, the number of transactions in ``@@gtid_executed``; MariaDB: one stream per GTID domain,
its ``seq_no``; no GTIDs: one stream, the binlog coordinate ``file_seq << 40 | position``). Each
stream's history is a series of ``(poll time, value)`` points that never goes backwards (a source
whose progress goes backwards — a failover, a reset — starts a new history: :func:`went_back`).

A replica channel's lag is its poll time minus the moment the source first reached the replica's
applied value, interpolated between the two source polls that bracket it (the true moment lies
between them, so the bracket's width is the resolution); 0 when the replica has everything the
source had at its newest poll. Several streams (MariaDB domains): the largest lag. A replica
older than everything kept, or inside a hole in the history wider than ``max_gap_s``, has an
*unknown* lag: never 0. All times are epoch seconds on the poller's clock (source and replica
polls are timed by the same clock, so no skew enters).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from lagscope.collectors.gtid import GtidTexts

# Binlog coordinates as one integer: positions stay below 2^40 (binlog files are ≤ 1 GiB plus
# one transaction), file numbers below 2^23 (MySQL's suffix has 6 digits): fits a signed BIGINT.
_POSITION_BITS = 40
_BINLOG_STREAM = "binlog"
_MYSQL_STREAM = "gtid"
_FILE_SUFFIX = re.compile(r"\.(\d+)$")


@dataclass(frozen=True, slots=True)
class ProgressPoint:
    """The source's value in one stream at one poll."""

    at: float
    value: int


@dataclass(frozen=True, slots=True)
class TimelineLag:
    """A lag with its resolution, or unknown (``lag_s`` None) with the reason."""

    lag_s: float | None
    resolution_s: float | None = None
    unknown_reason: str | None = None


def binlog_coordinate(file: str | None, position: int | None) -> int | None:
    """``file_seq << 40 | position``; None for unusable coordinates (GTID_ONLY: 0 / INVALID)."""
    if not file or not position:
        return None
    match = _FILE_SUFFIX.search(file)
    if match is None or position >= 1 << _POSITION_BITS:
        return None
    return int(match.group(1)) << _POSITION_BITS | position


def source_streams(
    product: Literal["mysql", "mariadb"],
    executed: str,
    binlog_file: str | None = None,
    binlog_position: int | None = None,
    parsed: GtidTexts | None = None,
) -> dict[str, int]:
    """The source's progress per stream; the binlog coordinate only when there are no GTIDs.
    ``parsed``: where the source's texts are parsed once (the snapshot's)."""
    texts = parsed or GtidTexts()
    try:
        if product == "mariadb" and executed:
            return {str(g.domain_id): g.seq_no for g in texts.gtid_pos(executed).gtids}
        if product == "mysql" and executed:
            return {_MYSQL_STREAM: texts.gtid_set(executed).count()}
    except ValueError:
        return {}  # a set we cannot parse: no history rather than a wrong one
    coordinate = binlog_coordinate(binlog_file, binlog_position)
    return {} if coordinate is None else {_BINLOG_STREAM: coordinate}


def replica_streams(
    product: Literal["mysql", "mariadb"],
    source_executed: str,
    replica_executed: str,
    exec_file: str | None = None,
    exec_position: int | None = None,
    source_parsed: GtidTexts | None = None,
    replica_parsed: GtidTexts | None = None,
) -> dict[str, int]:
    """What the replica has applied, in the source's streams.

    MySQL: the source's count minus the source's transactions the replica lacks, so errant
    (replica-only) transactions never count as progress. MariaDB: the replica's ``seq_no`` in
    each of the source's domains (other domains belong to other sources: multi-source). No GTIDs:
    the source coordinate the applier has executed up to. ``source_parsed`` /
    ``replica_parsed``: where each server's texts are parsed once (their snapshots').
    """
    ours, theirs = source_parsed or GtidTexts(), replica_parsed or GtidTexts()
    try:
        if product == "mysql" and source_executed:
            source = ours.gtid_set(source_executed)
            replica_set = theirs.gtid_set(replica_executed)
            return {_MYSQL_STREAM: source.count() - (source - replica_set).count()}
        if product == "mariadb" and source_executed:
            replica = theirs.gtid_pos(replica_executed)
            return {str(d): replica.seq(d) for d in ours.gtid_pos(source_executed).domains()}
    except ValueError:
        return {}
    coordinate = binlog_coordinate(exec_file, exec_position)
    return {} if coordinate is None else {_BINLOG_STREAM: coordinate}


def went_back(previous: Mapping[str, int], current: Mapping[str, int]) -> set[str]:
    """Streams whose value fell since the last poll: a new server behind the same address
    (failover), a reset binlog. Their old history no longer describes this source."""
    return {s for s, value in current.items() if s in previous and value < previous[s]}


def bracket(
    history: Sequence[ProgressPoint], applied: int
) -> tuple[ProgressPoint | None, ProgressPoint | None]:
    """The newest point below ``applied`` and the oldest at or above it (``history`` in time
    order, never decreasing). This is all :func:`stream_lag` needs, so a store can fetch just it."""
    before: ProgressPoint | None = None
    for point in history:
        if point.value >= applied:
            return before, point
        before = point
    return before, None


def stream_lag(
    history: Sequence[ProgressPoint], applied: int, now: float, max_gap_s: float
) -> TimelineLag:
    """One stream's lag at ``now`` for a replica that has applied up to ``applied``.

    ``history`` needs at least the newest point and the bracket around ``applied`` (see
    :func:`bracket`), in time order.
    """
    if not history:
        return TimelineLag(None, unknown_reason="no source history")
    newest = history[-1]
    if applied >= newest.value:
        # Everything the source had at its newest poll (or more: the replica was read a moment
        # after the source). An idle source with an up-to-date replica is 0, not "time idle".
        return TimelineLag(0.0, 0.0)
    before, reached = bracket(history, applied)
    if reached is None:  # unreachable: newest.value > applied
        return TimelineLag(None, unknown_reason="no source history")
    if before is None:
        return TimelineLag(None, unknown_reason="replica is older than the source history kept")
    width = reached.at - before.at
    if width > max_gap_s:
        return TimelineLag(None, unknown_reason=f"source history has a {width:.0f} s gap there")
    share = (applied - before.value) / (reached.value - before.value)
    reached_at = before.at + share * width
    return TimelineLag(max(0.0, now - reached_at), width)


def timeline_lag(
    histories: Mapping[str, Sequence[ProgressPoint]],
    applied: Mapping[str, int],
    now: float,
    max_gap_s: float,
) -> TimelineLag:
    """The channel's lag over all of its source's streams: the largest; unknown if any is.

    Streams the source has and the replica lacks count from 0 (nothing applied there yet).
    """
    if not histories:
        return TimelineLag(None, unknown_reason="no source history")
    worst = TimelineLag(0.0, 0.0)
    resolution = 0.0
    for stream, history in histories.items():
        lag = stream_lag(history, applied.get(stream, 0), now, max_gap_s)
        if lag.lag_s is None:
            return lag
        resolution = max(resolution, lag.resolution_s or 0.0)
        if worst.lag_s is None or lag.lag_s > worst.lag_s:
            worst = lag
    return TimelineLag(worst.lag_s, resolution)
