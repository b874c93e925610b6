"""A replica's applier cost as the store kept it, and what relaxing its flush settings would
do now (analysis/durability.py).

The cost of a window: the channel's polls with a backlog, each with its instance's fsync rates
and times (performance_schema's file summary, read while the replica is behind) and its worker
reads (busy threads, threads waiting for the relay log) of the same poll. "Now" is what the
explorer's side panel and the episode page offer before anyone changes anything, for a replica
behind in the last ``RECENT_S`` with a strict setting; its window is the journal's before window
of a step made now (:func:`window_before`), so the panel read just before a step and the
journal's prediction for that step are one figure from one function (:func:`predict_window`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import BigInteger, func, select, type_coerce
from sqlalchemy.orm import Session

from lagscope.analysis.drain import has_backlog
from lagscope.analysis.durability import (
    DURABILITY_PARAMS,
    FLUSH_LOG,
    SETTLE_S,
    SYNC_BINLOG,
    SYNC_RELAY_LOG,
    WINDOW_S,
    CostPoll,
    DurabilityPrediction,
    predict_durability,
    window_cost,
)
from lagscope.analysis.impact import Point, windows
from lagscope.errors import NotFound
from lagscope.models import (
    Annotation,
    ApplierWorkerSample,
    Channel,
    Cluster,
    Instance,
    InstanceSample,
    ParamChange,
    ParamValue,
    Sample,
)
from lagscope.models.types import from_micros, to_micros

# What "relaxed" means in the suggestion: the demo's phase B (a crash may lose up to a second
# of redo log; a GTID replica re-fetches what its relay log lost).
RELAXED: dict[str, str] = {FLUSH_LOG: "2", SYNC_BINLOG: "0", SYNC_RELAY_LOG: "0"}
# The panel offers a figure for a replica behind this recently (the window itself is longer).
RECENT_S = 120.0


@dataclass(frozen=True, slots=True)
class DurabilityNow:
    instance_id: int
    instance: str
    channel_id: int
    prediction: DurabilityPrediction


def durability_now(
    session: Session,
    cluster_id: int,
    now: datetime,
    width_s: float = WINDOW_S,
    settle_s: float = SETTLE_S,
) -> list[DurabilityNow]:
    """Per replica channel behind in the last ``RECENT_S`` with a strict flush setting (as in
    force at ``now``): the capacity relaxing them all (``RELAXED``) is predicted to give, from
    the window a step made at ``now`` would be judged on."""
    if session.get(Cluster, cluster_id) is None:
        raise NotFound(f"cluster {cluster_id} not found")
    start, end = window_before(session, cluster_id, now, width_s, settle_s)
    found: list[DurabilityNow] = []
    if start >= end:
        return found  # the previous step is still settling: its transient is no baseline
    channels = session.execute(
        select(Channel, Instance)
        .join(Instance, Channel.instance_id == Instance.id)
        .where(Instance.cluster_id == cluster_id, Channel.gone_at.is_(None))
        .order_by(Instance.name, Channel.name)
    ).all()
    settings = settings_at(session, {i.id for _, i in channels}, now)
    recent = now - timedelta(seconds=RECENT_S)
    for channel, instance in channels:
        changes = {n: (v, RELAXED[n]) for n, v in settings.get(instance.id, {}).items()}
        if not changes or not _behind_since(session, channel.id, recent, now):
            continue  # kept up: nothing to speed up
        cost = window_cost(cost_polls(session, instance.id, channel.id, start, end))
        if cost.rate is None:
            continue  # too few polls behind in the window to measure what it applies
        prediction = predict_durability(changes, cost, None)
        if prediction is not None:
            found.append(DurabilityNow(instance.id, instance.name, channel.id, prediction))
    return found


def window_before(
    session: Session, cluster_id: int, end: datetime, width_s: float, settle_s: float
) -> tuple[datetime, datetime]:
    """The journal's before window of a step at ``end``: ``width_s`` long, starting no earlier
    than ``settle_s`` after the cluster's previous step (its newest param change or note)."""
    previous = _previous_step_at(session, cluster_id, end)
    before, _ = windows(
        0.0,
        None if previous is None else (to_micros(previous) - to_micros(end)) / 1e6,
        None,
        width_s,
        settle_s,
    )
    return end + timedelta(seconds=before.start), end


