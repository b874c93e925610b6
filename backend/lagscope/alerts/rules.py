"""Alert rules as the API edits them (targets, silences and the read side: targets.py,
silences.py, activity.py).

A rule's scope must be consistent (an instance in the named cluster, a channel on the named
instance) and its targets must exist. Editing or deleting a rule resets its alerts, each
resolved with a note saying why (:mod:`lagscope.alerts.rule_reset`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.alerts.readings import METRICS
from lagscope.alerts.rule_reset import reset_states
from lagscope.errors import Conflict, InvalidInput, NotFound
from lagscope.models import (
    AlertRule,
    Channel,
    Cluster,
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
