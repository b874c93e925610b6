"""One channel's derived metrics for one poll (docs/lag.md), from the snapshot and stored state.

Pure: the caller passes what the store remembers (:class:`ChannelState`) and what the source
looked like in the same tick (:class:`SourceView`); the result is the sample to store and the
state to remember for the next poll, whichever worker runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from lagscope.analysis.codes import LagSource, Verdict, io_state_code
from lagscope.analysis.errant import Errant, errant_transactions
from lagscope.analysis.eta import Eta, EtaMemory, applier_transaction, eta_band
from lagscope.analysis.lag import (
    GtidEvidence,
    best_lag,
    disagreement,
    heartbeat_lag,
    heartbeat_resolution,
    sbm_contradicted,
)
from lagscope.analysis.progress import progress_of
from lagscope.analysis.rates import rate
from lagscope.analysis.timeline import TimelineLag
from lagscope.analysis.verdict import Observation, classify, verdict
from lagscope.collectors.gtid import GtidCounts, GtidKind, GtidTexts, count_gtids
from lagscope.collectors.snapshot import ChannelStatus, ClockReading, InstanceSnapshot

# Polls the verdict looks at (a window, never one sample); 3 shows a STOP in 2 polls.
VERDICT_WINDOW = 3


@dataclass(frozen=True, slots=True)
class ChannelState:
    """What the store remembers about a channel between polls."""

    applied_progress: int | None = None
    last_sample_at: float | None = None  # epoch seconds
    recent_classes: tuple[Verdict, ...] = ()
    verdict: Verdict | None = None
    # The last few intervals' rates and the applier transaction seen: the ETA's band.
    eta_memory: EtaMemory = field(default_factory=EtaMemory)


@dataclass(frozen=True, slots=True)
class SourceView:
    """The cluster's source as seen in the same tick (or last known, when it is unreachable)."""

    executed: str
    server_id: int | None
    source_rate: float | None
    clock_offset_s: float | None
    clock: ClockReading | None = None
    strict_mode: bool = True
    # The heartbeat writer's last beat when its row on the source has stopped advancing
    # (analysis/heartbeat.py): the heartbeat is then no lag at all. None while it writes.
    heartbeat_stopped_at: float | None = None
    # ``executed`` parsed once for all the channels of the tick: the source snapshot's own
    # parsed texts when it was read in this tick.
    parsed: GtidTexts = field(default_factory=GtidTexts, compare=False, repr=False)
    # MySQL: the source's own GTIDs are never the replica's errant ones (read a moment apart).
    server_uuid: str | None = None


@dataclass(frozen=True, slots=True)
class ChannelMetrics:
    """What is worked out for a channel's sample. Values the metric catalog marks
    ``from_status`` (``relay_log_space``) are stored straight from the channel status."""

    verdict: Verdict
    lag_s: float | None = None
    lag_source: LagSource | None = None
    seconds_behind_source: int | None = None
    heartbeat_lag_s: float | None = None
    heartbeat_resolution_s: float | None = None
    applier_lag_s: float | None = None
    timeline_lag_s: float | None = None
    timeline_resolution_s: float | None = None
    trx_behind: int | None = None
    not_received: int | None = None
    received_not_applied: int | None = None
    # GTIDs executed here that the source never wrote (analysis/errant.py): how many, and which.
    errant_trx: int | None = None
    errant_gtids: str | None = None
    apply_rate: float | None = None
    source_rate: float | None = None
    io_state: int | None = None
    sql_running: bool | None = None
    disagreement: bool = False
    eta: Eta | None = None
    state: ChannelState = ChannelState()


def channel_metrics(
    status: ChannelStatus,
    replica: InstanceSnapshot,
    source: SourceView | None,
    state: ChannelState,
    heartbeat_interval_s: float | None = None,
    timeline: TimelineLag | None = None,
) -> ChannelMetrics:
    """``timeline`` is the channel's source-timeline lag, computed by the caller from the
    source's stored progress history (see :mod:`lagscope.analysis.timeline`)."""
    read_at = replica.taken_at.timestamp()
    product = replica.flavor.product
    counts = _counts(product, status, replica, source)
    errant = _errant(product, status, replica, source)
    progress = _progress(product, replica, status.executed_gtids)
    apply_rate = rate(state.applied_progress, state.last_sample_at, progress, read_at)
    hb_lag, hb_resolution = _heartbeat(replica, source, heartbeat_interval_s)
    applier = _applier_lag(status.channel, replica, source)
    tl_lag = timeline.lag_s if timeline else None
    tl_resolution = timeline.resolution_s if timeline else None
    source_rate = source.source_rate if source else None
    hb_stale = source is not None and source.heartbeat_stopped_at is not None
    best = best_lag(
        hb_lag,
        applier,
        status.seconds_behind_source,
        timeline_lag_s=tl_lag,
        sbm_contradicted=sbm_contradicted(
            status.seconds_behind_source, counts.not_received if counts else None, source_rate
        ),
        heartbeat_stale=hb_stale,
        gtid=_evidence(counts),
    )
    observation = Observation(
        reachable=True,
        io_state=status.io_state,
        sql_running=status.sql_running,
        last_io_errno=status.last_io_errno,
        last_sql_errno=status.last_sql_errno,
        sql_delay=status.sql_delay,
        sql_remaining_delay=status.sql_remaining_delay,
        sql_thread_state=status.sql_thread_state,
        lag_s=best.lag_s,
        seconds_behind_source=status.seconds_behind_source,
        trx_behind=counts.trx_behind if counts else None,
        not_received=counts.not_received if counts else None,
        received_not_applied=counts.received_not_applied if counts else None,
        lag_source=best.source,
        source_rate=source_rate,
    )
    new_state, judged = _judge(state, classify(observation), read_at, progress)
    estimate, eta_memory = eta_band(
        observation.trx_behind,
        apply_rate,
        source_rate,
        state.eta_memory,
        read_at,
        applier_transaction(status, replica),
    )
    return ChannelMetrics(
        verdict=judged,
        lag_s=best.lag_s,
        lag_source=best.source,
        seconds_behind_source=status.seconds_behind_source,
        heartbeat_lag_s=hb_lag,
        heartbeat_resolution_s=hb_resolution,
        applier_lag_s=applier,
        timeline_lag_s=tl_lag,
        timeline_resolution_s=tl_resolution,
        trx_behind=observation.trx_behind,
        not_received=observation.not_received,
        received_not_applied=observation.received_not_applied,
        errant_trx=errant.count if errant else None,
        errant_gtids=errant.gtids if errant else None,
        apply_rate=apply_rate,
        source_rate=source_rate,
        io_state=io_state_code(status.io_state),
        sql_running=status.sql_running,
        disagreement=disagreement(
            status.seconds_behind_source,
            None if hb_stale else hb_lag,  # a stopped writer's row age is not a lag reading
            applier,
            resolution_s=hb_resolution or 0.0,
            timeline_lag_s=tl_lag,
            timeline_resolution_s=tl_resolution or 0.0,
        ),
        eta=estimate,
        state=replace(new_state, eta_memory=eta_memory),
    )


