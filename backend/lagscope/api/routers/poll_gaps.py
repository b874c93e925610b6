"""Route: a cluster's missed ticks (no tick is lost silently)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from lagscope.api.deps import PrincipalDep, SessionDep
from lagscope.api.routers.episodes import causes_window
from lagscope.api.schemas.common import PathId
from lagscope.api.schemas.poll_gaps import PollGapsOut
from lagscope.api.schemas.window import TimeRange
from lagscope.history import poll_gaps as service

router = APIRouter(tags=["status"])


@router.get("/clusters/{cluster_id}/poll-gaps", response_model=PollGapsOut)
def list_poll_gaps(
    cluster_id: PathId,
    window: Annotated[TimeRange, Depends(causes_window)],
    _: PrincipalDep,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=service.MAX_GAPS)] = 100,
) -> PollGapsOut:
    """Holes in the cluster's polling overlapping ``[from, to)`` (default: the last 24 hours),
    newest first, each with why no tick was recorded."""
    found = service.list_poll_gaps(session, cluster_id, window.start, window.end, limit)
    return PollGapsOut.model_validate({"gaps": found})
