"""Lagscope's own health: each part of the pipeline, judged (analysis/readiness.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from lagscope.api.schemas.common import Schema

HealthState = Literal["ok", "warn", "down"]
# analysis/readiness.py's COMPONENTS, as the schema's type.
ComponentName = Literal["store", "broker", "workers", "beat", "polling", "deliveries", "heartbeat"]


class ComponentOut(Schema):
    name: ComponentName
    state: HealthState = Field(
        description="ok; warn: working, but an operator should know; down: not working."
    )
    message: str = Field(description="One sentence an operator can act on.")
    age_s: float | None = Field(
        default=None, description="How old the newest sign of life is, where that is the point."
    )
    count: int | None = Field(
        default=None, description="Processes running, tasks queued or deliveries pending."
    )


class ReadinessOut(Schema):
    state: HealthState = Field(description="The worst state of the components.")
    checked_at: datetime
    components: list[ComponentOut]
