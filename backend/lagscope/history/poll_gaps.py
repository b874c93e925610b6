"""A cluster's missed ticks over a window, newest first (API: /clusters/{id}/poll-gaps)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.inventory.instances import get_cluster
from lagscope.models import PollGap

MAX_GAPS = 1000


def list_poll_gaps(
    session: Session, cluster_id: int, start: datetime, end: datetime, limit: int = MAX_GAPS
) -> list[dict[str, Any]]:
    """Gaps overlapping ``[start, end)``."""
    get_cluster(session, cluster_id)
    rows = session.scalars(
        select(PollGap)
        .where(PollGap.cluster_id == cluster_id, PollGap.ended_at > start, PollGap.started_at < end)
        .order_by(PollGap.ended_at.desc())
        .limit(limit)
    )
    return [
        {
            "started_at": gap.started_at,
            "ended_at": gap.ended_at,
            "missed": gap.missed,
            "reason": gap.reason,
            "detail": gap.detail,
        }
        for gap in rows
    ]
