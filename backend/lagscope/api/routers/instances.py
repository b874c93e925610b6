"""Routes: instances CRUD and the connection test. Credentials are write-only."""

from __future__ import annotations

import anyio.to_thread
from fastapi import APIRouter, Request, Response

from lagscope.api.deps import (
    BoxDep,
    EditorApartDep,
    EditorDep,
    PrincipalDep,
    SessionDep,
    SettingsDep,
)
from lagscope.api.schemas.common import PathId, QueryId
from lagscope.api.schemas.inventory import (
    ChannelSummary,
    ConnectionTestIn,
    ConnectionTestOut,
    InstanceIn,
    InstanceOut,
    InstancePatch,
)
from lagscope.collectors.connection import (
    ConnectionSpec,
    check_public_key_setting,
    check_tls_setting,
)
from lagscope.config import Settings
from lagscope.errors import CredentialsUnreadable, InvalidInput
from lagscope.inventory import instances as inventory
from lagscope.inventory import password_targets
from lagscope.inventory.probe import ProbeGate
from lagscope.models import Instance
from lagscope.security.secret_box import SecretBox

router = APIRouter(tags=["instances"])


@router.get("/instances", response_model=list[InstanceOut])
def list_instances(
    _: PrincipalDep, session: SessionDep, cluster_id: QueryId | None = None
) -> list[Instance]:
    if cluster_id is not None:
        return list(inventory.get_cluster(session, cluster_id).instances)
    return [i for c in inventory.list_clusters(session) for i in c.instances]


@router.post("/instances", response_model=InstanceOut, status_code=201)
def create_instance(
    body: InstanceIn, _: EditorDep, session: SessionDep, box: BoxDep, settings: SettingsDep
) -> Instance:
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
        allowed=settings.allow_list(),
        tls=body.tls,
        tls_ca_path=body.tls_ca_path,
        ca_dir=settings.tls_ca_dir,
        enabled=body.enabled,
        server_public_key_path=body.server_public_key_path,
    )


@router.get("/instances/{instance_id}", response_model=InstanceOut)
def get_instance(instance_id: PathId, _: PrincipalDep, session: SessionDep) -> Instance:
    return inventory.get_instance(session, instance_id)


@router.patch("/instances/{instance_id}", response_model=InstanceOut)
def update_instance(
    instance_id: PathId,
    body: InstancePatch,
    _: EditorDep,
    session: SessionDep,
    box: BoxDep,
    settings: SettingsDep,
) -> Instance:
    instance = inventory.get_instance(session, instance_id)
    changes = body.model_dump(exclude_unset=True)
    return inventory.update_instance(
        session, box, instance, changes, settings.allow_list(), ca_dir=settings.tls_ca_dir
    )


@router.post("/instances/{instance_id}/retry-login", response_model=InstanceOut)
def retry_login(instance_id: PathId, _: EditorDep, session: SessionDep) -> Instance:
    """The account was fixed on the server: try the stored password at the next poll, even
    after polling gave up on refused logins (``login_state`` access_denied with no
    ``next_attempt_at`` in the status). Editing the password, or disabling and enabling the
    instance, does the same."""
    return inventory.retry_login(session, inventory.get_instance(session, instance_id))


@router.delete("/instances/{instance_id}", status_code=204, response_class=Response)
def delete_instance(instance_id: PathId, _: EditorDep, session: SessionDep) -> Response:
    inventory.delete(session, inventory.get_instance(session, instance_id))
    return Response(status_code=204)


@router.post(
    "/instances/test",
    response_model=ConnectionTestOut,
    responses={
        404: {"description": "instance_id names no instance"},
        422: {
            "description": "Invalid request, a target LAGSCOPE_ALLOWED_TARGETS refuses, "
            "instance_id's stored password asked for another target, or unreadable"
        },
        429: {"description": "Too many tests by this user; see Retry-After"},
        502: {"description": "Unreachable or not MySQL/MariaDB, access denied, unsupported"},
        503: {"description": "Too many tests running; see Retry-After"},
    },
)
async def test_instance(
    body: ConnectionTestIn, principal: EditorApartDep, request: Request
) -> ConnectionTestOut:
    """Connect once as the monitoring user: flavor, privileges found/missing, channels — or a
    problem (502): "unreachable, or not a MySQL/MariaDB server" for anything that did not
    answer as one (never which), access denied, unsupported server.

    Editing an instance, ``instance_id`` with no ``password`` tests with the stored password,
    for that instance's own host, port and user only (422 before any connection otherwise)."""
    settings: Settings = request.app.state.settings
    check_tls_setting(body.tls, body.tls_ca_path or None, settings.tls_ca_dir)
    key_path = body.server_public_key_path or None
    check_public_key_setting(body.tls, key_path, settings.tls_ca_dir)
    password = body.password
    if password is None:
        # A database read and maybe the key derivation: off the event loop, as a sync route.
        password = (
            ""
            if body.instance_id is None
            else await anyio.to_thread.run_sync(_stored, request, body.instance_id, body)
        )
    spec = ConnectionSpec(
        body.host,
        body.port,
        body.user,
        password,
        connect_timeout_s=body.timeout_s,
        read_timeout_s=body.timeout_s,
        allowed=settings.allow_list(),
        tls=body.tls,
        tls_ca_path=body.tls_ca_path or None,
        server_public_key_path=key_path,
    )
    report = await probe_gate(request).test(principal.username, spec)
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


def _stored(request: Request, instance_id: int, body: ConnectionTestIn) -> str:
    """The stored password of ``instance_id``, if the body tests that instance's own
    target (password_targets.stored_password_refusal): 404 unknown, 422 elsewhere or unreadable.
    Read in a short transaction of its own, like the editor check: the test then waits long."""
    with request.app.state.sessions() as session, session.begin():
        instance = inventory.get_instance(session, instance_id)
        refusal = password_targets.stored_password_refusal(
            instance,
            body.host,
            body.port,
            body.user,
            body.tls,
            body.tls_ca_path,
            body.server_public_key_path,
        )
        token = instance.password_enc
    if refusal is not None:
        raise InvalidInput(refusal)
    box: SecretBox = request.app.state.box
    try:
        return box.decrypt(token)
    except CredentialsUnreadable as exc:
        raise CredentialsUnreadable(
            f"credentials_unreadable: instance {instance_id}'s stored password cannot be "
            f"used ({exc}); type it to test"
        ) from exc


def probe_gate(request: Request) -> ProbeGate:
    """The API process's one gate for work that connects to servers (tests, discovery)."""
    state = request.app.state
    gate: ProbeGate | None = getattr(state, "probe_gate", None)
    if gate is None:
        settings: Settings = state.settings
        gate = ProbeGate(
            settings.probe_concurrency, settings.probe_queue, settings.probe_per_minute
        )
        state.probe_gate = gate
    return gate
