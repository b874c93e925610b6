"""Routes: instances CRUD and the connection test. Credentials are write-only."""

from __future__ import annotations

from fastapi import APIRouter, Response
from starlette.concurrency import run_in_threadpool

from lagscope.api.deps import BoxDep, EditorDep, PrincipalDep, SessionDep
from lagscope.api.schemas.common import PathId, QueryId
from lagscope.api.schemas.inventory import (
    ChannelSummary,
    ConnectionTestIn,
    ConnectionTestOut,
    InstanceIn,
    InstanceOut,
    InstancePatch,
)
from lagscope.collectors.executor import ConnectionSpec
from lagscope.models import Instance
from lagscope.services import inventory
from lagscope.services.probe import probe

router = APIRouter(tags=["instances"])


@router.get("/instances", response_model=list[InstanceOut])
def list_instances(
    _: PrincipalDep, session: SessionDep, cluster_id: QueryId | None = None
) -> list[Instance]:
    if cluster_id is not None:
        return list(inventory.get_cluster(session, cluster_id).instances)
    return [i for c in inventory.list_clusters(session) for i in c.instances]


@router.post("/instances", response_model=InstanceOut, status_code=201)
def create_instance(body: InstanceIn, _: EditorDep, session: SessionDep, box: BoxDep) -> Instance:
    cluster = inventory.get_cluster(session, body.cluster_id)
    return inventory.add_instance(
        session,
        box,
        cluster,
        body.name,
        body.host,
        body.port,
        body.user,
        body.password,
        body.role,
        body.region,
    )


@router.get("/instances/{instance_id}", response_model=InstanceOut)
def get_instance(instance_id: PathId, _: PrincipalDep, session: SessionDep) -> Instance:
    return inventory.get_instance(session, instance_id)


@router.patch("/instances/{instance_id}", response_model=InstanceOut)
def update_instance(
    instance_id: PathId, body: InstancePatch, _: EditorDep, session: SessionDep, box: BoxDep
) -> Instance:
    instance = inventory.get_instance(session, instance_id)
    return inventory.update_instance(session, box, instance, body.model_dump(exclude_unset=True))


@router.delete("/instances/{instance_id}", status_code=204, response_class=Response)
def delete_instance(instance_id: PathId, _: EditorDep, session: SessionDep) -> Response:
    inventory.delete(session, inventory.get_instance(session, instance_id))
    return Response(status_code=204)


@router.post("/instances/test", response_model=ConnectionTestOut)
async def test_instance(body: ConnectionTestIn, _: EditorDep) -> ConnectionTestOut:
    """Connect once as the monitoring user: flavor, privileges found/missing, channels — or a
    problem naming the cause (502: unreachable, access denied, unsupported server)."""
    spec = ConnectionSpec(
        body.host,
        body.port,
        body.user,
        body.password,
        connect_timeout_s=body.timeout_s,
        read_timeout_s=body.timeout_s,
    )
    report = await run_in_threadpool(probe, spec)
    snap = report.snapshot
    return ConnectionTestOut(
        server=snap.server,
        flavor=snap.flavor.product,
        version=snap.flavor.version_string or str(snap.flavor),
        read_only=snap.read_only,
        privileges_found=list(report.privileges.found),
        privileges_missing=list(report.privileges.missing),
        privileges_excessive=list(report.privileges.excessive),
        channels=[
            ChannelSummary(
                channel=c.channel,
                io_state=c.io_state.value,
                sql_running=c.sql_running,
                seconds_behind_source=c.seconds_behind_source,
                source_host=c.source_host,
                source_port=c.source_port,
                last_io_error=c.last_io_error,
                last_sql_error=c.last_sql_error,
            )
            for c in snap.channels
        ],
        problems=dict(snap.problems),
    )
