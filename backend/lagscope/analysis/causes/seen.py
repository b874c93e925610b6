"""One poll of one channel as the rules read it (:class:`Seen`): the poll's inputs, the recent
polls' windows the memory kept, and the questions the rules ask of both.

Also what the windows are (their keys and how many polls each keeps) and the classes a thread's
state is kept as: the rules and the memory (:mod:`.history`) agree on them here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from lagscope.analysis.causes import states
from lagscope.analysis.causes.model import CauseInputs
from lagscope.analysis.codes import Verdict
from lagscope.collectors.snapshot import (
    ApplierWorker,
    BlockingSession,
    OpenTransaction,
    RowEventTable,
)

# "Most of the recent polls" = 2 of the last 3: a cause that holds is named at its second poll.
RECENT = 3
MOST = 2
# Apply rates kept to estimate the replica's capacity (its best recent apply rate).
CAPACITY_POLLS = 60
# Lag figures kept to tell a draining backlog (its slope over these polls).
LAG_POLLS = 5
# Polls of backlog and rates kept to judge a drain by the replica's pace against the source's:
# a lag falling 0.1 s/s is lost in the lag figure's noise over LAG_POLLS, while the backlog (a
# count) and the mean rates over this many polls show it (the tuning story's phase B).
PACE_POLLS = 10

BEHIND = frozenset({Verdict.RECEIVE_BOUND, Verdict.APPLY_BOUND})
# Cause readings (collectors/readings.py) whose refusal a rule reports as what it needs, and the
# key a rule asks for (the row-lock blockers reading answers "who blocks it").
_CAUSE_READINGS = frozenset(
    {
        "transactions",
        "row_blockers",
        "metadata_blockers",
        "lock_sessions",
        "relay_events",
        "table_dictionary",
    }
)
_PROBLEM_KEYS = {"row_blockers": "blockers"}


def io_class(state: str | None) -> str:
    if states.matches(state, states.IO_QUEUEING):
        return "queueing"
    if states.matches(state, states.IO_WAITING):
        return "waiting"
    return "other"


def sql_class(state: str | None) -> str:
    if states.is_commit(state):
        return "commit"
    if states.matches(state, states.SQL_IDLE):
        return "idle"
    if states.matches(state, states.ROW_LOOKUP):
        return "row"
    return "other"


def worker_class(worker: ApplierWorker) -> str:
    if states.matches(worker.state, states.WORKER_WAITING_FOR_PRIOR):
        return "waiting"
    if states.matches(worker.state, states.WORKER_IDLE) or worker.busy is False:
        return "idle"
    return "applying"


def applier_class(seen: Seen, sql_state: str) -> str:
    """The SQL thread's class, or "row" when a parallel worker is on a row lookup (MySQL shows
    the row-apply stages on the workers, not on the coordinator)."""
    found = sql_class(sql_state)
    if found in ("commit", "row"):
        return found
    workers = seen.channel_workers()
    if any(states.matches(w.state, states.ROW_LOOKUP) for w in workers):
        return "row"
    # MySQL 8.0.27+ "serial" is one worker behind the coordinator: the commit shows on it.
    if len(workers) == 1 and states.is_commit(workers[0].state):
        return "commit"
    return found


# Each window of the memory: its key and how many polls it keeps.
WINDOWS: dict[str, int] = {
    "behind": RECENT,
    "io": RECENT,
    "sql": RECENT,
    "nr": RECENT,
    "tb": RECENT,
    "retried": RECENT,
    "workers": RECENT,
    "apply": CAPACITY_POLLS,
    "src": CAPACITY_POLLS,
    "lag": PACE_POLLS,
    "pace": PACE_POLLS,
}
NO_WINDOWS: Mapping[str, tuple[Any, ...]] = MappingProxyType(dict.fromkeys(WINDOWS, ()))


@dataclass(slots=True)
class Seen:
    """One poll of one channel as the rules read it: the inputs plus the recent history
    (current poll included)."""

    inputs: CauseInputs
    behind_polls: list[str] = field(default_factory=list)  # "b" behind, "-" not
    io: list[str] = field(default_factory=list)
    sql: list[str] = field(default_factory=list)
    not_received: list[tuple[float, int]] = field(default_factory=list)
    trx_behind: list[tuple[float, int]] = field(default_factory=list)
    apply_rates: list[float] = field(default_factory=list)
    retried: list[tuple[float, int]] = field(default_factory=list)
    # (applying, waiting for an earlier transaction, total) per poll, this channel's workers.
    workers: list[tuple[int, int, int]] = field(default_factory=list)
    trx: dict[str, Any] | None = None
    wait: dict[str, Any] | None = None
    burst_since: float | None = None  # the source burst seen since (poller clock)
    # The source's write rates (trx/s) of the last CAPACITY_POLLS polls, and the usual rate a
    # burst under way is measured against (kept while it lasts, so a long burst stays one).
    source_rates: list[float] = field(default_factory=list)
    burst_base: float | None = None
    trx_current: bool = False  # ``trx`` was seen in this poll (not only remembered)
    # (at, lag_s): PACE_POLLS kept, the lag's drain rule reads the last LAG_POLLS.
    lags: list[tuple[float, float]] = field(default_factory=list)
    # (at, trx_behind, apply rate, source rate) of the polls that had all three, PACE_POLLS.
    pace: list[tuple[float, int, float, float]] = field(default_factory=list)
    # The catching-up run under way: {"since": first poll, "at": latest poll} (None: none).
    catching: dict[str, Any] | None = None
    # The last poll that named the episode's main cause: a drain begins there, so the pace and
    # the lag's slope are judged on the polls from it (a window still holding a stopped applier's
    # zero apply rate read a drain of 1 s/s as "barely draining").
    main_named_at: float | None = None
    # The windows as the memory held them, and what this poll adds to each (remember's input).
    stored: Mapping[str, tuple[Any, ...]] = field(default_factory=lambda: NO_WINDOWS)
    pushed: dict[str, Any] = field(default_factory=dict)

    # --- this poll ---------------------------------------------------------------------------
    @property
    def at(self) -> float:
        return self.inputs.at

    @property
    def name(self) -> str:
        return self.inputs.replica_name

    @property
    def behind(self) -> bool:
        return self.inputs.metrics.verdict in BEHIND

    @property
    def held_behind(self) -> bool:
        """Behind now and in most of the recent polls: a one-poll backlog under load (the
        verdict shows any backlog at once) is a blip, not something to explain."""
        return self.behind and self.behind_polls[-RECENT:].count("b") >= MOST

    @property
    def offset_s(self) -> float:
        """Replica clock minus poller clock (to put server timestamps on the poller's time)."""
        replica = self.inputs.replica
        return replica.clock.offset_s if replica is not None else 0.0

    @property
    def product(self) -> str | None:
        replica = self.inputs.replica
        if replica is not None:
            return replica.flavor.product
        params = self.inputs.params
        if "slave_parallel_threads" in params:
            return "mariadb"
        if "replica_parallel_workers" in params or "slave_parallel_workers" in params:
            return "mysql"
        return None

    def channel_workers(self) -> tuple[ApplierWorker, ...]:
        replica = self.inputs.replica
        if replica is None:
            return ()
        return tuple(w for w in replica.workers if w.channel == self.inputs.channel)

    def applier_states(self) -> tuple[str, ...]:
        """The SQL thread's state and this channel's workers' states, non-empty ones."""
        status = self.inputs.status
        found = [status.sql_thread_state] if status is not None else []
        found.extend(w.state for w in self.channel_workers())
        return tuple(s for s in found if s)

    def transactions(self) -> tuple[OpenTransaction, ...]:
        """The applier transactions of this channel (all of them when the threads cannot be
        told apart: MariaDB's serial SQL thread is not among the workers)."""
        replica = self.inputs.replica
        if replica is None or replica.evidence is None:
            return ()
        all_trx = replica.evidence.transactions
        ids = {w.thread_id for w in self.channel_workers() if w.thread_id is not None}
        mine = tuple(t for t in all_trx if t.thread_id in ids)
        return mine or all_trx

    def blockers(self) -> tuple[BlockingSession, ...]:
        replica = self.inputs.replica
        if replica is None or replica.evidence is None:
            return ()
        ids = {t.thread_id for t in self.transactions()}
        ids |= {w.thread_id for w in self.channel_workers() if w.thread_id is not None}
        mine = tuple(b for b in replica.evidence.blockers if b.blocked_thread_id in ids)
        return mine or replica.evidence.blockers

    def table(self) -> RowEventTable | None:
        replica = self.inputs.replica
        if replica is None or replica.evidence is None:
            return None
        tables = replica.evidence.tables
        return next((t for t in tables if t.channel == self.inputs.channel), None) or next(
            iter(tables), None
        )

    def problems(self) -> Mapping[str, str]:
        """What kept a cause reading from answering: the evidence's own notes, and a reading
        the server refused (the poller keeps those in the snapshot's problems by reading name,
        e.g. ``row_blockers`` without PROCESS, while the evidence is then absent)."""
        replica = self.inputs.replica
        if replica is None:
            return MappingProxyType({})
        merged = {
            _PROBLEM_KEYS.get(name, name): text
            for name, text in replica.problems.items()
            if name in _CAUSE_READINGS
        }
        if replica.evidence is not None:
            merged.update(replica.evidence.problems)
        return MappingProxyType(merged)

    def needs(self, reading: str) -> str | None:
        """What a cause reading that could not be taken needs, as "unknown: …"."""
        problem = self.problems().get(reading)
        if not problem:
            return None
        return problem if problem.startswith("unknown") else f"unknown: {problem}"

    def server_time(self, server_ts: float | None) -> float | None:
        """A replica-clock epoch timestamp on the poller's clock."""
        return None if server_ts is None else server_ts - self.offset_s

    # --- recent polls ------------------------------------------------------------------------
    def most(self, seq: list[str], value: str) -> bool:
        recent = seq[-RECENT:]
        return recent.count(value) >= MOST

    def count(self, seq: list[str], value: str) -> tuple[int, int]:
        recent = seq[-RECENT:]
        return recent.count(value), len(recent)

    def growing(self, seq: list[tuple[float, int]]) -> bool:
        """The figure rose over the recent polls (newest above the oldest kept, not falling now)."""
        recent = seq[-RECENT:]
        return len(recent) >= 2 and recent[-1][1] > recent[0][1] and recent[-1][1] >= recent[-2][1]

    def growth_per_s(self, seq: list[tuple[float, int]]) -> float | None:
        recent = seq[-RECENT:]
        if len(recent) < 2 or recent[-1][0] <= recent[0][0]:
            return None
        return (recent[-1][1] - recent[0][1]) / (recent[-1][0] - recent[0][0])

    def capacity(self) -> float | None:
        return max(self.apply_rates, default=None)
