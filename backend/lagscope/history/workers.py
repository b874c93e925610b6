"""Applier workers read back as a heatmap (API); ingest/workers.py records them.

Per replica instance and channel, the busy and active share of each worker per time
bucket over raw retention (workers are not rolled up), the number of workers configured (the
tracked ``parallel_workers`` parameter) and the newest reading with its problem, if any.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, select, type_coerce
from sqlalchemy.orm import Session

from lagscope.analysis.buckets import plan_buckets
from lagscope.analysis.workers import HeatBucket, StoredRead, heatmap
from lagscope.collectors.params import TRACKED_PARAMS
from lagscope.history.window import require_window
from lagscope.inventory.instances import get_cluster
from lagscope.models import ApplierWorkerSample, ApplierWorkerState, ParamValue
from lagscope.models.types import to_micros

MAX_BUCKETS = 1000
_PARALLEL = next(p for p in TRACKED_PARAMS if p.concept == "parallel_workers")
PARALLEL_WORKER_PARAMS = tuple(dict.fromkeys((*_PARALLEL.mysql, *_PARALLEL.mariadb)))


@dataclass(frozen=True, slots=True)
class ChannelHeatmap:
    channel: str
    buckets: list[HeatBucket]


@dataclass(frozen=True, slots=True)
class InstanceWorkers:
    instance_id: int
    instance_name: str
    flavor: str | None
    configured_workers: int | None
    configured_param: str | None
    read_at: datetime | None
    problem: str | None
    workers: list[dict[str, Any]]
    channels: list[ChannelHeatmap]


@dataclass(frozen=True, slots=True)
class WorkersHeatmap:
    start: datetime
    end: datetime
    bucket_ms: int
    instances: list[InstanceWorkers]


def workers_heatmap(
    session: Session,
    cluster_id: int,
    start: datetime,
    end: datetime,
    buckets: int = 120,
    instance_id: int | None = None,
) -> WorkersHeatmap:
    """The cluster's replicas (or one): workers × busy share per bucket over [start, end)."""
    require_window(start, end)
    cluster = get_cluster(session, cluster_id)
    plan = plan_buckets(to_micros(start), to_micros(end), min(buckets, MAX_BUCKETS), "raw")
    width_ms = max(plan.width_us // 1000, 1000)
    origin_ms = plan.origin_us // 1000
    replicas = [
        i
        for i in cluster.instances
        if i.role != "source" and (instance_id is None or i.id == instance_id)
    ]
    states = _states(session, [i.id for i in replicas])
    configured = _configured(session, [i.id for i in replicas])
    out = []
    for instance in sorted(replicas, key=lambda i: i.name):
        reads = _reads(session, instance.id, start, end)
        state = states.get(instance.id)
        param, value = configured.get(instance.id, (None, None))
        out.append(
            InstanceWorkers(
                instance_id=instance.id,
                instance_name=instance.name,
                flavor=instance.flavor,
                configured_workers=value,
                configured_param=param,
                read_at=state.read_at if state else None,
                problem=state.problem if state else None,
                workers=list(state.workers) if state else [],
                channels=[
                    ChannelHeatmap(name, heatmap(rs, origin_ms, width_ms))
                    for name, rs in sorted(reads.items())
                ],
            )
        )
    return WorkersHeatmap(start, end, width_ms, out)


def _states(session: Session, ids: list[int]) -> dict[int, ApplierWorkerState]:
    rows = session.scalars(
        select(ApplierWorkerState).where(ApplierWorkerState.instance_id.in_(ids))
    )
    return {s.instance_id: s for s in rows}


def _configured(session: Session, ids: list[int]) -> dict[int, tuple[str, int | None]]:
    """Per instance: the parallel-workers parameter it has and its value (0 = serial apply)."""
    rows = session.execute(
        select(ParamValue.instance_id, ParamValue.name, ParamValue.value).where(
            ParamValue.instance_id.in_(ids), ParamValue.name.in_(PARALLEL_WORKER_PARAMS)
        )
    )
    found: dict[int, tuple[str, int | None]] = {}
    for iid, name, value in rows:
        previous = found.get(iid)
        # Both old and new MySQL names may exist (8.0.26+): prefer the first listed.
        if previous is None or PARALLEL_WORKER_PARAMS.index(name) < PARALLEL_WORKER_PARAMS.index(
            previous[0]
        ):
            found[iid] = (name, int(value) if value and value.isdigit() else None)
    return found


def _reads(
    session: Session, instance_id: int, start: datetime, end: datetime
) -> dict[str, list[StoredRead]]:
    ts = type_coerce(ApplierWorkerSample.ts, BigInteger)  # µs as stored: no datetime per row
    rows = (
        session.connection()
        .execute(
            select(
                ApplierWorkerSample.channel,
                ts,
                ApplierWorkerSample.workers,
                ApplierWorkerSample.busy_mask,
                ApplierWorkerSample.active_mask,
            )
            .where(
                ApplierWorkerSample.instance_id == instance_id,
                ApplierWorkerSample.ts >= start,
                ApplierWorkerSample.ts < end,
            )
            .order_by(ApplierWorkerSample.ts)
        )
        .all()
    )
    reads: dict[str, list[StoredRead]] = {}
    for channel, micros, workers, busy_mask, active_mask in rows:
        reads.setdefault(channel, []).append(
            StoredRead(micros // 1000, workers, busy_mask, active_mask)
        )
    return reads
