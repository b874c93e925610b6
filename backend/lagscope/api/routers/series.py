"""Routes: ``GET /series`` — metrics of channels or instances over a range, in buckets."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response
from pydantic_core import to_json

from lagscope.api.deps import PrincipalDep, RawSeriesDep, SessionDep, SettingsDep
from lagscope.api.schemas.series import SeriesQuery, SeriesResponse
from lagscope.history import series
from lagscope.models.types import to_micros

router = APIRouter(tags=["series"])


@router.get("/series", response_model=SeriesResponse)
def get_series(
    query: Annotated[SeriesQuery, Query()],
    _: PrincipalDep,
    session: SessionDep,
    settings: SettingsDep,
    raw: RawSeriesDep,
) -> Response:
    """One or several metrics (``metric`` repeated: the explorer's strips in one request) of
    the same channels or instances. At most ``points`` buckets per series with min/avg/max (a
    spike survives as a max), read from the coarsest table that still gives that many: raw
    samples, 1-minute or 1-hour rollups.

    The answer is serialized straight from the service's typed results (``SeriesResponse`` is
    its documented shape): validating 10,000 points again would add ~15 ms to every chart."""
    assert query.start is not None and query.end is not None  # SeriesQuery fills them in
    metrics = list(dict.fromkeys(query.metric))
    found = series.query_metrics(
        session,
        metrics,
        query.start,
        query.end,
        channel_ids=query.channel_id,
        instance_ids=query.instance_id,
        points=query.points,
        retention=settings.explorer_retention(),
        raw=raw,
    )
    body = {
        "metric": metrics[0],
        "metrics": metrics,
        "start": to_micros(query.start) // 1000,
        "end": to_micros(query.end) // 1000,
        "series": found,
    }
    return Response(to_json(body), media_type="application/json")
