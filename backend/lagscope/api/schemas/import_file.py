"""The ``lagscope import`` file: clusters and their instances, validated as the API validates them.

Each model extends the API's own (``ClusterIn``, ``HeartbeatIn``, ``InstanceFields``), so a
name, host, port, region, TLS mode, poll interval or heartbeat setting is refused in a file
exactly when the API would refuse it. Additions: a password may come from the environment
(``password_env``) or a file (``password_file``) instead of the file itself; a cluster lists
its ``instances``; ``enabled``. A password left out keeps the stored one (none for a new
instance). ``to_plans`` reads those passwords and hands inventory/import_file.py plain data.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from lagscope.api.schemas.common import Password, Schema
from lagscope.api.schemas.inventory import ClusterIn, HeartbeatIn, InstanceFields
from lagscope.config import Settings
from lagscope.errors import InvalidInput
from lagscope.inventory.import_document import Document
from lagscope.inventory.import_file import ClusterPlan, HeartbeatPlan, InstancePlan
from lagscope.inventory.import_passwords import env_password, file_password

DEFAULT_PASSWORD_FILE_DIR = str(Settings.model_fields["password_file_dir"].default)
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]
FilePath = Annotated[str, StringConstraints(min_length=1, max_length=4096)]


class _PasswordFrom(Schema):
    """At most one of ``password``, ``password_env``, ``password_file``; read once, at
    validation, so a missing variable or an unreadable file is refused with the item's path.
    Which variables and files may be read: inventory/import_passwords.py."""

    password: Password | None = None
    password_env: EnvName | None = None
    password_file: FilePath | None = None
    _read: str | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _one_source(self, info: ValidationInfo) -> Any:
        given = [
            f for f in ("password", "password_env", "password_file") if getattr(self, f) is not None
        ]
        if len(given) > 1:
            raise ValueError(f"give one of password, password_env, password_file, not {given}")
        if self.password_env is not None:
            self._read = env_password(self.password_env)
        if self.password_file is not None:
            context = info.context or {}
            directory = str(context.get("password_file_dir", DEFAULT_PASSWORD_FILE_DIR))
            self._read = file_password(self.password_file, directory)
        return self

    def secret(self) -> str | None:
        """The password, or None when none was given (keep the stored one)."""
        if self.password_env is not None or self.password_file is not None:
            return self._read
        return self.password


class ImportHeartbeat(_PasswordFrom, HeartbeatIn):
    password: Password | None = None


class ImportInstance(_PasswordFrom, InstanceFields):
    password: Password | None = None  # type: ignore[assignment]  # None: keep the stored one


class ImportCluster(ClusterIn):
    heartbeat: ImportHeartbeat | None = None  # type: ignore[assignment]  # None: as it is
    enabled: bool = True
    instances: Annotated[list[ImportInstance], Field(max_length=1000)] = Field(default_factory=list)

    @model_validator(mode="after")
    def _names_and_source(self) -> Any:
        names = [i.name for i in self.instances]
        if dupes := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"instance names must be unique in a cluster: {dupes}")
        if sum(i.role == "source" for i in self.instances) > 1:
            raise ValueError("a cluster has at most one source")
        return self


class ImportFile(Schema):
    clusters: Annotated[list[ImportCluster], Field(max_length=1000)]

    @model_validator(mode="after")
    def _unique(self) -> Any:
        names = [c.name for c in self.clusters]
        if dupes := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"cluster names must be unique: {dupes}")
        return self

    def to_plans(self) -> list[ClusterPlan]:
        return [_cluster_plan(i, c) for i, c in enumerate(self.clusters)]


def _cluster_plan(index: int, cluster: ImportCluster) -> ClusterPlan:
    path = f"clusters[{index}]"
    hb = cluster.heartbeat
    return ClusterPlan(
        path=path,
        name=cluster.name,
        poll_interval_s=cluster.poll_interval_s,
        extra_params=tuple(cluster.extra_params),
        enabled=cluster.enabled,
        heartbeat=None
        if hb is None
        else HeartbeatPlan(
            mode=hb.mode,
            schema_name=hb.schema_name,
            table=hb.table,
            interval_s=hb.interval_s,
            user=hb.user,
            password=hb.secret(),
        ),
        instances=tuple(
            InstancePlan(
                path=f"{path}.instances[{j}]",
                name=i.name,
                host=i.host,
                port=i.port,
                user=i.user,
                password=i.secret(),
                role=i.role,
                region=i.region,
                enabled=i.enabled,
                tls=i.tls,
                tls_ca_path=i.tls_ca_path or None,
                server_public_key_path=i.server_public_key_path or None,
            )
            for j, i in enumerate(cluster.instances)
        ),
    )


def plans_from(
    document: Document, password_file_dir: str = DEFAULT_PASSWORD_FILE_DIR
) -> list[ClusterPlan]:
    """Validate the whole file; :class:`InvalidInput` listing every problem with its path and
    line (nothing is applied from a file with any). ``password_file_dir``:
    ``LAGSCOPE_PASSWORD_FILE_DIR``, the one directory a ``password_file`` may be in."""
    try:
        parsed = ImportFile.model_validate(
            document.data, context={"password_file_dir": password_file_dir}
        )
    except ValidationError as exc:
        problems = [
            f"{document.where(e['loc'])}: {_message(e)}" for e in exc.errors(include_url=False)
        ]
        raise InvalidInput(f"{document.name}: " + "\n  ".join(["", *problems]).lstrip()) from exc
    return parsed.to_plans()


def _message(error: Any) -> str:
    # A value error's text without pydantic's "Value error, " prefix.
    return str(error["msg"]).removeprefix("Value error, ")
