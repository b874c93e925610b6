"""Missed ticks: holes in a cluster's polling, each with its reason."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from lagscope.api.schemas.common import Schema


class PollGapOut(Schema):
    started_at: datetime = Field(description="The last recorded tick before the hole.")
    ended_at: datetime = Field(description="The tick that found the hole.")
    missed: int = Field(description="Ticks missed, at the cluster's interval.")
    reason: Literal["slow", "expired", "not_polled"] = Field(
        description=(
            "slow: the previous tick outlasted the interval; expired: ticks waited in the queue"
            " past their interval (workers busy or none running); not_polled: no worker"
            " recorded them (a worker lost mid-tick, or none running)."
        )
    )
    detail: str = Field(description="The reason in an operator's words.")


class PollGapsOut(Schema):
    gaps: list[PollGapOut]
