"""The alerts' read side: what is firing, the event history and the delivery log."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from lagscope.models import (
    AlertEvent,
    AlertRule,
    AlertState,
    Channel,
    Delivery,
    DeliveryAttempt,
)


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
