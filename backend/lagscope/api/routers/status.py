"""Routes: a cluster's live status and topology, read from what the workers last stored, and
its channels' verdicts over a range; the whole fleet's status and lag sparklines at once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from lagscope.api.deps import PrincipalDep, SessionDep, SettingsDep
from lagscope.api.schemas.common import PathId
from lagscope.api.schemas.status import ClusterStatusOut, FleetStatusOut, TopologyOut
from lagscope.api.schemas.status_history import SparklinesOut, VerdictsOut, verdicts_out
from lagscope.api.schemas.window import TimeRange, time_range
from lagscope.history import sparklines, status, verdicts
from lagscope.history.series import MAX_POINTS
from lagscope.models.types import to_micros

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


@router.get("/fleet/status", response_model=FleetStatusOut)
def get_fleet_status(_: PrincipalDep, session: SessionDep) -> FleetStatusOut:
    """Every cluster's status (as ``/clusters/{id}/status``) and replication edges, in one
    answer: the overview of a hundred clusters is one request, not two per card."""
    now = datetime.now(UTC)
    found = status.fleet_status(session, now)
    return FleetStatusOut.model_validate({"generated_at": now, "clusters": found})


@router.get("/fleet/sparklines", response_model=SparklinesOut)
def get_fleet_sparklines(
    _: PrincipalDep,
    session: SessionDep,
    settings: SettingsDep,
    minutes: Annotated[int, Query(ge=1, le=24 * 60)] = 15,
    points: Annotated[int, Query(ge=2, le=300)] = 60,
) -> SparklinesOut:
    """Every current channel's best lag over the last ``minutes``, in ``points`` buckets."""
    found = sparklines.lag_sparklines(
        session, datetime.now(UTC), timedelta(minutes=minutes), points, settings.retention()
    )
    return SparklinesOut.model_validate(
        {
            "metric": "lag_s",
            "start": to_micros(found.start) // 1000,
            "end": to_micros(found.end) // 1000,
            "origin": found.origin_ms,
            "bucket_ms": found.bucket_ms,
            "lines": found.lines,
        }
    )
