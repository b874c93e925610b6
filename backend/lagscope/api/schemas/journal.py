"""Parameter changes and the tuning journal: response shapes. Windows follow
api/schemas/window.py; annotations and comparisons have their own modules."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from lagscope.analysis.impact import Impact, WindowStats
from lagscope.api.schemas.annotations import AnnotationOut, annotation_out
from lagscope.api.schemas.common import Schema
from lagscope.journal.steps import Entry, Journal
from lagscope.models import Channel, Instance, ParamChange

Verdict = Literal["improved", "worse", "no_clear_change", "insufficient_data", "not_measurable"]


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
    capacity: float | None = Field(
        default=None,
        description="Mean apply rate while a backlog existed (3+ polls): what the replica"
        " could apply; null when it was caught up.",
    )


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


class PredictionOut(Schema):
    """A step that changed the replica's applier workers: the capacity the source's writes
    predicted (its binlog window nearest before the step, simulated; bounded by the workers
    and LAGSCOPE_REPLICA_CORES) against the capacity measured after the step."""

    workers_before: int
    workers_after: int
    mode: Literal["conservative", "optimistic"]
    factor: float = Field(description="Predicted capacity after ÷ before.")
    stream_allows: float = Field(description="The simulated speed-up before any cap.")
    cores: int | None
    predicted: float | None = Field(description="trx/s; null: no capacity before the step.")
    measured: float | None = Field(
        description="trx/s while behind after the step; null: it kept up (not measurable)."
    )
    error: float | None = Field(description="measured ÷ predicted − 1.")


class RemovedCostOut(Schema):
    what: Literal["redo log fsync", "binary log fsync", "relay-log wait"]
    s_per_trx: float = Field(description="Seconds of the applier's time per transaction.")


class DurabilityPredictionOut(Schema):
    """A step that relaxed the replica's flush settings: the capacity its measured fsync cost
    predicted (the applier's time per transaction less what the change removes) against the
    capacity measured after the step."""

    settings: list[str] = Field(description='e.g. "sync_binlog 1 → 0".')
    applier_s_per_trx: float | None
    removed: list[RemovedCostOut]
    factor: float | None = Field(description="Predicted capacity after ÷ before.")
    capped: bool = Field(description="The removed time was ≥ 90 % of it: factor capped at 10.")
    predicted: float | None
    measured: float | None
    error: float | None = Field(description="measured ÷ predicted − 1.")
    unknown: list[str] = Field(description="Why a part could not be priced or predicted.")
    note: str | None = Field(
        default=None, description="What bounds the prediction besides the removed costs."
    )


class ChannelImpactOut(Schema):
    """A step's effect on one channel; ``in_scope`` false = the step did not touch it (a
    control: if it moved too, the load did it)."""

    channel: ChannelRef
    in_scope: bool
    before: WindowStatsOut
    after: WindowStatsOut
    impact: ImpactOut
    prediction: PredictionOut | None = None
    durability: DurabilityPredictionOut | None = None


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
                prediction=None
                if i.prediction is None
                else PredictionOut.model_validate(i.prediction, from_attributes=True),
                durability=None
                if i.durability is None
                else DurabilityPredictionOut.model_validate(i.durability, from_attributes=True),
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
