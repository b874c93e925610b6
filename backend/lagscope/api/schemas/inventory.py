"""Clusters and instances. Passwords go in, never out (only ``has_password``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from lagscope.api.schemas.common import (
    Host,
    Identifier,
    Name,
    ObjectId,
    Password,
    PatchSchema,
    Port,
    Region,
    Schema,
    VariableName,
    printable,
)

HeartbeatMode = Literal["off", "lagscope", "pt-heartbeat"]
Role = Literal["source", "replica"]
# collectors/connection.py says what each mode checks; docs/security.md for users.
TlsMode = Literal["preferred", "required", "verify_ca", "verify_identity"]
# A PEM CA bundle on the workers' machines (absolute; checked with the mode by the service).
CaPath = Annotated[
    str,
    StringConstraints(strip_whitespace=True, max_length=1024),
    AfterValidator(printable),
]
PollInterval = Annotated[float, Field(ge=0.2, le=3600)]
PUBLIC_KEY_HELP = (
    "the server's RSA public key (PEM, inside LAGSCOPE_TLS_CA_DIR) for sha256_password / "
    "caching_sha2_password logins without TLS (tls preferred only); none: such a login is "
    "refused unless TLS is verified"
)


class HeartbeatIn(Schema):
    mode: HeartbeatMode = "off"
    schema_name: Identifier = "lagscope"
    table: Identifier = "heartbeat"
    interval_s: Annotated[float, Field(ge=0.05, le=60)] = 0.25
    user: Name | None = None
    password: Password | None = None


class HeartbeatOut(Schema):
    mode: HeartbeatMode
    schema_name: str
    table: str
    interval_s: float
    user: str | None
    has_password: bool
    problem: str | None = Field(
        default=None,
        description="Why no heartbeat writer runs for this cluster (mode lagscope only): no "
        "password, a password cleared because the source changed (it is only ever sent to "
        "the source it was entered for: enter it again), a refused login backing off. "
        "null: none",
    )


class ClusterIn(Schema):
    name: Name
    poll_interval_s: PollInterval = 1.0
    extra_params: Annotated[list[VariableName], Field(max_length=100, default_factory=list)]
    heartbeat: HeartbeatIn = Field(default_factory=HeartbeatIn)


class ClusterPatch(PatchSchema):
    name: Name | None = None
    poll_interval_s: PollInterval | None = None
    extra_params: Annotated[list[VariableName], Field(max_length=100)] | None = None
    heartbeat: HeartbeatIn | None = None
    enabled: bool | None = None


class InstanceOut(Schema):
    id: int
    cluster_id: int
    name: str
    host: str
    port: int
    user: str
    has_password: bool
    role: Role
    region: str
    enabled: bool
    tls: TlsMode
    tls_ca_path: str | None
    server_public_key_path: str | None
    flavor: str | None
    version: str | None
    server_id: int | None
    last_ok_at: datetime | None
    last_error: str | None


class ClusterOut(Schema):
    id: int
    name: str
    poll_interval_s: float
    extra_params: list[str]
    heartbeat: HeartbeatOut
    enabled: bool
    created_at: datetime
    instances: list[InstanceOut]


class InstanceFields(Schema):
    """An instance's own fields: the API's ``InstanceIn`` and ``lagscope import`` files."""

    name: Name
    host: Host
    port: Port = 3306
    user: Name
    password: Password = ""
    role: Role = "replica"
    region: Region = ""
    enabled: bool = True
    tls: TlsMode = "preferred"
    tls_ca_path: CaPath | None = Field(
        default=None, description="PEM CA bundle for verify_*; none: the system's CAs"
    )
    server_public_key_path: CaPath | None = Field(default=None, description=PUBLIC_KEY_HELP)


class InstanceIn(InstanceFields):
    cluster_id: ObjectId


class InstancePatch(PatchSchema):
    name: Name | None = None
    host: Host | None = None
    port: Port | None = None
    user: Name | None = None
    password: Password | None = None
    region: Region | None = None
    enabled: bool | None = None
    tls: TlsMode | None = None
    tls_ca_path: CaPath | None = Field(default=None, description='"" removes it')
    server_public_key_path: CaPath | None = Field(
        default=None, description=PUBLIC_KEY_HELP + '; "" removes it'
    )


class ConnectionTestIn(Schema):
    host: Host
    port: Port = 3306
    user: Name
    password: Password | None = Field(
        default=None,
        description='absent or null: instance_id\'s stored password, else none (""); "": none',
    )
    instance_id: ObjectId | None = Field(
        default=None,
        description="editing an instance: with no password, test with its stored one; only "
        "for its own host, port and user exactly (and no weaker tls, same tls_ca_path and "
        "server_public_key_path), else 422",
    )
    timeout_s: Annotated[float, Field(ge=0.2, le=30)] = 3.0
    tls: TlsMode = "preferred"
    tls_ca_path: CaPath | None = None
    server_public_key_path: CaPath | None = Field(default=None, description=PUBLIC_KEY_HELP)


class ChannelSummary(Schema):
    channel: str
    io_state: str
    sql_running: bool
    seconds_behind_source: int | None
    source_host: str | None
    source_port: int | None
    last_io_error: str
    last_sql_error: str


class ConnectionTestOut(Schema):
    server: str
    flavor: str
    version: str
    read_only: bool
    privileges_found: list[str]
    privileges_missing: list[str]
    privileges_excessive: list[str]
    channels: list[ChannelSummary]
    problems: dict[str, str]
