"""The fleet overview's sparklines: every current channel's lag over the last minutes, in one
answer, as a dense row of bucket averages per channel (``None``: nothing polled in the bucket).

A hundred clusters' cards must not ask for their lines one by one; and a row of numbers on a
shared time grid is ~6 bytes per bucket where a bucket object would be ~90 (400 channels × 60
buckets every 10 s). The buckets are the series service's own (history/series.py), read in
groups of at most ``MAX_SERIES`` channels, one query per group.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.analysis.buckets import plan_buckets
from lagscope.config import Retention
from lagscope.history.series import MAX_SERIES, query_series
from lagscope.models import Channel
from lagscope.models.types import to_micros


@dataclass(frozen=True, slots=True)
class Sparkline:
    channel_id: int
    values: list[float | None]  # bucket k starts at origin + k·bucket


@dataclass(frozen=True, slots=True)
class Sparklines:
    metric: str
    start: datetime
    end: datetime
    origin_ms: int  # the first bucket's start (aligned on the epoch, at or before ``start``)
    bucket_ms: int
    lines: list[Sparkline]


def lag_sparklines(
    session: Session,
    end: datetime,
    span: timedelta,
    points: int,
    retention: Retention | None = None,
) -> Sparklines:
    """The best lag (``lag_s``) of every channel not gone, over [end − span, end)."""
    start = end - span
    channel_ids = list(
        session.scalars(select(Channel.id).where(Channel.gone_at.is_(None)).order_by(Channel.id))
    )
    found = []
    for at in range(0, len(channel_ids), MAX_SERIES):
        group = channel_ids[at : at + MAX_SERIES]
        found += query_series(
            session, "lag_s", start, end, channel_ids=group, points=points,
            retention=retention, now=end,
        )  # fmt: skip
    resolution = found[0].resolution if found else "raw"
    plan = plan_buckets(to_micros(start), to_micros(end), points, resolution)
    size = plan.max_buckets
    lines = []
    for series in found:
        values: list[float | None] = [None] * size
        for point in series.points:
            k = (point["t"] * 1000 - plan.origin_us) // plan.width_us
            if 0 <= k < size:
                avg = point["avg"]
                values[k] = None if avg is None else round(avg, 3)
        assert series.channel_id is not None  # lag_s is per channel
        lines.append(Sparkline(series.channel_id, values))
    return Sparklines("lag_s", start, end, plan.origin_us // 1000, plan.width_us // 1000, lines)
