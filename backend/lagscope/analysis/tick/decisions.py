"""What one tick decided (analysis/tick/judge.py), for the recording step to write."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lagscope.analysis.causes.episodes import EpisodeState, EpisodeStep
from lagscope.analysis.causes.model import DiagnosisMemory, Finding
from lagscope.analysis.channel_metrics import ChannelMetrics, SourceView
from lagscope.analysis.rates import CounterRates
from lagscope.analysis.tick.workers import WorkersJudged
from lagscope.collectors.snapshot import ChannelStatus, InstanceSnapshot


@dataclass(frozen=True, slots=True)
class ParamChangeSeen:
    name: str
    old_value: str | None
    new_value: str | None
    last_old_at: float  # epoch s: the change happened in (last_old_at, the poll]


@dataclass(slots=True)
class InstanceJudged:
    """One polled instance: its figures, or why it did not answer."""

    id: int
    at: float  # epoch s, the poll
    snapshot: InstanceSnapshot | None
    error: str | None = None  # cleaned server text: the poll's error, or the snapshot's problems
    error_kind: str | None = None
    rates: CounterRates | None = None
    gtid_progress: int | None = None
    # Parameters: None when unchanged since the stored digest; else the new digest, the
    # changes, and the names tracked for the first time.
    params_digest: str | None = None
    param_changes: tuple[ParamChangeSeen, ...] = ()
    params_added: tuple[str, ...] = ()
    workers: WorkersJudged | None = None  # None: this poll read no workers


@dataclass(slots=True)
class ChannelJudged:
    """One channel at this tick: its figures, its state for the next tick, why it is behind."""

    instance_id: int
    name: str
    channel_id: int | None  # None: first seen in this tick
    at: float
    metrics: ChannelMetrics
    status: ChannelStatus | None  # None: its replica did not answer
    findings: tuple[Finding, ...] = ()
    causes: list[dict[str, Any]] = field(default_factory=list)  # channel.current_causes
    diagnosis: DiagnosisMemory | None = None  # None: the rules failed, the memory stays
    episode_before: EpisodeState = field(default_factory=EpisodeState)
    episode: EpisodeStep | None = None


@dataclass(frozen=True, slots=True)
class ProgressJudged:
    """A source's progress at this tick: the points to append, and the history to drop."""

    instance_id: int
    streams: Mapping[str, int]
    at_us: int
    forget_all: bool = False  # another server_id behind the same address
    went_back: frozenset[str] = frozenset()
    prune: frozenset[str] = frozenset()  # streams whose history past retention goes now
    cutoff_us: int = 0


@dataclass(slots=True)
class TickDecisions:
    heartbeat_stopped_at: float | None
    source_view: SourceView | None
    instances: list[InstanceJudged] = field(default_factory=list)
    channels: list[ChannelJudged] = field(default_factory=list)
    # (instance id, channel id) of channels that left their replica in this tick.
    gone: list[tuple[int, int]] = field(default_factory=list)
    progress: list[ProgressJudged] = field(default_factory=list)

    def instance(self, instance_id: int) -> InstanceJudged | None:
        return next((i for i in self.instances if i.id == instance_id), None)
