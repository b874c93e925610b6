"""Routes: the applier workers heatmap of a cluster's replicas, and group commit on its source."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from lagscope.api.deps import PrincipalDep, SessionDep, SettingsDep
from lagscope.api.schemas.common import PathId, QueryId
from lagscope.api.schemas.window import TimeRange, time_range
from lagscope.api.schemas.workers import (
    GroupCommitOut,
    ParallelismOut,
    WorkersHeatmapOut,
    group_commit_out,
    parallelism_out,
    workers_heatmap_out,
)
from lagscope.history import group_commit as group_commit_service
from lagscope.history import parallelism as parallelism_service
from lagscope.history import workers as workers_service
from lagscope.history.durability import durability_now

router = APIRouter(tags=["workers"])
TimeRangeDep = Annotated[TimeRange, Depends(time_range)]


@router.get("/clusters/{cluster_id}/applier-workers", response_model=WorkersHeatmapOut)
def get_applier_workers(
    cluster_id: PathId,
    window: TimeRangeDep,
    _: PrincipalDep,
    session: SessionDep,
    buckets: Annotated[int, Query(ge=1, le=workers_service.MAX_BUCKETS)] = 120,
    instance_id: QueryId | None = None,
) -> WorkersHeatmapOut:
    """Per replica and channel: each worker's busy share per time bucket (a heatmap of workers ×
    time), the workers configured, the newest reading, and why it cannot be read if so.
    Buckets are at least 1 s wide; workers are kept at poll resolution within raw retention."""
    result = workers_service.workers_heatmap(
        session, cluster_id, window.start, window.end, buckets, instance_id
    )
    return workers_heatmap_out(result)


@router.get("/clusters/{cluster_id}/group-commit", response_model=GroupCommitOut)
def get_group_commit(
    cluster_id: PathId,
    window: TimeRangeDep,
    _: PrincipalDep,
    session: SessionDep,
    settings: SettingsDep,
    points: Annotated[int, Query(ge=1, le=2000)] = 300,
    instance_id: QueryId | None = None,
) -> GroupCommitOut:
    """The source's (or ``instance_id``'s) binlog commits/s, groups/s, commits per group,
    fsyncs/s and semi-sync wait, with the durability and group-commit parameters as lanes."""
    result = group_commit_service.group_commit(
        session,
        cluster_id,
        window.start,
        window.end,
        points,
        instance_id,
        settings.retention(),
    )
    return group_commit_out(result)


@router.get("/clusters/{cluster_id}/parallelism", response_model=ParallelismOut)
def get_parallelism(
    cluster_id: PathId, _: PrincipalDep, session: SessionDep, settings: SettingsDep
) -> ParallelismOut:
    """How much of the source's write stream a replica could apply at once: the newest binlog
    window of the cluster's source (MariaDB), grouped by group commit, simulated for 1…16
    workers under the commit-parent rule (conservative) and without parents (optimistic); and
    for each replica behind with strict flush settings, what relaxing them would give."""
    found = parallelism_service.parallelism(session, cluster_id)
    flush = durability_now(session, cluster_id, datetime.now(UTC))
    return parallelism_out(found, settings.replica_cores or None, flush)
