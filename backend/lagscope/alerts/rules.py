"""Alert rules, silences and webhook targets as the API edits them, and the read side (firing,
history, delivery log).

A rule's scope must be consistent (an instance in the named cluster, a channel on the named
instance) and its targets must exist; webhook URLs must pass the destination allow-list; a
webhook secret goes in encrypted and never comes out (``has_secret`` only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from lagscope.alerts.context import build_context
from lagscope.alerts.delivery_policy import WebhookUrlError, validate_webhook_url
from lagscope.alerts.payloads import Note, context_to_json
from lagscope.alerts.readings import METRICS, Subject, at_datetime
from lagscope.alerts.state import Observation
from lagscope.errors import Conflict, InvalidInput, NotFound
from lagscope.models import (
    AlertEvent,
    AlertRule,
    AlertState,
    Channel,
    Cluster,
    Delivery,
    DeliveryAttempt,
    Instance,
    Silence,
    WebhookTarget,
)
from lagscope.security.secret_box import SecretBox

RULE_FIELDS = (
    "name",
    "metric",
    "threshold",
    "for_s",
    "resolve_threshold",
    "keep_firing_s",
    "repeat_s",
    "cluster_id",
    "instance_id",
    "channel_id",
    "region",
    "overrides",
    "severity",
    "labels",
    "target_ids",
    "null_policy",
    "params",
    "enabled",
)

# Column defaults apply only at INSERT; a rule is checked (and previewed) before that.
RULE_DEFAULTS: dict[str, Any] = {
    "threshold": 0.0,
    "for_s": 0.0,
    "keep_firing_s": 0.0,
    "overrides": [],
    "severity": "warning",
    "labels": {},
    "target_ids": [],
    "null_policy": "firing_if_broken",
    "params": {},
    "enabled": True,
}


def _now() -> datetime:
    return datetime.now(UTC)


def get_rule(session: Session, rule_id: int) -> AlertRule:
    rule = session.get(AlertRule, rule_id)
    if rule is None:
        raise NotFound(f"alert rule {rule_id} does not exist")
    return rule


def list_rules(session: Session) -> list[AlertRule]:
    return list(session.scalars(select(AlertRule).order_by(AlertRule.name)))


def rule_from(fields: Mapping[str, Any]) -> AlertRule:
    """An unsaved rule (for a preview before saving)."""
    now = _now()
    rule = AlertRule(created_at=now, updated_at=now, **RULE_DEFAULTS)
    for name in RULE_FIELDS:
        if fields.get(name) is not None:
            setattr(rule, name, fields[name])
    return rule


def edited(rule: AlertRule, changes: Mapping[str, Any]) -> AlertRule:
    """An unsaved copy of ``rule`` with ``changes`` (an explicit None clears a field)."""
    copy = rule_from({name: getattr(rule, name) for name in RULE_FIELDS})
    for name, value in changes.items():
        if name in RULE_FIELDS:
            setattr(copy, name, value)
    copy.id = rule.id
    return copy


def create_rule(session: Session, fields: Mapping[str, Any]) -> AlertRule:
    rule = rule_from(fields)
    check_rule(session, rule)
    session.add(rule)
    session.flush()
    return rule


SCOPE_FIELDS = frozenset({"metric", "cluster_id", "instance_id", "channel_id", "region"})


def update_rule(
    session: Session, rule: AlertRule, changes: Mapping[str, Any], author: str = ""
) -> AlertRule:
    before = {name: getattr(rule, name) for name in SCOPE_FIELDS | {"enabled"}}
    for name, value in changes.items():
        if name in RULE_FIELDS:
            setattr(rule, name, value)
    rule.updated_at = _now()
    with session.no_autoflush:  # checked before the store sees it (a missing channel: 422)
        check_rule(session, rule)
    rescoped = any(before[name] != getattr(rule, name) for name in SCOPE_FIELDS)
    if rescoped or (before["enabled"] and not rule.enabled):
        # A rule that now watches something else, or is switched off, starts from "ok"
        # everywhere; what it had notified as firing is resolved, once (receivers would
        # otherwise hold an alert open forever).
        why = "switched off" if not rule.enabled else "changed to watch something else"
        reset_states(session, rule, f"rule {why}", author, keep_events=True)
    session.flush()
    return rule


def delete_rule(session: Session, rule: AlertRule, author: str = "") -> None:
    """What it had notified as firing is resolved first; the resolved deliveries outlive the
    rule (its events go with it)."""
    reset_states(session, rule, "rule deleted", author, keep_events=False)
    session.delete(rule)
    session.flush()


def reset_states(
    session: Session, rule: AlertRule, why: str, author: str, keep_events: bool
) -> list[int]:
    """Drop the rule's states; for each whose firing was sent, record a "resolved" (as an event
    when the rule stays, as bare deliveries when it goes). Returns the delivery ids.

    The state rows are deleted compare-and-set on their version: if a worker judged one
    meanwhile (and maybe sent its resolved), this raises Conflict and nothing is written."""
    rule_id = rule.id
    states = list(session.scalars(select(AlertState).where(AlertState.rule_id == rule_id)))
    ids = [_resolve_for_reset(session, rule, s, why, author, keep_events) for s in states]
    try:
        for state in states:
            session.delete(state)
        session.flush()
    except StaleDataError as exc:
        raise Conflict("the rule's alerts changed meanwhile; try again") from exc
    return [d for group in ids for d in group]


def _resolve_for_reset(
    session: Session, rule: AlertRule, state: AlertState, why: str, author: str, keep: bool
) -> list[int]:
    if state.phase != "firing" or not state.notified:
        return []
    cluster = session.get(Cluster, state.cluster_id)
    instance = session.get(Instance, state.instance_id)
    if cluster is None or instance is None:
        return []
    channel = session.get(Channel, state.channel_id) if state.channel_id else None
    now_s = _now().timestamp()
    obs = Observation(at=now_s, value=state.value)
    starts = state.since.timestamp() if state.since else now_s
    key = f"lagscope-{rule.id}-{state.subject}-resolved-{round(now_s * 1e6)}"
    ctx = build_context(
        session,
        cluster,
        rule,
        Subject(state.subject, instance, channel),
        "resolved",
        obs,
        starts,
        key,
    )
    note = Note(
        now_s, f"Resolved because the {why}" + (f" by {author}" if author else ""), ("lagscope",)
    )
    context = context_to_json(replace(ctx, notes=(*ctx.notes, note)))
    event_id: int | None = None
    if keep:
        event = AlertEvent(
            rule_id=rule.id,
            cluster_id=cluster.id,
            instance_id=instance.id,
            channel_id=channel.id if channel else None,
            kind="resolved",
            at=at_datetime(now_s),
            starts_at=at_datetime(starts),
            value=state.value,
            suppressed_by=None,
            idempotency_key=key,
            context=context,
        )
        session.add(event)
        session.flush()
        event_id = event.id
    targets = session.scalars(
        select(WebhookTarget).where(
            WebhookTarget.id.in_(rule.target_ids or []), WebhookTarget.enabled.is_(True)
        )
    ).all()
    deliveries = [
        Delivery(
            event_id=event_id,
            target_id=t.id,
            kind="resolved",
            idempotency_key=key,
            context=context,
            status="pending",
            attempts=0,
            next_attempt_at=at_datetime(now_s),
            created_at=at_datetime(now_s),
            version=0,
        )
        for t in targets
    ]
    session.add_all(deliveries)
    session.flush()
    return [d.id for d in deliveries]


def check_rule(session: Session, rule: AlertRule) -> None:
    if rule.metric not in METRICS:
        raise InvalidInput(f"metric must be one of {', '.join(METRICS)}")
    clash = session.scalar(
        select(AlertRule.id).where(AlertRule.name == rule.name, AlertRule.id != (rule.id or 0))
    )
    if clash is not None:
        raise Conflict(f"an alert rule named {rule.name!r} exists already")
    _check_scope(session, rule)
    if rule.resolve_threshold is not None and rule.resolve_threshold > rule.threshold:
        raise InvalidInput("resolve_threshold must not be above threshold (hysteresis)")
    known = set(
        session.scalars(select(WebhookTarget.id).where(WebhookTarget.id.in_(rule.target_ids)))
    )
    missing = [t for t in rule.target_ids if t not in known]
    if missing:
        raise InvalidInput(f"webhook targets {missing} do not exist")
    for override in rule.overrides:
        _check_override(session, rule, override)


def _check_override(session: Session, rule: AlertRule, override: Mapping[str, Any]) -> None:
    """An override names a replica (or one of its channels) the rule can see."""
    if override.get("channel_id") is not None:
        channel = session.get(Channel, override["channel_id"])
        if channel is None:
            raise InvalidInput(f"override: channel {override['channel_id']} does not exist")
        if override.get("instance_id") not in (None, channel.instance_id):
            raise InvalidInput(
                f"override: channel {channel.id} is not on instance {override['instance_id']}"
            )
        instance_id: int | None = channel.instance_id
    else:
        instance_id = override.get("instance_id")
    instance = session.get(Instance, instance_id) if instance_id is not None else None
    if instance is None or (rule.cluster_id and instance.cluster_id != rule.cluster_id):
        raise InvalidInput(f"override: instance {instance_id} is not in scope")


def _check_scope(session: Session, rule: AlertRule) -> None:
    if rule.channel_id is not None:
        channel = session.get(Channel, rule.channel_id)
        if channel is None:
            raise InvalidInput(f"channel {rule.channel_id} does not exist")
        if rule.instance_id not in (None, channel.instance_id):
            raise InvalidInput("the channel is not on the rule's instance")
        rule.instance_id = channel.instance_id
    if rule.instance_id is not None:
        instance = session.get(Instance, rule.instance_id)
        if instance is None:
            raise InvalidInput(f"instance {rule.instance_id} does not exist")
        if rule.cluster_id not in (None, instance.cluster_id):
            raise InvalidInput("the instance is not in the rule's cluster")
        rule.cluster_id = instance.cluster_id
    if rule.cluster_id is not None and session.get(Cluster, rule.cluster_id) is None:
        raise InvalidInput(f"cluster {rule.cluster_id} does not exist")


# Webhook targets ---------------------------------------------------------------------------


def get_target(session: Session, target_id: int) -> WebhookTarget:
    target = session.get(WebhookTarget, target_id)
    if target is None:
        raise NotFound(f"webhook target {target_id} does not exist")
    return target


def list_targets(session: Session) -> list[WebhookTarget]:
    return list(session.scalars(select(WebhookTarget).order_by(WebhookTarget.name)))


def _url(url: str, allow: Sequence[str]) -> str:
    try:
        return validate_webhook_url(url, allow)
    except WebhookUrlError as exc:
        raise InvalidInput(str(exc)) from exc


def create_target(
    session: Session,
    box: SecretBox,
    allow: Sequence[str],
    name: str,
    kind: str,
    url: str,
    secret: str | None,
    enabled: bool = True,
) -> WebhookTarget:
    if session.scalar(select(WebhookTarget.id).where(WebhookTarget.name == name)) is not None:
        raise Conflict(f"a webhook target named {name!r} exists already")
    target = WebhookTarget(
        name=name,
        kind=kind,
        url=_url(url, allow),
        secret_enc=box.encrypt(secret) if secret else "",
        enabled=enabled,
        created_at=_now(),
    )
    session.add(target)
    session.flush()
    return target


def update_target(
    session: Session,
    box: SecretBox,
    allow: Sequence[str],
    target: WebhookTarget,
    changes: Mapping[str, Any],
) -> WebhookTarget:
    """``secret``: a new one replaces it, an empty string removes it; omitted keeps it."""
    if "name" in changes and changes["name"] != target.name:
        clash = session.scalar(
            select(WebhookTarget.id).where(WebhookTarget.name == changes["name"])
        )
        if clash is not None:
            raise Conflict(f"a webhook target named {changes['name']!r} exists already")
        target.name = changes["name"]
    if "url" in changes:
        url = _url(changes["url"], allow)
        if url != target.url and target.secret_enc and "secret" not in changes:
            # Signed deliveries to a new URL would hand its owner signatures the old receiver
            # accepts (over bodies an editor shapes): the secret stays with its receiver.
            raise InvalidInput(
                "changing the url of a signed target needs the secret again in the same "
                "request (the stored one only signs for the url it was entered for); give "
                '"secret": "" to send unsigned'
            )
        target.url = url
    if "kind" in changes:
        target.kind = changes["kind"]
    if "enabled" in changes:
        target.enabled = changes["enabled"]
    if "secret" in changes:
        target.secret_enc = box.encrypt(changes["secret"]) if changes["secret"] else ""
    session.flush()
    return target


def delete_target(session: Session, target: WebhookTarget) -> None:
    for rule in session.scalars(select(AlertRule)):
        if target.id in (rule.target_ids or []):
            rule.target_ids = [t for t in rule.target_ids if t != target.id]
    session.delete(target)
    session.flush()


# Silences ----------------------------------------------------------------------------------


def list_silences(session: Session, include_expired: bool = False) -> list[Silence]:
    query = select(Silence).order_by(Silence.ends_at.desc(), Silence.id.desc())
    if not include_expired:
        query = query.where(Silence.ends_at > _now())
    return list(session.scalars(query))


def create_silence(session: Session, fields: Mapping[str, Any], author: str) -> Silence:
    now = _now()
    starts_at = fields.get("starts_at") or now
    if fields["ends_at"] <= max(starts_at, now):
        raise InvalidInput("ends_at must be in the future and after starts_at")
    silence = Silence(
        rule_id=fields.get("rule_id"),
        cluster_id=fields.get("cluster_id"),
        instance_id=fields.get("instance_id"),
        channel_id=fields.get("channel_id"),
        region=fields.get("region"),
        starts_at=starts_at,
        ends_at=fields["ends_at"],
        reason=fields["reason"],
        author=author,
        created_at=now,
    )
    for column, model in (
        ("rule_id", AlertRule),
        ("cluster_id", Cluster),
        ("instance_id", Instance),
        ("channel_id", Channel),
    ):
        value = getattr(silence, column)
        if value is not None and session.get(model, value) is None:
            raise InvalidInput(f"{column} {value} does not exist")
    session.add(silence)
    session.flush()
    return silence


def expire_silence(session: Session, silence_id: int) -> Silence:
    """Ending a silence keeps it in the list of past ones (who muted what, and why)."""
    silence = session.get(Silence, silence_id)
    if silence is None:
        raise NotFound(f"silence {silence_id} does not exist")
    silence.ends_at = min(silence.ends_at, _now())
    session.flush()
    return silence


# Read side ---------------------------------------------------------------------------------


def firing(session: Session, cluster_id: int | None = None) -> list[tuple[AlertState, AlertRule]]:
    """Alerts pending or firing now (the overview's badges, the explorer's bands)."""
    query = (
        select(AlertState, AlertRule)
        .join(AlertRule, AlertRule.id == AlertState.rule_id)
        .outerjoin(Channel, Channel.id == AlertState.channel_id)
        .where(
            AlertState.phase.in_(("pending", "firing")),
            AlertRule.enabled.is_(True),
            # A channel that went away (RESET REPLICA ALL) is no longer judged: not "firing".
            or_(AlertState.channel_id.is_(None), Channel.gone_at.is_(None)),
        )
        .order_by(AlertState.since)
    )
    if cluster_id is not None:
        query = query.where(AlertState.cluster_id == cluster_id)
    return [(s, r) for s, r in session.execute(query).all()]


def list_events(
    session: Session,
    cluster_id: int | None = None,
    rule_id: int | None = None,
    before: datetime | None = None,
    limit: int = 100,
) -> list[AlertEvent]:
    query = select(AlertEvent).order_by(AlertEvent.at.desc(), AlertEvent.id.desc()).limit(limit)
    if cluster_id is not None:
        query = query.where(AlertEvent.cluster_id == cluster_id)
    if rule_id is not None:
        query = query.where(AlertEvent.rule_id == rule_id)
    if before is not None:
        query = query.where(AlertEvent.at < before)
    return list(session.scalars(query))


def list_deliveries(
    session: Session,
    target_id: int | None = None,
    event_id: int | None = None,
    status: str | None = None,
    limit: int = 100,
) -> list[tuple[Delivery, list[DeliveryAttempt]]]:
    query = select(Delivery).order_by(Delivery.id.desc()).limit(limit)
    if target_id is not None:
        query = query.where(Delivery.target_id == target_id)
    if event_id is not None:
        query = query.where(Delivery.event_id == event_id)
    if status is not None:
        query = query.where(Delivery.status == status)
    deliveries = list(session.scalars(query))
    attempts: dict[int, list[DeliveryAttempt]] = {d.id: [] for d in deliveries}
    if deliveries:
        rows = session.scalars(
            select(DeliveryAttempt)
            .where(DeliveryAttempt.delivery_id.in_(attempts))
            .order_by(DeliveryAttempt.number)
        )
        for row in rows:
            attempts[row.delivery_id].append(row)
    return [(d, attempts[d.id]) for d in deliveries]


def delivery_log(session: Session, delivery_id: int) -> list[DeliveryAttempt]:
    return list(
        session.scalars(
            select(DeliveryAttempt)
            .where(DeliveryAttempt.delivery_id == delivery_id)
            .order_by(DeliveryAttempt.number)
        )
    )
