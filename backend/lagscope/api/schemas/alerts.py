"""Alert rules (with their preview), firing alerts, events and silences. Webhook targets and the
delivery log are api/schemas/webhooks.py."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from lagscope.api.schemas.common import (
    Name,
    ObjectId,
    Schema,
    VariableName,
    printable,
    within_calendar,
)
from lagscope.metrics_catalog import ALERT_NAMES

if TYPE_CHECKING:
    Metric = str
else:
    # Generated from the metric catalog's alert metrics (their order is the enum's order).
    Metric = Literal[ALERT_NAMES]
Severity = Literal["info", "warning", "critical"]
NullPolicy = Literal["firing_if_broken", "firing", "keep", "ok"]
Seconds = Annotated[float, Field(ge=0, le=7 * 86400)]
Threshold = Annotated[float, Field(ge=-1e12, le=1e12, allow_inf_nan=False)]
Region = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=64), AfterValidator(printable)
]
LabelKey = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]
LabelValue = Annotated[str, StringConstraints(max_length=256), AfterValidator(printable)]
Labels = Annotated[dict[LabelKey, LabelValue], Field(max_length=20)]
Moment = Annotated[datetime, AfterValidator(within_calendar)]
Reason = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=500),
    AfterValidator(printable),
]


class OverrideIn(Schema):
    """A different bound for one replica or one of its channels (or ``enabled: false`` to leave
    it out). A channel's override wins over its instance's."""

    instance_id: ObjectId | None = None
    channel_id: ObjectId | None = None
    threshold: Threshold | None = None
    resolve_threshold: Threshold | None = None
    for_s: Seconds | None = None
    enabled: bool = True

    @model_validator(mode="after")
    def _names_a_replica(self) -> OverrideIn:
        if self.instance_id is None and self.channel_id is None:
            raise ValueError("an override names an instance_id or a channel_id")
        return self


class ParamsIn(Schema):
    """param_changed: which parameters (none: any) and how long a change counts."""

    names: Annotated[list[VariableName], Field(max_length=100)] = []  # noqa: RUF012 - pydantic copies defaults
    window_s: Annotated[float, Field(ge=1, le=86400)] = 600.0


class RuleIn(Schema):
    name: Name
    metric: Metric
    threshold: Threshold = 0.0
    for_s: Seconds = 0.0
    resolve_threshold: Threshold | None = None
    keep_firing_s: Seconds = 0.0
    repeat_s: Annotated[float, Field(ge=60, le=7 * 86400)] | None = None
    cluster_id: ObjectId | None = None
    instance_id: ObjectId | None = None
    channel_id: ObjectId | None = None
    region: Region | None = None
    overrides: Annotated[list[OverrideIn], Field(max_length=200, default_factory=list)]
    severity: Severity = "warning"
    labels: Labels = Field(default_factory=dict)
    target_ids: Annotated[list[ObjectId], Field(max_length=20, default_factory=list)]
    null_policy: NullPolicy = "firing_if_broken"
    params: ParamsIn = Field(default_factory=lambda: ParamsIn(names=[]))
    enabled: bool = True


# PATCH may clear these with an explicit null (hysteresis off, no repeat, a wider scope).
_RULE_NULLABLE = frozenset(
    {"resolve_threshold", "repeat_s", "cluster_id", "instance_id", "channel_id", "region"}
)


class RulePatch(Schema):
    """A partial update (omitted fields stay); only the fields that may be empty take null."""

    @field_validator("*", mode="before")
    @classmethod
    def _null_only_where_allowed(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None and info.field_name not in _RULE_NULLABLE:
            raise ValueError("may not be null: omit the field to keep its value")
        return value

    name: Name | None = None
    metric: Metric | None = None
    threshold: Threshold | None = None
    for_s: Seconds | None = None
    resolve_threshold: Threshold | None = None
    keep_firing_s: Seconds | None = None
    repeat_s: Annotated[float, Field(ge=60, le=7 * 86400)] | None = None
    # Scope: send null to widen (no cluster = every cluster).
    cluster_id: ObjectId | None = None
    instance_id: ObjectId | None = None
    channel_id: ObjectId | None = None
    region: Region | None = None
    overrides: Annotated[list[OverrideIn], Field(max_length=200)] | None = None
    severity: Severity | None = None
    labels: Labels | None = None
    target_ids: Annotated[list[ObjectId], Field(max_length=20)] | None = None
    null_policy: NullPolicy | None = None
    params: ParamsIn | None = None
    enabled: bool | None = None


class OverrideOut(Schema):
    instance_id: int | None = None
    channel_id: int | None = None
    threshold: float | None = None
    resolve_threshold: float | None = None
    for_s: float | None = None
    enabled: bool = True


class RuleOut(Schema):
    id: int
    name: str
    metric: str
    threshold: float
    for_s: float
    resolve_threshold: float | None
    keep_firing_s: float
    repeat_s: float | None
    cluster_id: int | None
    instance_id: int | None
    channel_id: int | None
    region: str | None
    overrides: list[OverrideOut]
    severity: str
    labels: dict[str, str]
    target_ids: list[int]
    null_policy: str
    params: ParamsIn
    enabled: bool
    created_at: datetime
    updated_at: datetime


class PreviewIncident(Schema):
    cluster_id: int
    instance_id: int
    instance: str
    channel_id: int
    channel: str
    fired_at: datetime
    resolved_at: datetime | None
    peak: float | None


class PreviewOut(Schema):
    start: datetime
    end: datetime
    incidents: list[PreviewIncident]


class FiringOut(Schema):
    rule_id: int
    rule_name: str
    metric: str
    severity: str
    cluster_id: int
    instance_id: int
    channel_id: int | None
    phase: str
    since: datetime | None
    value: float | None
    notified: bool


class EventOut(Schema):
    id: int
    rule_id: int
    cluster_id: int
    instance_id: int
    channel_id: int | None
    kind: str
    at: datetime
    starts_at: datetime
    value: float | None
    suppressed_by: str | None
    idempotency_key: str
    summary: str
    explorer_url: str


class SilenceIn(Schema):
    rule_id: ObjectId | None = None
    cluster_id: ObjectId | None = None
    instance_id: ObjectId | None = None
    channel_id: ObjectId | None = None
    region: Region | None = None
    starts_at: Moment | None = None
    ends_at: Moment
    reason: Reason


class SilenceOut(Schema):
    id: int
    rule_id: int | None
    cluster_id: int | None
    instance_id: int | None
    channel_id: int | None
    region: str | None
    starts_at: datetime
    ends_at: datetime
    reason: str
    author: str
    created_at: datetime
