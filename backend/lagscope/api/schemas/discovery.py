"""Replica discovery: what a cluster's source reports, and adding a replica with its login."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from lagscope.api.schemas.common import Host, Name, Port, Region, Schema


class ProposalOut(Schema):
    host: str = Field(description="As the source reports it: text, shown as text")
    port: int | None = Field(
        description="As the source reports it; null: not reported (a binlog dump session, or "
        "a replica without report_port) — never guessed, and the source's login is not sent "
        "to such a replica"
    )
    server_id: int | None
    server_uuid: str | None
    seen_as: Literal["registered", "dump_session"] = Field(
        description="registered: SHOW SLAVE HOSTS / SHOW REPLICAS; dump_session: only a "
        "binlog dump session from that address (the replica reports no host, or SHOW SLAVE "
        "HOSTS was refused)"
    )
    monitored_as: str | None = Field(
        description="The cluster's instance that already is this replica (same host and "
        "port, or same server id); null: not monitored yet"
    )
    suggested_name: str


class DiscoveryOut(Schema):
    cluster_id: int
    source_instance_id: int
    source: str = Field(description="host:port of the source asked")
    source_server_id: int
    flavor: str
    proposals: list[ProposalOut]
    problems: list[str] = Field(
        description="What limited the answer (a refused statement, with the GRANT to run)"
    )


class ConfirmedAddress(Schema):
    host: Host
    port: Port


class DiscoveredReplicaIn(Schema):
    """Add a replica the source reports, logging in as the source does (its user and stored
    password, under its TLS setting). For any other login, use POST /instances."""

    name: Name
    host: Host
    port: Port
    region: Region = ""
    confirmed: list[ConfirmedAddress] = Field(
        default_factory=list,
        max_length=1000,
        description="The host:port pairs the operator confirmed may receive the source's login "
        "(the dialog lists them before anything is sent); this replica's own host and port "
        "must be among them, or the answer is 422 and nothing is sent or stored",
    )
