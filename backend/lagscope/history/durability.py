"""A replica's applier cost as the store kept it, and what relaxing its flush settings would
do now (issue 22; analysis/durability.py).

The cost of a window: the instance's fsync rates and times (performance_schema's file summary,
read while the replica is behind) and its worker reads (busy threads, threads waiting for the
relay log). "Now" is the last ``WINDOW_S`` of a replica that is behind with strict settings:
what the explorer's side panel and the episode page offer before anyone changes anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import BigInteger, Float, case, cast, func, select, type_coerce
from sqlalchemy.orm import InstrumentedAttribute, Session

from lagscope.analysis.durability import (
    DURABILITY_PARAMS,
    FLUSH_LOG,
    SYNC_BINLOG,
    SYNC_RELAY_LOG,
    ApplierCost,
    DurabilityPrediction,
    predict_durability,
)
from lagscope.analysis.impact import Point, Window, window_stats
from lagscope.errors import NotFound
from lagscope.models import (
    ApplierWorkerSample,
    Channel,
    Cluster,
    Instance,
    InstanceSample,
    ParamValue,
    Sample,
)

# What "relaxed" means in the suggestion: the demo's phase B (a crash may lose up to a second
# of redo log; a GTID replica re-fetches what its relay log lost).
RELAXED: dict[str, str] = {FLUSH_LOG: "2", SYNC_BINLOG: "0", SYNC_RELAY_LOG: "0"}
WINDOW_S = 120.0


@dataclass(frozen=True, slots=True)
class DurabilityNow:
    instance_id: int
    instance: str
    channel_id: int
    prediction: DurabilityPrediction


def durability_now(
    session: Session, cluster_id: int, now: datetime, window_s: float = WINDOW_S
) -> list[DurabilityNow]:
    """Per replica channel behind in the last ``window_s`` with a strict flush setting: the
    capacity relaxing them all (``RELAXED``) is predicted to give."""
    if session.get(Cluster, cluster_id) is None:
        raise NotFound(f"cluster {cluster_id} not found")
    start = now - timedelta(seconds=window_s)
    found: list[DurabilityNow] = []
    channels = session.execute(
        select(Channel, Instance)
        .join(Instance, Channel.instance_id == Instance.id)
        .where(Instance.cluster_id == cluster_id, Channel.gone_at.is_(None))
        .order_by(Instance.name, Channel.name)
    ).all()
    settings: dict[int, dict[str, str | None]] = {}
    for instance_id, name, value in session.execute(
        select(ParamValue.instance_id, ParamValue.name, ParamValue.value).where(
            ParamValue.instance_id.in_({i.id for _, i in channels}),
            ParamValue.name.in_(DURABILITY_PARAMS),
        )
    ):
        settings.setdefault(instance_id, {})[name] = value
    for channel, instance in channels:
        now_set = settings.get(instance.id, {})
        changes = {name: (value, RELAXED[name]) for name, value in now_set.items()}
        capacity = _capacity(session, channel.id, start, now)
        if capacity is None:
            continue  # kept up: nothing to speed up, nothing to measure from
        cost = applier_cost(session, instance.id, channel.id, start, now, capacity)
        prediction = predict_durability(changes, cost, None)
        if prediction is not None:
            found.append(DurabilityNow(instance.id, instance.name, channel.id, prediction))
    return found


def _capacity(session: Session, channel_id: int, start: datetime, end: datetime) -> float | None:
    """The apply rate while a backlog existed (the journal's window capacity)."""
    rows = session.connection().execute(
        select(
            type_coerce(Sample.ts, BigInteger()),
            Sample.lag_s,
            Sample.verdict,
            Sample.apply_rate,
            Sample.source_rate,
            Sample.not_received,
            Sample.received_not_applied,
        ).where(Sample.channel_id == channel_id, Sample.ts >= start, Sample.ts < end)
    )
    points = [
        Point(
            us / 1e6,
            lag,
            verdict,
            apply,
            source,
            None if missing is None or queued is None else missing + queued,
            missing,
        )
        for us, lag, verdict, apply, source, missing, queued in rows
    ]
    return window_stats(points, Window(start.timestamp(), end.timestamp())).capacity


def applier_cost(
    session: Session,
    instance_id: int,
    channel_id: int,
    start: datetime,
    end: datetime,
    rate: float | None,
) -> ApplierCost:
    """The window's means. The fsync figures exist only for polls taken while behind; the
    fsync counts are averaged over those same polls so a count and its time match."""
    s = InstanceSample
    in_window = (s.instance_id == instance_id, s.ts >= start, s.ts < end)
    timed = session.execute(
        select(
            func.avg(cast(s.binlog_fsync_s_per_s, Float)),
            func.avg(cast(s.redo_fsync_s_per_s, Float)),
            func.avg(cast(s.fsync_latency_s, Float)),
            func.count(),
            func.avg(cast(s.relay_log_fsync_s_per_s, Float)),
        ).where(*in_window, s.binlog_fsync_s_per_s.is_not(None))
    ).one()
    counts = select(
        func.avg(cast(s.binlog_group_commits_per_s, Float)),
        func.avg(cast(func.coalesce(s.log_fsyncs_per_s, s.data_fsyncs_per_s), Float)),
    ).where(*in_window)
    if timed[3]:
        counts = counts.where(s.binlog_fsync_s_per_s.is_not(None))
    binlog_fsyncs, redo_fsyncs = session.execute(counts).one()
    w = ApplierWorkerSample
    busy, relay_waiting = session.execute(
        select(
            func.avg(cast(w.busy, Float)),
            func.avg(cast(w.relay_waiting, Float)),
        ).where(w.instance_id == instance_id, w.ts >= start, w.ts < end)
    ).one()
    receive_bound = session.scalar(
        select(
            func.avg(case((Sample.not_received > Sample.received_not_applied, 1.0), else_=0.0))
        ).where(
            Sample.channel_id == channel_id,
            Sample.ts >= start,
            Sample.ts < end,
            Sample.not_received + Sample.received_not_applied > 0,
        )
    )
    return ApplierCost(
        rate=rate,
        relay_log_fsync_s_per_s=_seconds(timed[4], InstanceSample.relay_log_fsync_s_per_s),
        receive_bound=_scaled(receive_bound),
        busy=_scaled(busy),
        relay_waiting=_scaled(relay_waiting),
        binlog_fsync_s_per_s=_seconds(timed[0], InstanceSample.binlog_fsync_s_per_s),
        redo_fsync_s_per_s=_seconds(timed[1], InstanceSample.redo_fsync_s_per_s),
        binlog_fsyncs_per_s=_seconds(binlog_fsyncs, InstanceSample.binlog_group_commits_per_s),
        redo_fsyncs_per_s=_seconds(redo_fsyncs, InstanceSample.data_fsyncs_per_s),
        fsync_latency_s=_seconds(timed[2], InstanceSample.fsync_latency_s),
    )


def _scaled(value: float | None) -> float | None:
    return None if value is None else float(value)


def _seconds(value: float | None, column: InstrumentedAttribute[float | None]) -> float | None:
    """An AVG of a Scaled column cast to a float is in the stored unit: divide by the scale."""
    if value is None:
        return None
    scale: int = column.type.scale
    return float(value) / scale
