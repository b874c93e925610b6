"""Retention of what holds text from monitored servers: ended lag episodes with their cause
segments, alert events with their deliveries and attempts (docs/security.md, "What Lagscope
stores from your servers").

Ongoing episodes (and the one a channel points at) stay, however old their start; pending
deliveries stay until sent or given up, and so does the event they carry. Children are deleted
before their parents, so SQLite without foreign keys enforced leaves no orphan either.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from lagscope.models import Channel
from lagscope.models.alerts import AlertEvent, Delivery, DeliveryAttempt
from lagscope.models.episodes import Episode, EpisodeCause


def _at(epoch_s: float) -> datetime:
    return datetime.fromtimestamp(epoch_s, UTC)


def purge_episodes(session: Session, cutoff_s: float) -> dict[str, int]:
    """Episodes that ended before ``cutoff_s``, and their cause segments."""
    current = select(Channel.episode_id).where(Channel.episode_id.is_not(None))
    old = (
        select(Episode.id)
        .where(Episode.ended_at.is_not(None), Episode.ended_at < _at(cutoff_s))
        .where(Episode.id.not_in(current))
    )
    causes = session.execute(delete(EpisodeCause).where(EpisodeCause.episode_id.in_(old)))
    episodes = session.execute(delete(Episode).where(Episode.id.in_(old)))
    return {
        "episode_causes": int(getattr(causes, "rowcount", 0) or 0),
        "episodes": int(getattr(episodes, "rowcount", 0) or 0),
    }


def purge_alert_history(session: Session, cutoff_s: float) -> dict[str, int]:
    """Finished deliveries created before ``cutoff_s`` (their attempts first), then the events
    before it that no delivery still carries."""
    cutoff = _at(cutoff_s)
    old = select(Delivery.id).where(Delivery.created_at < cutoff, Delivery.status != "pending")
    attempts = session.execute(delete(DeliveryAttempt).where(DeliveryAttempt.delivery_id.in_(old)))
    deliveries = session.execute(delete(Delivery).where(Delivery.id.in_(old)))
    carried = select(Delivery.event_id).where(Delivery.event_id.is_not(None))
    events = session.execute(
        delete(AlertEvent).where(AlertEvent.at < cutoff, AlertEvent.id.not_in(carried))
    )
    return {
        "alert_delivery_attempts": int(getattr(attempts, "rowcount", 0) or 0),
        "alert_deliveries": int(getattr(deliveries, "rowcount", 0) or 0),
        "alert_events": int(getattr(events, "rowcount", 0) or 0),
    }
