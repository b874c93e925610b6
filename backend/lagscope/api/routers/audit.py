"""Route: the audit trail (admins only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from lagscope.api.deps import AdminDep, SessionDep
from lagscope.api.schemas.audit import AuditEventsOut
from lagscope.api.schemas.common import QueryId
from lagscope.api.schemas.window import Instant
from lagscope.history import audit as service

router = APIRouter(tags=["audit"])


@router.get("/audit", response_model=AuditEventsOut)
def list_audit_events(
    _: AdminDep,
    session: SessionDep,
    actor: Annotated[str | None, Query(max_length=128)] = None,
    kind: Annotated[str | None, Query(max_length=32)] = None,
    action: Annotated[str | None, Query(max_length=16)] = None,
    object_id: QueryId | None = None,
    start: Instant = None,
    end: Instant = None,
    before_id: QueryId | None = None,
    limit: Annotated[int, Query(ge=1, le=service.MAX_EVENTS)] = 100,
) -> AuditEventsOut:
    """Changes made through the API or the CLI, newest first: who, when, from where, what
    changed (secrets never with their values)."""
    where = service.AuditFilter(actor, kind, action, object_id, start, end, before_id)
    found = service.list_events(session, where, limit)
    following = found[-1].id if len(found) == limit else None
    return AuditEventsOut.model_validate({"events": found, "next_before_id": following})
