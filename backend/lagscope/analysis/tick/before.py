"""What a tick starts from: the cluster as its last ticks left it, as plain values.

Built by the recording step (ingest/tick_before.py) from the store's rows and a poll owner's
memory; the judgement reads nothing else, so a test builds one by hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from lagscope.analysis.causes.episodes import EpisodeState
from lagscope.analysis.causes.model import DiagnosisMemory, StepSeen
from lagscope.analysis.channel_metrics import ChannelState
from lagscope.analysis.tick.workers import WorkersBefore
from lagscope.analysis.timeline import ProgressPoint
from lagscope.collectors.snapshot import InstanceSnapshot

Params = Mapping[str, str | None]


class Poll(Protocol):
    """An instance's poll at this tick (ingest/reader.PollResult): a snapshot, or why none."""

    @property
    def read_at(self) -> float: ...  # epoch s
    @property
    def snapshot(self) -> InstanceSnapshot | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def error_kind(self) -> str | None: ...


class SourceHistory(Protocol):
    """A source's stored progress points (analysis/timeline.py): the judgement's one lookup,
    read-only, for which points it needs only the polls tell (a lagging channel's applied
    position, the streams a source reports)."""

    def newest(self, instance_id: int, stream: str) -> tuple[int, int] | None:
        """(µs, value) of the stream's newest stored point."""
        ...

    def around(self, instance_id: int, stream: str, target: int) -> list[ProgressPoint]:
        """The newest point below ``target`` and the first at or after it (either may lack)."""
        ...


@dataclass(frozen=True, slots=True)
class ChannelBefore:
    id: int
    name: str
    gone: bool  # no longer on its replica (RESET SLAVE ALL, a removed connection)
    state: ChannelState
    diagnosis: DiagnosisMemory
    episode: EpisodeState
    # The stored findings, each with ``since`` (the first poll of its run).
    causes: Sequence[Mapping[str, Any]] | None = None
    sql_delay_s: float = 0.0


@dataclass(frozen=True, slots=True)
class InstanceBefore:
    id: int
    name: str
    role: str
    region: str = ""
    server_id: int | None = None
    server_uuid: str | None = None
    gtid_executed: str | None = None
    gtid_progress: int | None = None
    last_ok_at: float | None = None  # epoch s
    clock_offset_s: float | None = None
    clock_resolution_s: float | None = None
    # The counters its rates start from, and the poll (epoch s) that read them.
    counters: Mapping[str, int] | None = None
    counters_at: float | None = None
    # The tracked parameters as stored, their digest, and the last poll that read them.
    params: Params = field(default_factory=dict)
    params_digest: str | None = None
    params_read_at: float | None = None
    # Its newest step (its latest parameter changes taken together), for episodes.
    step: StepSeen | None = None
    user: str = ""  # the monitoring user, named in a grant it lacks
    # Its newest stored applier-workers reading (loaded when this tick read its workers).
    workers: WorkersBefore | None = None
    channels: tuple[ChannelBefore, ...] = ()


@dataclass(frozen=True, slots=True)
class ClusterBefore:
    poll_interval_s: float
    instances: tuple[InstanceBefore, ...]
    heartbeat_mode: str = "off"
    heartbeat_interval_s: float = 1.0
    heartbeat_stopped_at: float | None = None  # epoch s, the writer's last beat when stopped

    @property
    def source(self) -> InstanceBefore | None:
        return next((i for i in self.instances if i.role == "source"), None)
