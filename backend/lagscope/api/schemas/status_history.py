"""Status over a range of time: the explorer's verdict band (what each channel was doing, and
why a lag line has a gap) and the fleet's sparklines (each channel's recent lag on one grid).

Apart from the live views (api/schemas/status.py), which describe one moment.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import Field

from lagscope.api.schemas.common import Schema
from lagscope.api.schemas.status import VerdictLabel
from lagscope.history.verdicts import ChannelRuns
from lagscope.models.types import to_micros


class SparklineOut(Schema):
    channel_id: int
    values: list[float | None] = Field(
        description="the bucket averages, oldest first: value k covers [origin + k·bucket_ms, "
        "origin + (k+1)·bucket_ms); null: nothing polled then"
    )


class SparklinesOut(Schema):
    """Every current channel's best lag (``lag_s``) over the last minutes, on one time grid."""

    metric: Literal["lag_s"]
    start: int = Field(description="epoch milliseconds")
    end: int = Field(description="epoch milliseconds")
    origin: int = Field(description="the first bucket's start, epoch milliseconds")
    bucket_ms: int
    lines: list[SparklineOut]


class VerdictRunOut(Schema):
    start: int = Field(description="epoch milliseconds")
    end: int = Field(description="epoch milliseconds (exclusive)")
    verdict: VerdictLabel


class ChannelVerdictsOut(Schema):
    channel_id: int
    instance_id: int
    resolution: Literal["raw", "1m", "1h"]
    bucket_ms: int
    runs: list[VerdictRunOut] = Field(
        description="time order; a bucket's verdict is its most common (ties: the more severe); "
        "no run where nothing was polled"
    )


class VerdictsOut(Schema):
    """What each channel was doing over the range: the explorer's verdict band, and the reason
    behind a gap in a lag line (stopped, broken, unreachable)."""

    cluster_id: int
    start: int = Field(description="epoch milliseconds")
    end: int = Field(description="epoch milliseconds")
    channels: list[ChannelVerdictsOut]


def verdicts_out(
    cluster_id: int, start: datetime, end: datetime, found: Sequence[ChannelRuns]
) -> VerdictsOut:
    return VerdictsOut.model_validate(
        {
            "cluster_id": cluster_id,
            "start": to_micros(start) // 1000,
            "end": to_micros(end) // 1000,
            "channels": [
                {
                    "channel_id": c.channel_id,
                    "instance_id": c.instance_id,
                    "resolution": c.resolution,
                    "bucket_ms": c.bucket_ms,
                    "runs": [
                        {"start": r.start_ms, "end": r.end_ms, "verdict": r.verdict.label}
                        for r in c.runs
                    ],
                }
                for c in found
            ],
        }
    )
