"""Routes outside /api/v1: liveness and the Prometheus exposition."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import text

from lagscope.api.deps import SessionDep

router = APIRouter(tags=["root"])


@router.get("/healthz", operation_id="healthz")
def healthz(session: SessionDep) -> dict[str, str]:
    """Liveness and store reachability; needs no authentication."""
    session.execute(text("SELECT 1"))
    return {"status": "ok"}
