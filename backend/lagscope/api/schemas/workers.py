"""Applier workers (heatmap) and group commit: response shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from lagscope.analysis.workers import HeatBucket
from lagscope.api.schemas.common import Schema
from lagscope.api.schemas.journal import DurabilityPredictionOut
from lagscope.history.durability import DurabilityNow
from lagscope.history.group_commit import GroupCommit, Lane
from lagscope.history.parallelism import Parallelism
from lagscope.history.series import Series
from lagscope.history.workers import InstanceWorkers, WorkersHeatmap


class WorkerOut(Schema):
    """One worker at the newest reading."""

    channel: str
    worker_id: int
    thread_id: int | None
    state: str = Field(description="SERVICE_STATE (MySQL) or the thread's state (MariaDB)")
    busy: bool | None = Field(description="holding a transaction; null: the server cannot tell")
    idle_s: float | None
    last_applied_trx: str
    applying_trx: str
    last_error_number: int
    last_error_message: str


class HeatBucketOut(Schema):
    t: int = Field(description="bucket start, epoch milliseconds")
    reads: int = Field(description="worker readings in the bucket")
    workers: int = Field(description="the most workers seen in the bucket")
    busy_share: list[float | None] = Field(
        description="per worker (lowest worker id first): share of reads it held a transaction"
    )
    active_share: list[float | None] = Field(
        description="per worker: share of reads it was busy or had worked since the previous read"
    )
    busy_avg: float | None = Field(description="mean busy workers per read")
    active_avg: float


class ChannelHeatmapOut(Schema):
    channel: str
    buckets: list[HeatBucketOut]


class InstanceWorkersOut(Schema):
    instance_id: int
    instance_name: str
    flavor: str | None
    configured_workers: int | None = Field(
        description="the parallel-workers parameter's value (0: serial apply by the SQL thread)"
    )
    configured_param: str | None
    read_at: datetime | None = Field(description="the newest worker reading")
    problem: str | None = Field(
        description="why the workers cannot be read (e.g. the GRANT the monitoring user lacks)"
    )
    workers: list[WorkerOut]
    channels: list[ChannelHeatmapOut]


class WorkersHeatmapOut(Schema):
    start: datetime
    end: datetime
    bucket_ms: int
    instances: list[InstanceWorkersOut]


def _bucket_out(b: HeatBucket) -> HeatBucketOut:
    return HeatBucketOut(
        t=b.t,
        reads=b.reads,
        workers=b.workers,
        busy_share=b.busy_share,
        active_share=b.active_share,
        busy_avg=b.busy_avg,
        active_avg=b.active_avg,
    )


def _worker_out(w: dict[str, Any]) -> WorkerOut:
    return WorkerOut(**{k: w.get(k) for k in WorkerOut.model_fields})


def _instance_out(i: InstanceWorkers) -> InstanceWorkersOut:
    return InstanceWorkersOut(
        instance_id=i.instance_id,
        instance_name=i.instance_name,
        flavor=i.flavor,
        configured_workers=i.configured_workers,
        configured_param=i.configured_param,
        read_at=i.read_at,
        problem=i.problem,
        workers=[_worker_out(w) for w in i.workers],
        channels=[
            ChannelHeatmapOut(channel=c.channel, buckets=[_bucket_out(b) for b in c.buckets])
            for c in i.channels
        ],
    )


def workers_heatmap_out(result: WorkersHeatmap) -> WorkersHeatmapOut:
    return WorkersHeatmapOut(
        start=result.start,
        end=result.end,
        bucket_ms=result.bucket_ms,
        instances=[_instance_out(i) for i in result.instances],
    )


class RatePointOut(Schema):
    t: int = Field(description="bucket start, epoch milliseconds")
    min: float | None
    avg: float | None
    max: float | None
    last: float | None
    n: int


class RateSeriesOut(Schema):
    metric: str
    resolution: str
    bucket_ms: int
    points: list[RatePointOut]
    note: str | None


class SegmentOut(Schema):
    start: datetime
    end: datetime
    value: str | None


class LaneChangeOut(Schema):
    at: datetime = Field(description="first poll that saw the new value")
    changed_after: datetime = Field(description="last poll that saw the old value")
    old_value: str | None
    new_value: str | None


class LaneOut(Schema):
    name: str
    segments: list[SegmentOut]
    changes: list[LaneChangeOut]


class GroupCommitOut(Schema):
    instance_id: int
    instance_name: str
    flavor: str | None
    start: datetime
    end: datetime
    series: dict[str, RateSeriesOut] = Field(
        description="binlog_commits_per_s, binlog_group_commits_per_s, commits_per_group, "
        "commits_per_s, log_fsyncs_per_s, data_fsyncs_per_s, semi_sync_avg_wait_s"
    )
    lanes: list[LaneOut]
    notes: list[str]


def _series_out(s: Series) -> RateSeriesOut:
    return RateSeriesOut(
        metric=s.metric,
        resolution=s.resolution,
        bucket_ms=s.bucket_ms,
        points=[RatePointOut(**p) for p in s.points],
        note=s.note,
    )


def _lane_out(lane: Lane) -> LaneOut:
    return LaneOut(
        name=lane.name,
        segments=[SegmentOut(start=a, end=b, value=v) for a, b, v in lane.segments],
        changes=[
            LaneChangeOut(
                at=c.first_new_at,
                changed_after=c.last_old_at,
                old_value=c.old_value,
                new_value=c.new_value,
            )
            for c in lane.changes
        ],
    )


def group_commit_out(result: GroupCommit) -> GroupCommitOut:
    return GroupCommitOut(
        instance_id=result.instance.id,
        instance_name=result.instance.name,
        flavor=result.instance.flavor,
        start=result.start,
        end=result.end,
        series={name: _series_out(s) for name, s in result.series.items()},
        lanes=[_lane_out(lane) for lane in result.lanes],
        notes=list(result.notes),
    )


class SpeedupOut(Schema):
    workers: int
    speedup: float = Field(
        description="Serial apply time over the simulated time with this many workers."
    )


class ParallelismOut(Schema):
    """What the source's writes allow a parallel applier, from the newest window of its binlog
    (MariaDB sources; every LAGSCOPE_COMMIT_SAMPLE_EVERY_S). The speed-ups are the stream's,
    not capped by ``cores``: on C cores at most ~C× whatever the stream allows."""

    source: str | None = Field(description="The source sampled; null: no window yet.")
    problem: str | None = Field(
        default=None,
        description="Why the newest run read no window, e.g. a MySQL source whose monitoring"
        " user lacks the optional REPLICATION SLAVE.",
    )
    sampled_at: datetime | None
    transactions: int
    groups: int = Field(description="Group commits in the window.")
    mean_group_size: float = Field(description="Transactions per group commit.")
    conservative: list[SpeedupOut] = Field(
        description="MariaDB slave_parallel_mode=conservative (and the LOGICAL_CLOCK rule):"
        " what group-committed together applies at once."
    )
    optimistic: list[SpeedupOut] = Field(
        description="MariaDB optimistic/aggressive: any transactions at once; an upper bound"
        " that conflicts between neighbours bring down."
    )
    cores: int | None = Field(
        description="LAGSCOPE_REPLICA_CORES: the replicas' cores, which cap any speed-up"
        " (C cores apply at most ~C×); null: not configured."
    )
    durability: list[DurabilityNowOut] = Field(
        default_factory=list,
        description="Replicas behind in the last 2 minutes with a strict flush setting: the"
        " capacity relaxing them (innodb_flush_log_at_trx_commit=2, sync_binlog=0,"
        " sync_relay_log=0) is predicted to give, from their measured fsync cost.",
    )


class DurabilityNowOut(Schema):
    instance_id: int
    instance: str
    channel_id: int
    prediction: DurabilityPredictionOut


def parallelism_out(
    found: Parallelism, cores: int | None, durability: list[DurabilityNow]
) -> ParallelismOut:
    return ParallelismOut(
        cores=cores,
        durability=[
            DurabilityNowOut(
                instance_id=d.instance_id,
                instance=d.instance,
                channel_id=d.channel_id,
                prediction=DurabilityPredictionOut.model_validate(
                    d.prediction, from_attributes=True
                ),
            )
            for d in durability
        ],
        source=found.source,
        problem=found.problem,
        sampled_at=found.sampled_at,
        transactions=found.transactions,
        groups=found.groups,
        mean_group_size=round(found.mean_group_size, 3),
        conservative=[
            SpeedupOut(workers=n, speedup=round(x, 3)) for n, x in found.conservative.items()
        ],
        optimistic=[
            SpeedupOut(workers=n, speedup=round(x, 3)) for n, x in found.optimistic.items()
        ],
    )
