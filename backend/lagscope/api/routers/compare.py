"""Routes: compare one channel in two windows, or two channels over one window."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from lagscope.api.deps import PrincipalDep, RawSeriesDep, SessionDep
from lagscope.api.schemas.compare import CompareOut, CompareQuery, compare_out, compare_query
from lagscope.journal import compare as comparing

router = APIRouter(tags=["compare"])


@router.get("/compare", response_model=CompareOut)
def compare(
    query: Annotated[CompareQuery, Depends(compare_query)],
    _: PrincipalDep,
    session: SessionDep,
    raw: RawSeriesDep,
) -> CompareOut:
    """Two windows of ``channel_id`` (``a_start``, ``a_end``, ``b_start``, ``b_end``: the impact
    verdict of b against a), or ``channel_id`` against ``other_channel_id`` over ``start``–``end``
    (the backlog decomposition, and whether the one behind lags on not_received or
    received_not_applied)."""
    if query.other_channel_id is None:
        result = comparing.compare_windows(
            session, query.channel_id, query.a, query.b, query.min_samples, raw=raw
        )
    else:
        result = comparing.compare_channels(
            session, query.channel_id, query.other_channel_id, *query.a, raw=raw
        )
    return compare_out(result)
