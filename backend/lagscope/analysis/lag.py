"""Replication lag: heartbeat lag with its resolution, the best available lag, disagreement.

``lag`` (docs/lag.md, "The figures") is the first available of heartbeat lag, applier lag, the
source-timeline lag (analysis/timeline.py) and the server's own Seconds_Behind_Source, with
``lag_source`` saying which; ``disagreement`` flags sources that differ beyond their resolutions
(SBM reading 0 while the replica is far behind).
All times are epoch seconds; clock offsets are *server clock − poller clock*.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from lagscope.analysis.codes import LagSource
from lagscope.collectors.snapshot import ClockReading

# Seconds_Behind_Source is whole seconds, truncated by the server: comparing it with a precise
# figure must allow up to one second of difference on top of the other source's resolution.
_SBM_GRANULARITY_S = 1.0


def heartbeat_lag(
    heartbeat_ts: float, replica_read_at: float, source_clock_offset_s: float
) -> float:
    """Age of the newest heartbeat visible on the replica, on the source's clock.

    ``heartbeat_ts`` is on the source clock (the source wrote it); ``replica_read_at`` is on the
    poller clock, so it is moved onto the source clock by adding the source's offset. Clamped at
    0 because clock-offset error can make a fresh heartbeat look slightly from the future.
    """
    return max(0.0, replica_read_at + source_clock_offset_s - heartbeat_ts)


def heartbeat_resolution(
    interval_s: float, source_clock: ClockReading | None, replica_round_trip_s: float
) -> float:
    """How far :func:`heartbeat_lag` can be from the truth, in seconds (the sum of three terms).

    - ``interval_s``: a row is written only every interval, so an up-to-date replica can still
      see a row up to one interval old.
    - the source clock offset's own uncertainty (half the round trip of the read that measured
      it), which enters the lag one-for-one. With no reading this poll the term is 0: the
      caller then has no offset to apply and trusts the clocks (NTP); we cannot bound that.
    - half the replica round trip: the heartbeat was read at some instant between sending the
      query and receiving the answer, and ``replica_read_at`` stands for that instant.
    """
    offset_uncertainty_s = 0.0 if source_clock is None else source_clock.resolution_s
    return interval_s + offset_uncertainty_s + replica_round_trip_s / 2


@dataclass(frozen=True, slots=True)
class BestLag:
    """The lag to show and which source it came from; both None when no source was available."""

    lag_s: float | None
    source: LagSource | None


@dataclass(frozen=True, slots=True)
class GtidEvidence:
    """What the GTID sets say about a channel this poll (None: no count was possible)."""

    trx_behind: int | None = None
    not_received: int | None = None
    received_not_applied: int | None = None

    @property
    def nothing_missing(self) -> bool:
        """The replica has executed all the source had, and holds nothing it has not applied."""
        return self.trx_behind == 0 and self.not_received == 0 and self.received_not_applied == 0


# With nothing missing, the replica had applied all the source had committed when the source was
# read, a moment before or after the replica: it is caught up, and a figure saying it is behind
# (at or above the verdict's caught-up bound, verdict.classify's 1 s) is contradicted. A smaller
# figure says "caught up" too and stands, with its source: a heartbeat whose writer was late by
# 0.8 s on a busy box still reads as the heartbeat. Seen without this: a
# writer that had just stopped aged its row to 1.4 s and 2.0 s on caught-up replicas, which
# turned apply_bound before the row was old enough to call the writer stopped.
_NOTHING_MISSING_MAX_S = 1.0


def best_lag(
    heartbeat_lag_s: float | None,
    applier_lag_s: float | None,
    seconds_behind_source: int | None,
    *,
    timeline_lag_s: float | None = None,
    sbm_contradicted: bool = False,
    heartbeat_stale: bool = False,
    gtid: GtidEvidence | None = None,
) -> BestLag:
    """First available of heartbeat, applier, source timeline and SBM, in that order.

    The timeline comes before SBM: it is measured against the source's own progress, whereas
    SBM reads 0 whenever the SQL thread has caught up with a relay log that lags the source.
    When SBM is all there is and the GTID sets contradict it (:func:`sbm_contradicted`), the
    lag is unknown (None), not 0: a chart must show a gap there, never a replica caught up.

    Two more skips: a stale heartbeat (its writer stopped, see
    :mod:`lagscope.analysis.heartbeat`) is not a lag at all; and when the GTID sets say nothing
    is missing, a figure of :data:`_NOTHING_MISSING_MAX_S` or more is contradicted and the next
    source is used (none left: unknown). GTID evidence only ever removes a figure that claims
    lag: it never makes a replica with a backlog look caught up."""
    nothing_missing = gtid is not None and gtid.nothing_missing
    sbm = None if seconds_behind_source is None or sbm_contradicted else seconds_behind_source
    candidates = (
        (None if heartbeat_stale else heartbeat_lag_s, LagSource.HEARTBEAT),
        (applier_lag_s, LagSource.APPLIER),
        (timeline_lag_s, LagSource.TIMELINE),
        (None if sbm is None else float(sbm), LagSource.SBM),
    )
    for lag_s, source in candidates:
        if lag_s is None or (nothing_missing and lag_s >= _NOTHING_MISSING_MAX_S):
            continue
        return BestLag(lag_s, source)
    return BestLag(None, None)


# Seconds of the source's work a replica may miss while SBM reads 0 and still be caught up:
# transactions in flight at the moment of the two reads (the verdict's caught-up bound, 1 s,
# plus the reads' distance on a busy box).
_SBM_ZERO_BACKLOG_S = 2.0
_SBM_ZERO_MAX_TRX = 10


def sbm_contradicted(
    seconds_behind_source: int | None, not_received: int | None, source_rate: float | None
) -> bool:
    """SBM reads 0 while the replica has not even received more than ~2 s of the source's work.

    That is the receive-bound case (docs/replication.md, "Seconds behind"): the SQL thread has
    applied all the relay log holds, so the server computes 0, while the IO thread (the network, or
    its own relay-log fsyncs) is the bottleneck. Seen in the demo's phase A as lines dropping from
    20 s to 0 on the polls where neither the heartbeat nor the timeline was available. Without GTID
    counts there is no evidence against SBM, so it stands.
    """
    if seconds_behind_source != 0 or not_received is None or not_received <= _SBM_ZERO_MAX_TRX:
        return False
    if source_rate is None or source_rate <= 0:
        return True  # an idle source, and the replica still lacks its transactions
    return not_received > source_rate * _SBM_ZERO_BACKLOG_S


def disagreement(
    seconds_behind_source: int | None,
    heartbeat_lag_s: float | None,
    applier_lag_s: float | None,
    resolution_s: float = 0.0,
    threshold_s: float = 5.0,
    *,
    timeline_lag_s: float | None = None,
    timeline_resolution_s: float = 0.0,
) -> bool:
    """True when two available lag sources differ by more than their combined tolerance.

    Every available pair is compared. The tolerance is ``max(threshold_s, resolution_s)``, plus
    the one-second SBM granularity on pairs involving SBM and the timeline's own resolution (the
    width of the source polls around it) on pairs involving the timeline. A NULL SBM is not a
    reading (the server does not know) and never counts as disagreeing; neither does any missing
    source.
    """
    readings: list[tuple[float, float]] = []  # (value, extra tolerance for that source)
    if seconds_behind_source is not None:
        readings.append((float(seconds_behind_source), _SBM_GRANULARITY_S))
    if heartbeat_lag_s is not None:
        readings.append((heartbeat_lag_s, 0.0))
    if applier_lag_s is not None:
        readings.append((applier_lag_s, 0.0))
    if timeline_lag_s is not None:
        readings.append((timeline_lag_s, timeline_resolution_s))
    for (left, left_extra), (right, right_extra) in combinations(readings, 2):
        tolerance = max(threshold_s, resolution_s + left_extra + right_extra)
        if abs(left - right) > tolerance:
            return True
    return False
