"""The lag check's answers and the check tokens' shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from lagscope.api.schemas.common import Name, Schema
from lagscope.security import check_tokens

VerdictLabel = Literal[
    "usable",
    "broken",
    "stopped",
    "unreachable",
    "no_replication",
    "lag_unknown",
    "lagging",
    "recovering",
    "stale",
    "not_polled",
    "no_replicas",
]


class CheckCauseOut(Schema):
    """The strongest cause of the episode in progress (its label and words only: no server
    text reaches a check token)."""

    cause: str
    words: str
    since: datetime | None


class ReplicaCheckOut(Schema):
    cluster: str
    replica: str
    verdict: VerdictLabel = Field(description="usable: 200; stale, not_polled: 503; else 429")
    usable: bool
    reason: str
    lag_s: float | None = Field(description="the newest poll's lag (of the deciding channel)")
    lag_source: str | None = Field(
        description="heartbeat, applier, source_timeline or seconds_behind_source"
    )
    channel: str | None = Field(description="the channel that decided; '' is the default one")
    sample_at: datetime | None = Field(description="the newest poll judged")
    age_s: float | None
    cause: CheckCauseOut | None = Field(description="while a lag episode is open")
    eta_s: float | None = Field(description="time to catch up, when known")
    max_lag_s: float
    recover_lag_s: float


class ClusterCheckOut(Schema):
    cluster: str
    verdict: VerdictLabel = Field(description="the worst replica's")
    usable: bool
    reason: str
    max_lag_s: float
    recover_lag_s: float
    replicas: list[ReplicaCheckOut]


class CheckTokenIn(Schema):
    name: Name
    clusters: list[Name] = Field(
        min_length=1, max_length=check_tokens.MAX_CLUSTERS, description="names, or ids"
    )


class CheckTokenOut(Schema):
    """A check token's metadata; the token itself is shown once, when made."""

    id: int
    name: str
    clusters: list[str]
    cluster_ids: list[int]
    created_by: str
    created_at: datetime
    last_used_at: datetime | None = Field(description="to the minute")


class CheckTokenCreatedOut(CheckTokenOut):
    token: str = Field(
        description="Send as 'Authorization: Bearer <token>' to /api/v1/check/… only. Shown once."
    )
