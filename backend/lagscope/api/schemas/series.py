"""Series: the query (one metric, some channels or instances, a range, a point budget) and the
buckets that answer it. Times in epoch milliseconds; values in the metric's units.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from lagscope.analysis.buckets import Resolution
from lagscope.api.schemas.common import Schema, within_calendar
from lagscope.history.series import MAX_POINTS, MAX_RANGE, MAX_SERIES
from lagscope.metrics_catalog import SERIES_NAMES

if TYPE_CHECKING:
    MetricName = str
else:
    # The series whitelist, per channel then per instance: generated from the metric catalog
    # (Literal of a tuple is the Literal of its members), so the OpenAPI enum follows it.
    MetricName = Literal[SERIES_NAMES]
DEFAULT_RANGE = timedelta(hours=1)
_EPOCH_MS = re.compile(r"-?\d{1,15}")


def _instant(value: Any) -> Any:
    """Epoch milliseconds (digits only) or ISO-8601 with an offset; a naive time is refused."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        if _EPOCH_MS.fullmatch(text):
            return datetime.fromtimestamp(int(text) / 1000, UTC)
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            raise ValueError("give an offset (e.g. Z or +08:00) or epoch milliseconds")
        return moment.astimezone(UTC)
    except (OverflowError, OSError) as exc:  # out of datetime's range: still the caller's error
        raise ValueError(f"out of range: {text[:40]}") from exc


Instant = Annotated[
    datetime,
    BeforeValidator(_instant),
    AfterValidator(within_calendar),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "format": "date-time"},
                {"type": "integer", "description": "epoch milliseconds"},
            ]
        }
    ),
]
# Ids are 32-bit INTEGER columns; a larger one could not even be bound as a parameter.
Ids = Annotated[list[Annotated[int, Field(ge=1, le=2**31 - 1)]], Field(max_length=MAX_SERIES)]


class SeriesQuery(Schema):
    """Query parameters of ``GET /series``; unknown parameters are refused (a typo is a 422)."""

    metric: Annotated[list[MetricName], Field(min_length=1, max_length=len(SERIES_NAMES))] = Field(
        description="repeatable: several metrics of the same channels or instances in one "
        "request (at most 200,000 points in all, series × points)"
    )
    channel_id: Ids = Field(default_factory=list, description="repeatable")
    instance_id: Ids = Field(
        default_factory=list,
        description="repeatable; for a channel metric, stands for all the instance's channels",
    )
    start: Instant | None = Field(default=None, description="default: end − 1 hour")
    end: Instant | None = Field(default=None, validate_default=True, description="default: now")
    points: Annotated[int, Field(ge=1, le=MAX_POINTS)] = 500

    @field_validator("end")
    @classmethod
    def _after_start(cls, end: datetime | None, info: ValidationInfo) -> datetime:
        # Checked here rather than in a model validator so the 422 names the field "end".
        end = end or datetime.now(UTC)
        start = info.data.get("start")
        if start is not None and not start < end:
            raise ValueError("must be after start")
        if start is not None and end - start > MAX_RANGE:
            raise ValueError(f"the range may span {MAX_RANGE.days} days at most")
        return end

    @model_validator(mode="after")
    def _default_start(self) -> SeriesQuery:
        if self.start is None and self.end is not None:
            self.start = self.end - DEFAULT_RANGE
        return self


class SeriesPoint(Schema):
    t: int = Field(description="bucket start, epoch milliseconds")
    min: float | None
    avg: float | None
    max: float | None
    last: float | None = Field(default=None, description="the newest value in the bucket")
    n: int = Field(description="samples the bucket summarises")


class SeriesOut(Schema):
    channel_id: int | None = Field(description="null for an instance metric")
    instance_id: int
    metric: MetricName
    resolution: Resolution = Field(
        description="the table the buckets were read from; the newest part that table does not "
        "have yet (the rollup job runs behind the clock) is read from finer tables"
    )
    bucket_ms: int
    points: list[SeriesPoint] = Field(description="oldest first; empty buckets are left out")
    note: str | None = Field(
        default=None, description="what this metric's tables do not keep (e.g. no rollups)"
    )


class SeriesResponse(Schema):
    """At most ``points`` buckets per series; min and max survive bucketing."""

    metric: MetricName = Field(description="the first metric asked (the only one, usually)")
    metrics: list[MetricName] = Field(
        default_factory=list,
        description="every metric asked, in order (always given); each series names its own",
    )
    start: int = Field(description="epoch milliseconds")
    end: int = Field(description="epoch milliseconds")
    series: list[SeriesOut] = Field(description="per metric (in the order asked), per key")
