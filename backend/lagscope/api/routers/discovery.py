"""Routes: discover a cluster's replicas from its source; add one with the source's login.

Both connect to the source, so they run like the connection test: the editor is checked in a
transaction of its own, the store is read and written in short transactions, and the source
is waited on in the connection-test pool (its concurrency and per-user rate) with no
transaction open.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Request

from lagscope.api.deps import EditorApartDep
from lagscope.api.routers.instances import probe_gate
from lagscope.api.schemas.common import PathId
from lagscope.api.schemas.discovery import DiscoveredReplicaIn, DiscoveryOut, ProposalOut
from lagscope.api.schemas.inventory import InstanceOut
from lagscope.config import Settings
from lagscope.inventory import discovery

router = APIRouter(tags=["clusters"])

_RESPONSES: dict[int | str, dict[str, Any]] = {
    404: {"description": "No such cluster"},
    422: {"description": "No source, unreadable credentials, or a target not allowed"},
    429: {"description": "Too many connection tests or discoveries by this user"},
    502: {"description": "The source is unreachable, or refuses what discovery needs"},
    503: {"description": "Too many connection tests running; see Retry-After"},
}


@router.post("/clusters/{cluster_id}/discover", response_model=DiscoveryOut, responses=_RESPONSES)
async def discover_replicas(
    cluster_id: PathId, principal: EditorApartDep, request: Request
) -> DiscoveryOut:
    """Ask the cluster's source which replicas it has (SHOW SLAVE HOSTS / SHOW REPLICAS, and
    its binlog dump sessions) with the source's own stored login; nothing is stored. Each
    proposal says whether the cluster already monitors it and whether its port is a guess."""
    found = await _discover(request, principal.username, cluster_id)
    return DiscoveryOut(
        cluster_id=cluster_id,
        source_instance_id=found.target.source_id,
        source=found.view.server,
        source_server_id=found.view.server_id,
        flavor=str(found.view.flavor),
        proposals=[ProposalOut.model_validate(p) for p in found.proposals],
        problems=list(found.view.problems),
    )


@router.post(
    "/clusters/{cluster_id}/discovered-replicas",
    response_model=InstanceOut,
    status_code=201,
    responses={**_RESPONSES, 409: {"description": "Already monitored, or the source changed"}},
)
async def add_discovered_replica(
    cluster_id: PathId, body: DiscoveredReplicaIn, principal: EditorApartDep, request: Request
) -> InstanceOut:
    """Add a replica the source reports, with the source's login ("same login as the
    source"): its user and encrypted password are copied, under its TLS setting. Its host:port
    must be among the ``confirmed`` ones (422 otherwise, before the source is even asked). The
    source is asked again: a host:port it does not report now, or a host whose port it does not
    report, is refused (422), so the source's password only ever goes to its own replicas, at
    the address it names and the operator confirmed. LAGSCOPE_ALLOWED_TARGETS applies."""
    confirmed = [(c.host, c.port) for c in body.confirmed]
    discovery.check_confirmed(body.host, body.port, confirmed)
    found = await _discover(request, principal.username, cluster_id)
    settings: Settings = request.app.state.settings

    def add() -> InstanceOut:
        with request.app.state.sessions() as session, session.begin():
            instance = discovery.add_with_source_login(
                session,
                request.app.state.box,
                found,
                body.name,
                body.host,
                body.port,
                confirmed,
                body.region,
                allowed=settings.allow_list(),
                ca_dir=settings.tls_ca_dir,
            )
            return InstanceOut.model_validate(instance)

    return await anyio.to_thread.run_sync(add)


async def _discover(request: Request, username: str, cluster_id: int) -> discovery.Discovery:
    settings: Settings = request.app.state.settings

    def target() -> discovery.DiscoveryTarget:
        with request.app.state.sessions() as session, session.begin():
            return discovery.discovery_target(
                session, request.app.state.box, cluster_id, settings.allow_list()
            )

    found_target = await anyio.to_thread.run_sync(target)
    return await probe_gate(request).run(username, partial(discovery.discover, found_target))
