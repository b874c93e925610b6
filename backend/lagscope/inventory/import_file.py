"""``lagscope import``: make the store's clusters and instances match a file, idempotently.

The file is loaded (inventory/import_document.py) and validated as the API validates
(api/schemas/import_file.py) before anything is written; this module gets plain plans and
applies them in the caller's transaction, through the same inventory functions the API uses
(:func:`~lagscope.inventory.instances.add_instance`, ``update_instance``, ``update_cluster``):
the allow-list, the TLS checks and "a stored password never goes to a new target" hold alike.
The caller commits, or rolls back for a dry run or on the first refusal, so a file applies
whole or not at all.

Idempotent: every field is compared with the store first and only differences are written; a
password is compared with the stored one decrypted (the API cannot do that: passwords are
write-only there, which is why the command works on the store). Nothing in the file means
"delete": an instance or cluster missing from it is left alone. Passwords are never part of
the report, only the word ``password`` when one changes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.collectors.targets import AllowList
from lagscope.errors import CredentialsUnreadable, InvalidInput, LagscopeError
from lagscope.inventory import instances as inventory
from lagscope.models import Cluster, Instance
from lagscope.security.secret_box import SecretBox

Outcome = Literal["created", "changed", "unchanged"]


@dataclass(frozen=True, slots=True)
class InstancePlan:
    path: str
    name: str
    host: str
    port: int
    user: str
    password: str | None  # None: keep the stored one (none for a new instance)
    role: str
    region: str
    enabled: bool
    tls: str
    tls_ca_path: str | None
    server_public_key_path: str | None


@dataclass(frozen=True, slots=True)
class HeartbeatPlan:
    mode: str
    schema_name: str
    table: str
    interval_s: float
    user: str | None
    password: str | None


@dataclass(frozen=True, slots=True)
class ClusterPlan:
    path: str
    name: str
    poll_interval_s: float
    extra_params: tuple[str, ...]
    enabled: bool
    heartbeat: HeartbeatPlan | None
    instances: tuple[InstancePlan, ...]


@dataclass(frozen=True, slots=True)
class Change:
    what: str  # "cluster shop", "instance shop/db1"
    outcome: Outcome
    fields: tuple[str, ...] = ()

    def line(self) -> str:
        detail = f" ({', '.join(self.fields)})" if self.fields else ""
        return f"{self.what}: {self.outcome}{detail}"


@dataclass(slots=True)
class ImportReport:
    changes: list[Change] = field(default_factory=list)

    def counts(self) -> Counter[str]:
        return Counter(c.outcome for c in self.changes)

    def summary(self) -> str:
        n = self.counts()
        return f"{n['created']} created, {n['changed']} changed, {n['unchanged']} unchanged"


def apply_plans(
    session: Session,
    box: SecretBox,
    plans: list[ClusterPlan],
    allowed: AllowList | None = None,
    ca_dir: str | None = None,
) -> ImportReport:
    """Write what differs; raise :class:`InvalidInput` naming the item's path on the first
    refusal (the caller rolls back)."""
    report = ImportReport()
    for plan in plans:
        try:
            _apply_cluster(session, box, plan, report, allowed, ca_dir)
        except _Refused:
            raise
        except LagscopeError as exc:
            raise InvalidInput(f"{plan.path} (cluster {plan.name!r}): {exc}") from exc
    return report


class _Refused(InvalidInput):
    """A refusal already naming its path."""


def _apply_cluster(
    session: Session,
    box: SecretBox,
    plan: ClusterPlan,
    report: ImportReport,
    allowed: AllowList | None,
    ca_dir: str | None,
) -> None:
    cluster = session.scalar(select(Cluster).where(Cluster.name == plan.name))
    created = cluster is None
    if cluster is None:
        cluster = inventory.create_cluster(
            session, plan.name, plan.poll_interval_s, plan.extra_params, "off"
        )
        cluster.enabled = plan.enabled
    changes = {} if created else _cluster_changes(cluster, plan)
    instance_changes = [
        _apply_instance(session, box, cluster, i, allowed, ca_dir) for i in plan.instances
    ]
    # After the instances: a heartbeat password binds to the source as it now is.
    heartbeat = _heartbeat_changes(box, cluster, plan.heartbeat)
    if heartbeat:
        changes["heartbeat"] = heartbeat
    if changes:
        inventory.update_cluster(session, box, cluster, changes)
    fields = _names(changes)
    outcome: Outcome = "created" if created else "changed" if fields else "unchanged"
    report.changes.append(Change(f"cluster {plan.name}", outcome, () if created else fields))
    report.changes += instance_changes


def _names(changes: dict[str, Any]) -> tuple[str, ...]:
    names = [k for k in changes if k != "heartbeat"]
    names += [f"heartbeat.{k}" for k in changes.get("heartbeat", {})]
    return tuple(names)


def _cluster_changes(cluster: Cluster, plan: ClusterPlan) -> dict[str, Any]:
    wanted = {
        "poll_interval_s": plan.poll_interval_s,
        "extra_params": list(plan.extra_params),
        "enabled": plan.enabled,
    }
    return {
        k: v
        for k, v in wanted.items()
        if (list(getattr(cluster, k) or []) if k == "extra_params" else getattr(cluster, k)) != v
    }


def _heartbeat_changes(
    box: SecretBox, cluster: Cluster, plan: HeartbeatPlan | None
) -> dict[str, Any]:
    if plan is None:
        return {}
    wanted = {
        "mode": (plan.mode, cluster.heartbeat_mode),
        "schema_name": (plan.schema_name, cluster.heartbeat_schema),
        "table": (plan.table, cluster.heartbeat_table),
        "interval_s": (plan.interval_s, cluster.heartbeat_interval_s),
        "user": (plan.user, cluster.heartbeat_user),
    }
    changes = {k: new for k, (new, old) in wanted.items() if new != old and new is not None}
    if plan.password is not None and (
        cluster.heartbeat_password_enc is None
        or _differs(box, cluster.heartbeat_password_enc, plan.password)
    ):
        changes["password"] = plan.password
    return changes


def _differs(box: SecretBox, token: str, password: str) -> bool:
    try:
        return box.decrypt(token) != password
    except CredentialsUnreadable:
        return True  # unreadable: entering it again is the cure


_COMPARED = ("host", "port", "user", "region", "enabled", "tls", "tls_ca_path")


def _apply_instance(
    session: Session,
    box: SecretBox,
    cluster: Cluster,
    plan: InstancePlan,
    allowed: AllowList | None,
    ca_dir: str | None,
) -> Change:
    what = f"instance {cluster.name}/{plan.name}"
    try:
        found = session.scalar(
            select(Instance).where(Instance.cluster_id == cluster.id, Instance.name == plan.name)
        )
        if found is None:
            inventory.add_instance(
                session,
                box,
                cluster,
                plan.name,
                plan.host,
                plan.port,
                plan.user,
                plan.password or "",
                plan.role,
                plan.region,
                allowed=allowed,
                tls=plan.tls,
                tls_ca_path=plan.tls_ca_path,
                ca_dir=ca_dir,
                enabled=plan.enabled,
                server_public_key_path=plan.server_public_key_path,
            )
            return Change(what, "created")
        return _update_instance(session, box, found, plan, allowed, ca_dir, what)
    except _Refused:
        raise
    except LagscopeError as exc:
        raise _Refused(f"{plan.path} ({what}): {exc}") from exc


def _update_instance(
    session: Session,
    box: SecretBox,
    found: Instance,
    plan: InstancePlan,
    allowed: AllowList | None,
    ca_dir: str | None,
    what: str,
) -> Change:
    """An instance the store has, made to match the file; an import never changes its role."""
    if found.role != plan.role:
        raise InvalidInput(
            f"role {found.role} cannot be changed to {plan.role} by an import: delete the "
            "instance and import it again"
        )
    changes = {f: getattr(plan, f) for f in _COMPARED if getattr(plan, f) != getattr(found, f)}
    key = plan.server_public_key_path
    if key != found.server_public_key_path:
        changes["server_public_key_path"] = key or ""
    if "tls_ca_path" in changes:
        changes["tls_ca_path"] = plan.tls_ca_path or ""
    differs = plan.password is not None and (
        _differs(box, found.password_enc, plan.password)
        if found.password_enc
        else plan.password != ""
    )
    if not changes and not differs:
        return Change(what, "unchanged")
    reported = (*changes, "password") if differs else tuple(changes)
    if plan.password is not None:
        # Given in the file: sent with a move or a TLS change too, as the API needs it.
        changes["password"] = plan.password
    inventory.update_instance(session, box, found, changes, allowed, ca_dir=ca_dir)
    return Change(what, "changed", reported)
