"""The cause model's types: codes, findings, and the inputs diagnosis reads for one channel.

Cause codes are stored (small integers): never renumber a member, only append.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from lagscope.analysis.channel_metrics import ChannelMetrics
from lagscope.analysis.rates import CounterRates
from lagscope.collectors.snapshot import ChannelStatus, InstanceSnapshot


class Cause(enum.IntEnum):
    """What holds a replica back (docs/causes.md, "The causes"), plus ``UNEXPLAINED`` for a backlog
    no rule names (said as such, never guessed)."""

    SOURCE_BURST = 1
    NETWORK = 2
    RELAY_LOG_DURABILITY = 3
    DURABLE_APPLY = 4
    SERIAL_APPLY = 5
    ORDERING = 6
    LARGE_TRANSACTION = 7
    DDL = 8
    BLOCKED_BY_SESSION = 9
    NO_USABLE_KEY = 10
    DELAYED_BY_DESIGN = 11
    STOPPED = 12
    BROKEN = 13
    UNREACHABLE = 14
    CLOCK_SKEW = 15
    UNEXPLAINED = 16
    # A backlog draining after what made it ended (or a tuning step): a state, not a cause of
    # its own; its finding names the episode's main cause and what limits the drain.
    CATCHING_UP = 17
    # The applier waits in a state the state table does not know: the server's own words are
    # the evidence (with the sessions that could hold what it waits for), never "not identified".
    APPLIER_WAIT = 18

    @property
    def label(self) -> str:
        return self.name.lower()

    @property
    def words(self) -> str:
        """A few words an operator uses, for strips, cards and metric help."""
        return CAUSE_WORDS[self]


CAUSE_WORDS: Mapping[Cause, str] = MappingProxyType(
    {
        Cause.SOURCE_BURST: "a write burst on the source",
        Cause.NETWORK: "the link to the source",
        Cause.RELAY_LOG_DURABILITY: "fsync per event on the receiver",
        Cause.DURABLE_APPLY: "durable serial apply",
        Cause.SERIAL_APPLY: "one applier thread, parallelism available",
        Cause.ORDERING: "parallel appliers waiting on each other",
        Cause.LARGE_TRANSACTION: "one large transaction",
        Cause.DDL: "a schema change (DDL)",
        Cause.BLOCKED_BY_SESSION: "blocked by a session on the replica",
        Cause.NO_USABLE_KEY: "row lookups without a usable key",
        Cause.DELAYED_BY_DESIGN: "delayed by design",
        Cause.STOPPED: "replication stopped",
        Cause.BROKEN: "replication broken",
        Cause.UNREACHABLE: "the replica does not answer",
        Cause.CLOCK_SKEW: "clock skew",
        Cause.UNEXPLAINED: "behind, cause not identified",
        Cause.CATCHING_UP: "catching up",
        Cause.APPLIER_WAIT: "the applier waits, in the server's words",
    }
)

# Evidence values are data, shown as text: numbers, flags, and server text bounded to 500 chars.
EvidenceValue = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class Finding:
    """One cause seen in one poll of one channel.

    ``sentence``: what is happening in an operator's words (instance names and figures, never a
    code identifier); ``action``: what to do; ``confidence`` in [0, 1]; ``needs``: the grant or
    version that would make the evidence complete, when it is not ("needs PROCESS")."""

    cause: Cause
    confidence: float
    sentence: str
    action: str
    evidence: Mapping[str, EvidenceValue] = field(default_factory=lambda: MappingProxyType({}))
    needs: str | None = None


@dataclass(frozen=True, slots=True)
class SiblingView:
    """Another replica channel of the same cluster in the same tick (near vs far)."""

    replica: str
    region: str
    lag_s: float | None
    not_received: int | None
    received_not_applied: int | None
    verdict: int | None  # analysis.codes.Verdict value


@dataclass(frozen=True, slots=True)
class SourceFacts:
    """The cluster's source in the same tick: its write rate and group commit, its clock."""

    name: str
    region: str
    commit_rate: float | None = None  # trx/s (GTID progress)
    rates: CounterRates | None = None  # binlog commits / groups per s …
    clock_offset_s: float | None = None
    clock_resolution_s: float | None = None
    params: Mapping[str, str | None] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class StepSeen:
    """A tuning step on the replica or its source: tracked parameters changed, first seen at
    ``at``; ``what`` says which, as "sync_relay_log 1→0, sync_master_info 1→0"."""

    at: float  # epoch s
    instance: str
    what: str


@dataclass(frozen=True, slots=True)
class EpisodeContext:
    """The channel's lag episode as it stood after the previous poll: when it began, its main
    cause so far, and the newest step taken since it began (None: none)."""

    started_at: float
    main_cause: Cause | None
    step: StepSeen | None = None


@dataclass(frozen=True, slots=True)
class CauseInputs:
    """Everything :func:`~.diagnose.diagnose` reads for one channel at one poll.

    ``replica`` is None when the server did not answer (then ``status`` is None too). ``params``
    are the replica's current tracked parameters (stored values when this poll did not read
    them); ``rates`` the replica's counter rates over the last interval; ``interval_s`` the
    cluster's poll interval."""

    at: float  # epoch s
    replica_name: str
    region: str
    channel: str
    metrics: ChannelMetrics
    status: ChannelStatus | None
    replica: InstanceSnapshot | None
    params: Mapping[str, str | None]
    rates: CounterRates | None
    source: SourceFacts | None
    siblings: tuple[SiblingView, ...] = ()
    interval_s: float = 1.0
    # The applier thread's current statement (processlist INFO) when the cause readings took it,
    # bounded to EVIDENCE_TEXT_MAX; "" when unknown. Names the table of a DDL being applied.
    applier_statement: str = ""
    # The episode the channel is in (None: not in one): what made a draining backlog.
    episode: EpisodeContext | None = None


@dataclass(frozen=True, slots=True)
class DiagnosisMemory:
    """What diagnosis remembers about a channel between polls (stored as JSON on the channel, so
    any worker can poll next): recent thread states, the transaction seen applying, … The
    diagnose module owns the keys; the store only round-trips :meth:`to_json`."""

    data: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    # Built by diagnosis itself (its windows already typed tuples), not read back from JSON: the
    # next poll takes the windows as they are. An owner keeps such a memory between polls.
    windows_parsed: bool = field(default=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {key: _listed(value) for key, value in self.data.items()}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any] | None) -> DiagnosisMemory:
        return cls(MappingProxyType(dict(raw or {})))


def _listed(value: Any) -> Any:
    """Tuples as the lists JSON reads back (a memory compares equal to its stored form)."""
    return [_listed(v) for v in value] if isinstance(value, tuple) else value
