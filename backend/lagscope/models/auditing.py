"""Records :class:`~lagscope.models.audit.AuditEvent` rows for ORM changes made by a session
that says who is changing things (``session.info[AUDIT]``, set by the API for an authenticated
request) or in a process that said so once (:func:`act_as`, the CLI's admin commands).

Polling, the heartbeat writer and the other background jobs say nothing and so are not
recorded: what they write is bookkeeping, not an operator's change. Only the catalog's models
are recorded, and of each only the fields an operator sets; a secret field is recorded as set,
replaced or cleared, never with its value, and a webhook URL (Slack's carries its secret in the
path) by its scheme and host only. The rows are written by the mappers' after-insert, -update
and -delete events on the flush's own connection, so they commit or roll back with the change."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Connection, event, insert, inspect, update
from sqlalchemy.orm import Session, object_session

from lagscope.models.alerts import AlertRule, Silence, WebhookTarget
from lagscope.models.annotations import Annotation
from lagscope.models.audit import AuditEvent
from lagscope.models.check_tokens import CheckToken, CheckTokenCluster
from lagscope.models.inventory import Cluster, Instance
from lagscope.models.users import ApiToken, User

AUDIT = "lagscope.audit"  # the session.info key


@dataclass(frozen=True, slots=True)
class Who:
    actor: str
    source: str
    via: str


@dataclass(frozen=True, slots=True)
class Audited:
    kind: str
    name_field: str | None = None
    # The fields recorded; None: every column but ``ignored``.
    only: frozenset[str] | None = None
    ignored: frozenset[str] = frozenset({"id", "created_at", "updated_at"})
    secrets: frozenset[str] = frozenset()
    urls: frozenset[str] = frozenset()
    # Rows of the model this says nothing about (a login's session token).
    skip: Any = field(default=None)

    def fields(self, model: Any) -> Iterator[str]:
        for column in model.__table__.columns:
            name = column.key
            chosen = name not in self.ignored if self.only is None else name in self.only
            if chosen or name in self.secrets:
                yield name


# What an operator sets; the rest of these rows is what polling keeps.
_CLUSTER_FIELDS = frozenset(
    {"name", "poll_interval_s", "extra_params", "heartbeat_mode", "heartbeat_schema",
     "heartbeat_table", "heartbeat_interval_s", "heartbeat_user", "enabled"}
)  # fmt: skip
_INSTANCE_FIELDS = frozenset(
    {"cluster_id", "name", "host", "port", "user", "region", "role", "tls", "tls_ca_path",
     "server_public_key_path", "enabled"}
)  # fmt: skip

CATALOG: dict[type, Audited] = {
    Cluster: Audited(
        "cluster",
        "name",
        only=_CLUSTER_FIELDS,
        secrets=frozenset({"heartbeat_password_enc"}),
    ),
    Instance: Audited(
        "instance",
        "name",
        only=_INSTANCE_FIELDS,
        secrets=frozenset({"password_enc"}),
    ),
    AlertRule: Audited("alert_rule", "name"),
    Silence: Audited("silence"),
    WebhookTarget: Audited(
        "webhook_target", "name", secrets=frozenset({"secret_enc"}), urls=frozenset({"url"})
    ),
    User: Audited(
        "user",
        "username",
        only=frozenset({"username", "role", "disabled"}),
        secrets=frozenset({"password_hash"}),
    ),
    ApiToken: Audited(
        "api_token",
        "name",
        only=frozenset({"user_id", "name", "kind", "expires_at"}),
        secrets=frozenset({"token_hash"}),
        skip=lambda token: token.kind == "session",  # a login, not a change
    ),
    CheckToken: Audited(
        "check_token",
        "name",
        ignored=frozenset({"id", "created_at", "last_used_at"}),
        secrets=frozenset({"token_hash"}),
    ),
    CheckTokenCluster: Audited("check_token_cluster", ignored=frozenset()),
    Annotation: Audited("annotation"),
}

_process_who: Who | None = None


def act_as(who: Who | None) -> None:
    """Every change this process makes from now on is recorded as ``who``'s (the CLI)."""
    global _process_who
    _process_who = who


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, (str, int, float, bool, list, dict)) or value is None:
        return value
    return str(value)


def _origin(url: Any) -> Any:
    if not isinstance(url, str) or not url:
        return url
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}/…"


