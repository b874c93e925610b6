"""Routes: clusters CRUD (editors write, everyone signed in reads)."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Response

from lagscope.api.deps import BoxDep, EditorDep, PrincipalDep, SessionDep
from lagscope.api.schemas.common import PathId
from lagscope.api.schemas.inventory import (
    ClusterIn,
    ClusterOut,
    ClusterPatch,
    HeartbeatOut,
    InstanceOut,
)
from lagscope.inventory import heartbeat_login
from lagscope.inventory import instances as inventory
from lagscope.models import Cluster

router = APIRouter(tags=["clusters"])


def cluster_out(cluster: Cluster) -> ClusterOut:
    return ClusterOut(
        id=cluster.id,
        name=cluster.name,
        poll_interval_s=cluster.poll_interval_s,
        extra_params=list(cluster.extra_params or []),
        heartbeat=HeartbeatOut(
            mode=cluster.heartbeat_mode,
            schema_name=cluster.heartbeat_schema,
            table=cluster.heartbeat_table,
            interval_s=cluster.heartbeat_interval_s,
            user=cluster.heartbeat_user,
            has_password=bool(cluster.heartbeat_password_enc),
            problem=heartbeat_login.refusal(cluster, datetime.now(UTC)),
        ),
        enabled=cluster.enabled,
        created_at=cluster.created_at,
        instances=[InstanceOut.model_validate(i) for i in cluster.instances],
    )


@router.get("/clusters", response_model=list[ClusterOut])
def list_clusters(_: PrincipalDep, session: SessionDep) -> list[ClusterOut]:
    return [cluster_out(c) for c in inventory.list_clusters(session)]


@router.post("/clusters", response_model=ClusterOut, status_code=201)
def create_cluster(body: ClusterIn, _: EditorDep, session: SessionDep, box: BoxDep) -> ClusterOut:
    cluster = inventory.create_cluster(
        session, body.name, body.poll_interval_s, body.extra_params, "off"
    )
    inventory.apply_heartbeat(box, cluster, body.heartbeat.model_dump())
    session.flush()
    return cluster_out(cluster)


@router.get("/clusters/{cluster_id}", response_model=ClusterOut)
def get_cluster(cluster_id: PathId, _: PrincipalDep, session: SessionDep) -> ClusterOut:
    return cluster_out(inventory.get_cluster(session, cluster_id))


@router.patch("/clusters/{cluster_id}", response_model=ClusterOut)
def update_cluster(
    cluster_id: PathId, body: ClusterPatch, _: EditorDep, session: SessionDep, box: BoxDep
) -> ClusterOut:
    cluster = inventory.get_cluster(session, cluster_id)
    changes = body.model_dump(exclude_unset=True)
    if body.heartbeat is not None:
        changes["heartbeat"] = body.heartbeat.model_dump(exclude_unset=True)
    return cluster_out(inventory.update_cluster(session, box, cluster, changes))


@router.delete("/clusters/{cluster_id}", status_code=204, response_class=Response)
def delete_cluster(cluster_id: PathId, _: EditorDep, session: SessionDep) -> Response:
    inventory.delete(session, inventory.get_cluster(session, cluster_id))
    return Response(status_code=204)