def _previous_step_at(session: Session, cluster_id: int, at: datetime) -> datetime | None:
    """When the newest step at or before ``at`` was (the journal's step time: its newest event,
    a change's first read of the new value or a note's start, to the millisecond)."""
    change = session.scalar(
        select(func.max(type_coerce(ParamChange.first_new_at, BigInteger())))
        .join(Instance, ParamChange.instance_id == Instance.id)
        .where(Instance.cluster_id == cluster_id, ParamChange.first_new_at <= at)
    )
    note = session.scalar(
        select(func.max(type_coerce(Annotation.starts_at, BigInteger()))).where(
            Annotation.cluster_id == cluster_id, Annotation.starts_at <= at
        )
    )
    newest = max((int(us) for us in (change, note) if us is not None), default=None)
    return None if newest is None else from_micros(newest - newest % 1000)


def settings_at(
    session: Session, instance_ids: set[int], at: datetime
) -> dict[int, dict[str, str | None]]:
    """The flush settings in force at ``at``: the value read now, unless a later change
    replaced it (then that change's old value)."""
    settings: dict[int, dict[str, str | None]] = defaultdict(dict)
    for instance_id, name, value in session.execute(
        select(ParamValue.instance_id, ParamValue.name, ParamValue.value).where(
            ParamValue.instance_id.in_(instance_ids), ParamValue.name.in_(DURABILITY_PARAMS)
        )
    ):
        settings[instance_id][name] = value
    later = session.execute(
        select(ParamChange.instance_id, ParamChange.name, ParamChange.old_value)
        .where(
            ParamChange.instance_id.in_(instance_ids),
            ParamChange.name.in_(DURABILITY_PARAMS),
            ParamChange.first_new_at > at,
        )
        .order_by(ParamChange.first_new_at.desc())
    )
    for instance_id, name, old in later:  # the earliest later change is applied last
        settings[instance_id][name] = old
    return dict(settings)


def _behind_since(session: Session, channel_id: int, start: datetime, end: datetime) -> bool:
    return any(has_backlog(p) for p in _points(session, channel_id, start, end).values())


def predict_window(
    session: Session,
    instance_id: int,
    channel_id: int,
    start: datetime,
    end: datetime,
    changes: Mapping[str, tuple[str | None, str | None]],
    measured: float | None,
) -> DurabilityPrediction | None:
    """What ``changes`` would do to the channel, priced over [start, end): the side panel's and
    the journal's one function."""
    return predict_durability(
        changes, window_cost(cost_polls(session, instance_id, channel_id, start, end)), measured
    )


def _points(session: Session, channel_id: int, start: datetime, end: datetime) -> dict[int, Point]:
    """The channel's polls in [start, end) by their time in µs."""
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
    return {
        us: Point(
            us / 1e6,
            lag,
            verdict,
            apply,
            source,
            None if missing is None or queued is None else missing + queued,
            missing,
        )
        for us, lag, verdict, apply, source, missing, queued in rows
    }


def cost_polls(
    session: Session, instance_id: int, channel_id: int, start: datetime, end: datetime
) -> list[CostPoll]:
    """The channel's polls in [start, end), each with its instance's readings of the same poll
    (a tick stores the channel, the instance and its workers at one time)."""
    points = _points(session, channel_id, start, end)
    s = InstanceSample
    fsyncs = {
        us: row
        for us, *row in session.connection().execute(
            select(
                type_coerce(s.ts, BigInteger()),
                s.binlog_fsync_s_per_s,
                s.redo_fsync_s_per_s,
                s.fsync_latency_s,
                s.relay_log_fsync_s_per_s,
                s.binlog_group_commits_per_s,
                s.log_fsyncs_per_s,
                s.data_fsyncs_per_s,
            ).where(s.instance_id == instance_id, s.ts >= start, s.ts < end)
        )
    }
    w = ApplierWorkerSample
    threads: dict[int, list[tuple[int | None, int | None]]] = defaultdict(list)
    for us, busy, waiting in session.connection().execute(
        select(type_coerce(w.ts, BigInteger()), w.busy, w.relay_waiting).where(
            w.instance_id == instance_id, w.ts >= start, w.ts < end
        )
    ):
        threads[us].append((busy, waiting))
    polls: list[CostPoll] = []
    for us, point in sorted(points.items()):
        binlog_s, redo_s, latency, relay_s, binlog_n, log_n, data_n = fsyncs.get(us) or [None] * 7
        read = threads.get(us, [])
        polls.append(
            CostPoll(
                point,
                busy=_mean([b for b, _ in read]),
                relay_waiting=_mean([r for _, r in read]),
                binlog_fsync_s_per_s=binlog_s,
                redo_fsync_s_per_s=redo_s,
                fsync_latency_s=latency,
                relay_log_fsync_s_per_s=relay_s,
                binlog_fsyncs_per_s=binlog_n,
                redo_fsyncs_per_s=log_n if log_n is not None else data_n,
            )
        )
    return polls


def _mean(values: list[int | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None
