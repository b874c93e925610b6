"""A rule's alerts reset when the rule is edited or deleted: its states dropped, and each firing
it had notified resolved with a note saying why, so no receiver is left holding an alert the
rule can no longer resolve.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from lagscope.alerts.context import build_context
from lagscope.alerts.payloads import Note, context_to_json
from lagscope.alerts.readings import Subject, at_datetime
from lagscope.alerts.state import Observation
from lagscope.errors import Conflict
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
    now_s = datetime.now(UTC).timestamp()
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
