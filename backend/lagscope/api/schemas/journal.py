"""Param changes, annotations, the tuning journal and comparisons: request and response shapes.

Time windows come as query parameters with a UTC offset; a bad one is a 422 whose ``errors``
name the field, exactly like any other invalid query parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import Query
from fastapi.exceptions import RequestValidationError
from pydantic import (
    AfterValidator,
    AwareDatetime,
    Field,
    StringConstraints,
    computed_field,
    field_validator,
)

from lagscope.analysis.backlog import Backlog, Cause
from lagscope.analysis.impact import Impact, WindowStats
from lagscope.api.schemas.common import ObjectId, QueryId, Schema, printable, within_calendar
from lagscope.history.window import window_error
from lagscope.journal.annotations import MAX_TAG, MAX_TAGS, MAX_TEXT
from lagscope.journal.compare import Comparison, Side
from lagscope.journal.steps import Entry, Journal
from lagscope.models import Annotation, Channel, Instance, ParamChange

DEFAULT_SPAN = timedelta(hours=24)  # what a timeline shows when the caller gives no window
_MIN_SAMPLES = "two windows: lag samples each window needs for a verdict"

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TEXT)]
Tag = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TAG),
    AfterValidator(printable),
]
Tags = Annotated[list[Tag], Field(max_length=MAX_TAGS)]
Moment = Annotated[AwareDatetime, AfterValidator(within_calendar)]
Instant = Annotated[Moment | None, Query(description="ISO-8601 with a UTC offset")]
Start = Annotated[
    Moment | None, Query(description="ISO-8601 with offset; default: 24 h before end")
]
End = Annotated[Moment | None, Query(description="ISO-8601 with offset; default: now")]
Verdict = Literal["improved", "worse", "no_clear_change", "insufficient_data", "not_measurable"]


def invalid(field: str, message: str) -> RequestValidationError:
    return RequestValidationError(
        [{"type": "value_error", "loc": ("query", field), "msg": message, "input": None}]
    )


def check_window(
    start: datetime, end: datetime, start_field: str = "start", end_field: str = "end"
) -> tuple[datetime, datetime]:
    """The window in UTC, or a 422 naming the offending field."""
    if error := window_error(start, end, start_field, end_field):
        raise invalid(*error)
    return start.astimezone(UTC), end.astimezone(UTC)


@dataclass(frozen=True, slots=True)
class TimeRange:
    start: datetime
    end: datetime


def time_range(start: Start = None, end: End = None) -> TimeRange:
    """``[start, end)``; ``end`` defaults to now and ``start`` to 24 hours before ``end``."""
    until = end or datetime.now(UTC)
    since = start or until - DEFAULT_SPAN
    error = window_error(since, until)
    if error and end is None and error[0] == "end":
        raise invalid("start", "must be before end, which defaults to now")
    return TimeRange(*check_window(since, until))


class ParamChangeOut(Schema):
    """``old_value → new_value`` happened in ``(last_old_at, first_new_at]``."""

    id: int
    instance_id: int
    instance_name: str
    name: str
    old_value: str | None
    new_value: str | None
    last_old_at: datetime
    first_new_at: datetime


def param_change_out(change: ParamChange, instance_name: str) -> ParamChangeOut:
    return ParamChangeOut(
        id=change.id,
        instance_id=change.instance_id,
        instance_name=instance_name,
        name=change.name,
        old_value=change.old_value,
        new_value=change.new_value,
        last_old_at=change.last_old_at,
        first_new_at=change.first_new_at,
    )


class AnnotationIn(Schema):
    """A note at ``starts_at`` (or over ``[starts_at, ends_at)``), on the whole cluster, one
    instance, or one channel (its instance is then implied)."""

    cluster_id: ObjectId
    instance_id: ObjectId | None = None
    channel_id: ObjectId | None = None
    starts_at: Moment
    ends_at: Moment | None = None
    text: Text
    tags: Tags = Field(default_factory=list)


class AnnotationPatch(Schema):
    """Fields left out keep their value. ``instance_id`` and ``channel_id`` are the scope as a
    pair: sending either replaces it (the other counts as null; both null = the whole cluster).
    ``ends_at: null`` turns a range into a point."""

    instance_id: ObjectId | None = None
    channel_id: ObjectId | None = None
    starts_at: Moment | None = None
    ends_at: Moment | None = None
    text: Text | None = None
    tags: Tags | None = None

    @field_validator("starts_at", "text", "tags", mode="before")
    @classmethod
    def _not_null(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("may not be null: omit the field to keep its value")
        return value


class AnnotationOut(Schema):
    id: int
    cluster_id: int
    instance_id: int | None
    channel_id: int | None
    starts_at: datetime
    ends_at: datetime | None
    text: str
    tags: list[str]
    author: str = Field(description="the author's username when they wrote it")
    author_id: int | None = Field(
        description="the author's user id: they (and admins) may edit or delete the note; "
        "null once that user is deleted"
    )
    created_at: datetime
    # The last edit: who (a username, like ``author``) and when; null while never edited.
    updated_by: str | None
    updated_at: datetime | None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def scope(self) -> Literal["cluster", "instance", "channel"]:
        if self.channel_id is not None:
            return "channel"
        return "cluster" if self.instance_id is None else "instance"


def annotation_out(annotation: Annotation) -> AnnotationOut:
    return AnnotationOut.model_validate(annotation)


class WindowStatsOut(Schema):
    """``samples`` = known lags; ``caught_up_share`` 0–1; rates in trx/s (``source_rate`` is
    the load)."""

    samples: int
    lag_p50: float | None
    lag_p95: float | None
    lag_max: float | None
    caught_up_share: float | None
    apply_rate: float | None
    source_rate: float | None


def stats_out(stats: WindowStats) -> WindowStatsOut:
    return WindowStatsOut.model_validate(stats)  # same field names; read by attribute


class SpanOut(Schema):
    """A half-open window ``[start, end)``; empty when ``start == end``."""

    start: datetime
    end: datetime


class ChannelRef(Schema):
    channel_id: int
    channel_name: str
    instance_id: int
    instance_name: str
    region: str


def channel_ref(channel: Channel, instance: Instance) -> ChannelRef:
    return ChannelRef(
        channel_id=channel.id,
        channel_name=channel.name,
        instance_id=instance.id,
        instance_name=instance.name,
        region=instance.region,
    )


class ImpactOut(Schema):
    """``lag_change_p50`` = after − before (s); ``load_change`` = after ÷ before source rate."""

    verdict: Verdict
    lag_change_p50: float | None
    load_change: float | None
    reason: str


def impact_out(result: Impact) -> ImpactOut:
    return ImpactOut(
        verdict=result.verdict.value,
        lag_change_p50=result.lag_change_p50,
        load_change=result.load_change,
        reason=result.reason,
    )


class ChannelImpactOut(Schema):
    """A step's effect on one channel; ``in_scope`` false = the step did not touch it (a
    control: if it moved too, the load did it)."""

    channel: ChannelRef
    in_scope: bool
    before: WindowStatsOut
    after: WindowStatsOut
    impact: ImpactOut


class StepOut(Schema):
    """A burst of param changes and/or annotations at ``at``; it happened in
    ``(changed_after, at]``, and samples of that stretch are in neither window."""

    at: datetime
    changed_after: datetime
    kind: Literal["param_change", "annotation", "mixed"]
    summary: str
    changes: list[ParamChangeOut]
    annotations: list[AnnotationOut]
    before: SpanOut
    after: SpanOut
    impacts: list[ChannelImpactOut]


def _summary(entry: Entry) -> str:
    parts = [f"{name}: {c.name} {c.old_value} → {c.new_value}" for c, name in entry.step.changes]
    parts += [f"note: {a.text[:80]}" for a in entry.step.annotations]
    return "; ".join(parts)


def step_out(entry: Entry) -> StepOut:
    step = entry.step
    kind: Literal["param_change", "annotation", "mixed"] = "annotation"
    if step.changes:
        kind = "mixed" if step.annotations else "param_change"
    return StepOut(
        at=step.at,
        changed_after=step.changed_after,
        kind=kind,
        summary=_summary(entry),
        changes=[param_change_out(c, name) for c, name in step.changes],
        annotations=[annotation_out(a) for a in step.annotations],
        before=SpanOut(start=entry.before[0], end=entry.before[1]),
        after=SpanOut(start=entry.after[0], end=entry.after[1]),
        impacts=[
            ChannelImpactOut(
                channel=channel_ref(i.channel, i.instance),
                in_scope=i.in_scope,
                before=stats_out(i.impact.before),
                after=stats_out(i.impact.after),
                impact=impact_out(i.impact),
            )
            for i in entry.impacts
        ],
    )


class JournalOut(Schema):
    """Steps with ``at`` in ``[start, end)`` in time order; ``truncated``: more steps follow,
    ask again from the last step's ``at``."""

    cluster_id: int
    start: datetime
    end: datetime
    width_s: float
    settle_s: float
    min_samples: int
    group_s: float
    channels: list[ChannelRef]
    steps: list[StepOut]
    truncated: bool


def journal_out(journal: Journal) -> JournalOut:
    return JournalOut(
        cluster_id=journal.cluster.id,
        start=journal.start,
        end=journal.end,
        width_s=journal.settings.width_s,
        settle_s=journal.settings.settle_s,
        min_samples=journal.settings.min_samples,
        group_s=journal.settings.group_s,
        channels=[channel_ref(c, i) for c, i in journal.channels],
        steps=[step_out(e) for e in journal.entries],
        truncated=journal.truncated,
    )


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
