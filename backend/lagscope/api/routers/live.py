"""Routes: a cluster's live status and topology, read from what the workers last stored."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter

from lagscope.api.deps import PrincipalDep, SessionDep
from lagscope.api.schemas.common import PathId
from lagscope.api.schemas.live import ClusterStatusOut, TopologyOut
from lagscope.services import status

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
