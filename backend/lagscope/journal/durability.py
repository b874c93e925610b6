"""A journal step that relaxed a replica's flush settings, with the capacity its fsync cost
predicted and the capacity measured after it (issue 22; analysis/durability.py).

The cost is read from what the store kept of the step's before window: the instance's fsync
rates and times (performance_schema's file summary, sent while the replica is behind) and its
worker reads (busy threads, threads waiting for the relay log).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from sqlalchemy import Float, cast, func, select
from sqlalchemy.orm import Session

from lagscope.analysis.durability import DURABILITY_PARAMS, ApplierCost, predict_durability
from lagscope.journal.steps import Entry
from lagscope.models import ApplierWorkerSample, InstanceSample


def with_durability(session: Session, entries: list[Entry]) -> list[Entry]:
    """The entries, each impact of a replica whose flush settings the step relaxed given its
    prediction."""
    out: list[Entry] = []
    for entry in entries:
        changed: dict[int, dict[str, tuple[str | None, str | None]]] = {}
        for change, _ in entry.step.changes:
            if change.name in DURABILITY_PARAMS:
                changed.setdefault(change.instance_id, {})[change.name] = (
                    change.old_value,
                    change.new_value,
                )
        if not changed:
            out.append(entry)
            continue
        impacts = []
        costs: dict[int, ApplierCost] = {}
        for found in entry.impacts:
            changes = changed.get(found.instance.id)
            if changes is None:
                impacts.append(found)
                continue
            if found.instance.id not in costs:
                costs[found.instance.id] = applier_cost(
                    session, found.instance.id, *entry.before, found.impact.before.capacity
                )
            prediction = predict_durability(
                changes, costs[found.instance.id], found.impact.after.capacity
            )
            impacts.append(replace(found, durability=prediction))
        out.append(replace(entry, impacts=impacts))
    return out


def applier_cost(
    session: Session, instance_id: int, start: datetime, end: datetime, rate: float | None
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
    return ApplierCost(
        rate=rate,
        busy=_scaled(busy),
        relay_waiting=_scaled(relay_waiting),
        binlog_fsync_s_per_s=_seconds(timed[0], InstanceSample.binlog_fsync_s_per_s),
        redo_fsync_s_per_s=_seconds(timed[1], InstanceSample.redo_fsync_s_per_s),
        binlog_fsyncs_per_s=_seconds(binlog_fsyncs, InstanceSample.binlog_group_commits_per_s),
        redo_fsyncs_per_s=_seconds(redo_fsyncs, InstanceSample.data_fsyncs_per_s),
        fsync_latency_s=_seconds(timed[2], InstanceSample.fsync_latency_s),
    )


def _scaled(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _seconds(value: object, column: object) -> float | None:
    """An AVG of a Scaled column cast to a float is in the stored unit: divide by the scale."""
    if value is None:
        return None
    scale = column.type.scale  # type: ignore[attr-defined]
    return float(value) / scale  # type: ignore[arg-type]
