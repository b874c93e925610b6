"""Lag episodes, their cause segments, and a channel's current causes (docs/api.md).

Causes are the snake_case labels of ``analysis.causes.model.Cause``; ``words`` says the same in
an operator's words. ``sentence``, ``action`` and string evidence are plain text from the
analysis and from monitored servers (bounded to 500 characters): show them as text, never HTML.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from lagscope.api.schemas.common import Schema

CauseLabel = Literal[
    "source_burst",
    "network",
    "relay_log_durability",
    "durable_apply",
    "serial_apply",
    "ordering",
    "large_transaction",
    "ddl",
    "blocked_by_session",
    "no_usable_key",
    "delayed_by_design",
    "stopped",
    "broken",
    "unreachable",
    "clock_skew",
    "unexplained",
    "catching_up",
    "applier_wait",
]
EndedHow = Literal["ongoing", "by_itself", "after_step", "replica_removed"]
EvidenceValue = str | int | float | bool | None


class CauseRefOut(Schema):
    cause: CauseLabel
    words: str = Field(description="The cause in an operator's words")


class ParamChangeRefOut(Schema):
    """A tracked parameter change (the journal's record): ``old_value → new_value`` first seen
    at ``at`` on ``instance``."""

    change_id: int
    instance: str
    param: str
    old_value: str | None
    new_value: str | None
    at: datetime


class CauseSegmentOut(Schema):
    """One cause seen inside an episode, with the evidence of its latest, strongest poll."""

    cause: CauseLabel
    words: str
    started_at: datetime
    ended_at: datetime | None = Field(description="null: still being seen")
    confidence: float = Field(ge=0, le=1)
    sentence: str = Field(description="What is happening, in words (plain text)")
    action: str = Field(description="What to do (plain text)")
    evidence: dict[str, EvidenceValue] = Field(
        description="The numbers and server text behind it (text bounded to 500 characters)"
    )
    needs: str | None = Field(
        description="The grant or version that would complete the evidence (null: complete)"
    )


class CurrentCauseOut(Schema):
    """A cause the channel's newest poll names; ``since``: when it was first seen this time."""

    cause: CauseLabel
    words: str
    since: datetime | None
    confidence: float = Field(ge=0, le=1)
    sentence: str
    action: str
    evidence: dict[str, EvidenceValue]
    needs: str | None


class EpisodeSummaryOut(Schema):
    id: int
    cluster_id: int
    channel_id: int
    instance_id: int
    replica: str
    region: str
    channel: str = Field(description="Channel / connection name; '' is the default channel")
    started_at: datetime
    ended_at: datetime | None = Field(description="null: ongoing")
    duration_s: float = Field(description="Until ended_at, or until now while ongoing")
    peak_lag_s: float | None
    peak_at: datetime | None
    main_cause: CauseRefOut | None = Field(description="The cause that held longest")
    ended_how: EndedHow
    ended_by: ParamChangeRefOut | None = Field(
        description="With after_step: the parameter change that ended it"
    )


class EpisodesOut(Schema):
    episodes: list[EpisodeSummaryOut] = Field(description="Newest first")


class OtherChannelOut(Schema):
    """Another replica channel of the cluster during the episode: did it lag too?"""

    replica: str
    channel: str
    peak_lag_s: float | None = Field(description="null: no sample in the episode's window")
    lagged: bool = Field(description="Its peak reached the episode threshold (5 s)")


class EpisodeOut(EpisodeSummaryOut):
    causes: list[CauseSegmentOut] = Field(description="In time order; segments may overlap")
    others: list[OtherChannelOut]
    param_changes: list[ParamChangeRefOut] = Field(
        description="Tracked parameter changes on the cluster's instances during the episode"
    )


class ChannelCausesOut(Schema):
    channel_id: int
    instance_id: int
    replica: str
    channel: str
    segments: list[CauseSegmentOut] = Field(description="In time order")


class ClusterCausesOut(Schema):
    """Cause segments overlapping the window, per channel (the why strip under a lag chart)."""

    channels: list[ChannelCausesOut]
