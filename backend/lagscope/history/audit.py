"""The audit trail read back (models/auditing.py writes it): newest first, filtered, paged by
id so a page never repeats or skips an entry written meanwhile."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.errors import InvalidInput
from lagscope.models import AuditEvent

MAX_EVENTS = 1000
ACTIONS = ("create", "update", "delete")


@dataclass(frozen=True, slots=True)
class AuditFilter:
    actor: str | None = None
    kind: str | None = None
    action: str | None = None
    object_id: int | None = None
    start: datetime | None = None
    end: datetime | None = None
    before_id: int | None = None


def list_events(session: Session, where: AuditFilter, limit: int = 100) -> Sequence[AuditEvent]:
    if not 1 <= limit <= MAX_EVENTS:
        raise InvalidInput(f"limit: must be between 1 and {MAX_EVENTS}")
    if where.action is not None and where.action not in ACTIONS:
        raise InvalidInput(f"action: must be one of {', '.join(ACTIONS)}")
    if where.start is not None and where.end is not None and not where.start < where.end:
        raise InvalidInput("end: must be after start")
    query = select(AuditEvent).order_by(AuditEvent.id.desc()).limit(limit)
    if where.actor is not None:
        query = query.where(AuditEvent.actor == where.actor)
    if where.kind is not None:
        query = query.where(AuditEvent.kind == where.kind)
    if where.action is not None:
        query = query.where(AuditEvent.action == where.action)
    if where.object_id is not None:
        query = query.where(AuditEvent.object_id == where.object_id)
    if where.start is not None:
        query = query.where(AuditEvent.at >= where.start)
    if where.end is not None:
        query = query.where(AuditEvent.at < where.end)
    if where.before_id is not None:
        query = query.where(AuditEvent.id < where.before_id)
    return session.scalars(query).all()