def unreachable_metrics(state: ChannelState, read_at: float) -> ChannelMetrics:
    """A channel on a server that did not answer: only the verdict is known."""
    new_state, judged = _judge(state, Verdict.UNREACHABLE, read_at, state.applied_progress)
    # Keep the last progress and its time: the next good poll computes a rate across the gap.
    new_state = ChannelState(
        state.applied_progress,
        state.last_sample_at,
        new_state.recent_classes,
        judged,
        state.eta_memory,
    )
    return ChannelMetrics(verdict=judged, state=new_state)


def _judge(
    state: ChannelState, latest: Verdict, read_at: float, progress: int | None
) -> tuple[ChannelState, Verdict]:
    window = (*state.recent_classes, latest)[-VERDICT_WINDOW:]
    judged = verdict(window, state.verdict)
    return ChannelState(progress, read_at, window, judged), judged


def _counts(
    product: str, status: ChannelStatus, replica: InstanceSnapshot, source: SourceView | None
) -> GtidCounts | None:
    if source is None or not (status.retrieved_gtids or status.executed_gtids):
        return None
    kind: GtidKind = "mariadb" if product == "mariadb" else "mysql"
    try:
        return count_gtids(
            source.parsed.parse(kind, source.executed),
            replica.parsed.parse(kind, status.retrieved_gtids),
            replica.parsed.parse(kind, status.executed_gtids),
            strict_mode=source.strict_mode,
        )
    except ValueError:
        return None  # a set we cannot parse: report no count rather than a wrong one


def _errant(
    product: str, status: ChannelStatus, replica: InstanceSnapshot, source: SourceView | None
) -> Errant | None:
    if source is None or (product != "mariadb" and not status.executed_gtids):
        return None
    return errant_transactions(
        "mariadb" if product == "mariadb" else "mysql",
        replica.parsed,
        source.executed,
        status.executed_gtids,
        source_uuid=source.server_uuid,
        source_server_id=source.server_id,
        slave_pos=replica.gtid.slave_pos,
        current_pos=replica.gtid.current_pos,
        source_texts=source.parsed,
    )


def _evidence(counts: GtidCounts | None) -> GtidEvidence | None:
    """GTID counts that may overrule a lag figure: exact ones only (never an estimate)."""
    if counts is None or not counts.exact:
        return None
    return GtidEvidence(counts.trx_behind, counts.not_received, counts.received_not_applied)


def _progress(product: str, replica: InstanceSnapshot, executed: str) -> int | None:
    try:
        return progress_of(
            replica.parsed.parse("mariadb" if product == "mariadb" else "mysql", executed)
        )
    except ValueError:
        return None


def _heartbeat(
    replica: InstanceSnapshot, source: SourceView | None, interval_s: float | None
) -> tuple[float | None, float | None]:
    if replica.heartbeat is None or source is None or source.clock_offset_s is None:
        return None, None
    row = replica.heartbeat.newest(source.server_id)
    if row is None:
        return None, None
    lag = heartbeat_lag(row.ts, replica.taken_at.timestamp(), source.clock_offset_s)
    resolution = heartbeat_resolution(interval_s or 0.0, source.clock, replica.round_trip_s)
    return lag, resolution


def _applier_lag(
    channel: str, replica: InstanceSnapshot, source: SourceView | None
) -> float | None:
    raw = replica.applier_lag_s.get(channel)
    if raw is None:
        return None
    if source is None or source.clock_offset_s is None or raw == 0.0:
        return raw
    # raw = replica clock now − source clock commit time: remove the clocks' difference.
    return max(0.0, raw - (replica.clock.offset_s - source.clock_offset_s))