def _shown(audited: Audited, name: str, value: Any) -> Any:
    return _origin(value) if name in audited.urls else _plain(value)


def changes(audited: Audited, obj: Any, action: str) -> dict[str, Any]:
    """What the flush does to ``obj``'s recorded fields."""
    state = inspect(obj)
    found: dict[str, Any] = {}
    for name in audited.fields(type(obj)):
        history = state.attrs[name].history
        if action == "create":
            value = getattr(obj, name)
            if name in audited.secrets:
                if value:
                    found[name] = "set"
            elif value is not None and value != "" and value != [] and value != {}:
                found[name] = [None, _shown(audited, name, value)]
        elif action == "delete":
            if name not in audited.secrets:
                value = getattr(obj, name)
                if value is not None:
                    found[name] = [_shown(audited, name, value), None]
        elif history.has_changes():
            before = history.deleted[0] if history.deleted else None
            after = history.added[0] if history.added else None
            if before == after:
                continue
            if name in audited.secrets:
                found[name] = "replaced" if after else "cleared"
            else:
                found[name] = [_shown(audited, name, before), _shown(audited, name, after)]
    return found


def _row(who: Who, at: datetime, action: str, obj: Any) -> dict[str, Any] | None:
    audited = CATALOG.get(type(obj))
    if audited is None or (audited.skip is not None and audited.skip(obj)):
        return None
    found = changes(audited, obj, action)
    if action == "update" and not found:
        return None  # only bookkeeping changed
    name = getattr(obj, audited.name_field, "") if audited.name_field else ""
    object_id = getattr(obj, "id", None)
    return {
        "at": at,
        "actor": who.actor[:128],
        "source": who.source[:255],
        "via": who.via[:255],
        "action": action,
        "kind": audited.kind,
        "object_id": object_id if isinstance(object_id, int) else None,
        "object_name": str(name or "")[:255],
        "changes": found,
    }


def merged(first: str, earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """One entry for two flushes of the same object in one transaction (a cluster made, then
    given its encrypted password once it has an id): the first's before, the later's after."""
    out = dict(earlier)
    for name, change in later.items():
        before = out.get(name)
        if isinstance(change, str):  # a secret
            if change == "cleared" and before == "set" and first == "create":
                out.pop(name)  # set and cleared before anyone saw it
            else:
                out[name] = "set" if first == "create" and change != "cleared" else change
        elif isinstance(before, list):
            out[name] = [before[0], change[1]]
        else:
            out[name] = change
    return {
        name: change
        for name, change in out.items()
        if not (isinstance(change, list) and first == "update" and change[0] == change[1])
    }


_WRITTEN = "lagscope.audit.written"  # {(kind, id): (row id, action, changes)}, per transaction


def _record(action: str, connection: Connection, obj: Any) -> None:
    """Mapper events, not the session's lists: a row deleted as an orphan (an instance taken
    out of its cluster's list) is in no list before the flush."""
    session = object_session(obj)
    who = (session.info.get(AUDIT) if session is not None else None) or _process_who
    if who is None:
        return
    row = _row(who, datetime.now(UTC), action, obj)
    if row is None:
        return
    written = session.info.setdefault(_WRITTEN, {}) if session is not None else {}
    key = (row["kind"], row["object_id"])
    earlier = written.get(key) if row["object_id"] is not None else None
    if earlier is not None and action == "update":
        row_id, first, changes_before = earlier
        both = merged(first, changes_before, row["changes"])
        connection.execute(update(AuditEvent).where(AuditEvent.id == row_id).values(changes=both))
        written[key] = (row_id, first, both)
        return
    result = connection.execute(insert(AuditEvent), [row])
    (row_id,) = result.inserted_primary_key or (None,)
    if row_id is not None:
        written[key] = (row_id, action, row["changes"])


for _model in CATALOG:
    for _event, _action in (
        ("after_insert", "create"),
        ("after_update", "update"),
        ("after_delete", "delete"),
    ):
        event.listen(
            _model,
            _event,
            lambda _mapper, connection, obj, action=_action: _record(action, connection, obj),
        )


@event.listens_for(Session, "after_commit")
@event.listens_for(Session, "after_soft_rollback")
def _forget(session: Session, *_: Any) -> None:
    session.info.pop(_WRITTEN, None)
