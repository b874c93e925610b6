"""Comparisons (two windows of a channel, or two channels over one window): the query and the
answer. Windows follow api/schemas/window.py."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from fastapi import Query
from pydantic import Field

from lagscope.analysis.backlog import Backlog, Cause, NetworkAnswer
from lagscope.api.schemas.common import QueryId, Schema
from lagscope.api.schemas.journal import (
    ChannelRef,
    ImpactOut,
    SpanOut,
    WindowStatsOut,
    channel_ref,
    impact_out,
    stats_out,
)
from lagscope.api.schemas.window import Instant, check_window, invalid
from lagscope.journal.compare import Comparison, Side

_MIN_SAMPLES = "two windows: lag samples each window needs for a verdict"


class BacklogOut(Schema):
    """Outstanding work: ``not_received`` (network / relay-log writes) and
    ``received_not_applied`` (apply), in GTIDs (binlog bytes without GTIDs)."""

    samples: int
    not_received_mean: float | None
    not_received_p95: float | None
    received_not_applied_mean: float | None
    received_not_applied_p95: float | None
    dominant: Cause | None


def backlog_out(backlog: Backlog) -> BacklogOut:
    return BacklogOut.model_validate(backlog)


class CompareSideOut(Schema):
    channel: ChannelRef
    window: SpanOut
    stats: WindowStatsOut
    backlog: BacklogOut


class CompareOut(Schema):
    """``windows``: ``b`` judged against ``a`` (``impact``). ``channels``: which one lags more
    (``lagging``) and why (``cause``); both say it in one sentence (``conclusion``)."""

    mode: Literal["windows", "channels"]
    a: CompareSideOut
    b: CompareSideOut
    conclusion: str
    impact: ImpactOut | None
    lagging: Literal["a", "b"] | None
    cause: Cause | None
    network: NetworkAnswer | None = Field(
        default=None,
        description="channels: is the one further behind behind because of the network? yes; "
        "no (apply, or a limit both share upstream); not_measurably_different (the two lag "
        "alike: the gap is within noise, lagging is null). null: neither is behind, or windows",
    )


def _side_out(side: Side) -> CompareSideOut:
    return CompareSideOut(
        channel=channel_ref(side.channel, side.instance),
        window=SpanOut(start=side.start, end=side.end),
        stats=stats_out(side.stats),
        backlog=backlog_out(side.backlog),
    )


def compare_out(comparison: Comparison) -> CompareOut:
    return CompareOut(
        mode=comparison.mode,
        a=_side_out(comparison.a),
        b=_side_out(comparison.b),
        conclusion=comparison.conclusion,
        impact=impact_out(comparison.impact) if comparison.impact else None,
        lagging=comparison.lagging,
        cause=comparison.cause,
        network=comparison.network,
    )


@dataclass(frozen=True, slots=True)
class CompareQuery:
    """Either two windows of one channel or two channels over one window (``other`` set)."""

    channel_id: int
    other_channel_id: int | None
    a: tuple[datetime, datetime]
    b: tuple[datetime, datetime]
    min_samples: int


def compare_query(
    channel_id: QueryId,
    other_channel_id: QueryId | None = None,
    start: Instant = None,
    end: Instant = None,
    a_start: Instant = None,
    a_end: Instant = None,
    b_start: Instant = None,
    b_end: Instant = None,
    min_samples: Annotated[int, Query(ge=1, le=100_000, description=_MIN_SAMPLES)] = 10,
) -> CompareQuery:
    """Which comparison the parameters ask for; a missing or stray field is a 422 naming it."""
    windows = {"a_start": a_start, "a_end": a_end, "b_start": b_start, "b_end": b_end}
    if other_channel_id is not None:
        stray = next((k for k, v in windows.items() if v is not None), None)
        if stray:
            raise invalid(stray, "not used when comparing two channels (other_channel_id)")
        if start is None or end is None:
            raise invalid("start" if start is None else "end", "required with other_channel_id")
        window = check_window(start, end)
        return CompareQuery(channel_id, other_channel_id, window, window, min_samples)
    if start is not None or end is not None:
        field = "start" if start is not None else "end"
        raise invalid(field, "only with other_channel_id; two windows use a_start … b_end")
    missing = next((k for k, v in windows.items() if v is None), None)
    if missing or a_start is None or a_end is None or b_start is None or b_end is None:
        raise invalid(missing or "a_start", "required to compare two windows of one channel")
    a = check_window(a_start, a_end, "a_start", "a_end")
    b = check_window(b_start, b_end, "b_start", "b_end")
    return CompareQuery(channel_id, None, a, b, min_samples)
