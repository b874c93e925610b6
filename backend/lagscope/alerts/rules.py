"""Alert rules as the API edits them (targets, silences and the read side: targets.py,
silences.py, activity.py).

A rule's scope must be consistent (an instance in the named cluster, a channel on the named
instance) and its targets must exist. Editing or deleting a rule resets its alerts, each
resolved with a note saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from lagscope.alerts.context import build_context
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
    Instance,
    WebhookTarget,
)

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
    return _send_resolved(session, rule, event_id, key, context, now_s)


def _send_resolved(
    session: Session,
    rule: AlertRule,
    event_id: int | None,
    key: str,
    context: dict[str, Any],
    now_s: float,
) -> list[int]:
    """The resolved notification queued for each of the rule's enabled targets."""
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
