"""Routes: a cluster's live status and topology, read from what the workers last stored, and
its channels' verdicts over a range."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from lagscope.api.deps import PrincipalDep, SessionDep, SettingsDep
from lagscope.api.schemas.common import PathId
from lagscope.api.schemas.status import ClusterStatusOut, TopologyOut, VerdictsOut, verdicts_out
from lagscope.api.schemas.window import TimeRange, time_range
from lagscope.history import status, verdicts
from lagscope.history.series import MAX_POINTS

router = APIRouter(tags=["live"])


@router.get("/clusters/{cluster_id}/status", response_model=ClusterStatusOut)
def get_cluster_status(
    cluster_id: PathId, _: PrincipalDep, session: SessionDep
) -> ClusterStatusOut:
    """Every instance (reachability, clock) and every channel's newest sample, with its ETA."""
    found = status.cluster_status(session, cluster_id, datetime.now(UTC))
    return ClusterStatusOut.model_validate(found)


@router.get("/clusters/{cluster_id}/topology", response_model=TopologyOut)
def get_cluster_topology(cluster_id: PathId, _: PrincipalDep, session: SessionDep) -> TopologyOut:
    """Instances as nodes, channels as source → replica edges with their current lag."""
    found = status.cluster_topology(session, cluster_id, datetime.now(UTC))
    return TopologyOut.model_validate(found)


@router.get("/clusters/{cluster_id}/verdicts", response_model=VerdictsOut)
def get_cluster_verdicts(
    cluster_id: PathId,
    window: Annotated[TimeRange, Depends(time_range)],
    _: PrincipalDep,
    session: SessionDep,
    settings: SettingsDep,
    points: Annotated[int, Query(ge=1, le=MAX_POINTS)] = 500,
) -> VerdictsOut:
    """Each channel's verdict over [start, end) as runs, in at most ``points`` buckets."""
    found = verdicts.verdict_runs(
        session, cluster_id, window.start, window.end, points, settings.retention()
    )
    return verdicts_out(cluster_id, window.start, window.end, found)
