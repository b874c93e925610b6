"""How much of the source's write stream could a replica apply at once: the commit-parent rule
simulated over a sample of the source's binlog, for 1…16 workers.

Each transaction carries the newest sequence number that must have committed before it may
start (MySQL's ``last_committed``; for MariaDB, derived from the group commits: see
:func:`from_commit_groups`) and a cost (its size in the binlog: a proxy for its apply time). The
simulation is the LOGICAL_CLOCK rule as the applier runs it:

- the coordinator hands transactions out in binlog order, to the first free worker;
- a transaction starts once everything up to its ``last_committed`` has committed;
- with commit order preserved (``replica_preserve_commit_order``, MariaDB always), it commits
  after its predecessor, and its worker is busy until then.

The speed-up for N workers is the serial time over the simulated time. It is what the source's
write stream allows, not what the replica's hardware gives: :func:`bounded` caps it by the
replica's cores (a worker is a thread; two cores apply at most ~2× whatever the stream allows).

MariaDB's modes: ``conservative`` applies in parallel what group-committed together on the
source (the groups as commit parents); ``optimistic`` (and ``aggressive``) start any
transactions at once and roll back the ones that conflict: simulated with no commit parent, an
upper bound that conflicts (rows written by neighbours) bring down.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

WORKER_COUNTS = tuple(range(1, 17))


@dataclass(frozen=True, slots=True)
class Trx:
    sequence_number: int  # 1, 2, … in binlog order
    last_committed: int  # may start once every transaction up to this one has committed
    cost: float = 1.0  # relative apply time (bytes in the binlog); > 0


def makespan(trxs: Sequence[Trx], workers: int, preserve_commit_order: bool = True) -> float:
    """Time to apply ``trxs`` with ``workers`` under the commit-parent rule (units of cost)."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    free = [0.0] * workers  # when each worker can take the next transaction
    newest_commit = 0.0  # the latest commit so far (transactions come in sequence order)
    prefix: dict[int, float] = {}  # sequence number → when it and all before it had committed
    previous_start = 0.0
    previous_commit = 0.0
    for trx in trxs:
        worker_free = heapq.heappop(free)
        parent_done = _committed_by(prefix, trx.last_committed)
        start = max(worker_free, previous_start, parent_done)
        finish = start + trx.cost
        commit = max(finish, previous_commit) if preserve_commit_order else finish
        heapq.heappush(free, commit)
        newest_commit = max(newest_commit, commit)
        prefix[trx.sequence_number] = newest_commit
        previous_start, previous_commit = start, commit
    return newest_commit


def _committed_by(prefix: dict[int, float], last_committed: int) -> float:
    """When every transaction up to ``last_committed`` had committed (0: none needed). A parent
    outside the sample (older) committed before the sample began."""
    if last_committed <= 0:
        return 0.0
    return prefix.get(last_committed, 0.0)


def speedups(
    trxs: Sequence[Trx],
    counts: Sequence[int] = WORKER_COUNTS,
    preserve_commit_order: bool = True,
) -> dict[int, float]:
    """Serial time / simulated time for each worker count (1.0 for one worker)."""
    serial = sum(t.cost for t in trxs)
    if serial <= 0:
        return dict.fromkeys(counts, 1.0)
    return {n: serial / makespan(trxs, n, preserve_commit_order) for n in counts}


def from_commit_groups(groups: Sequence[Sequence[float]]) -> list[Trx]:
    """Transactions from MariaDB's group commits (the transactions of each group, as costs, in
    binlog order): a group's transactions may start once the previous group has committed."""
    trxs: list[Trx] = []
    parent = 0
    for group in groups:
        for cost in group:
            trxs.append(Trx(len(trxs) + 1, parent, cost))
        parent = len(trxs)
    return trxs


def from_parents(parents: Sequence[tuple[int, int, float]]) -> list[Trx]:
    """Transactions from MySQL's GTID events, ``(last_committed, sequence_number, cost)`` in
    binlog order: numbered from 1 within the window; a parent older than the window committed
    before it began (0)."""
    if not parents:
        return []
    base = min(seq for _, seq, _ in parents) - 1
    return [Trx(seq - base, max(0, lc - base), cost) for lc, seq, cost in parents]


def independent(trxs: Sequence[Trx]) -> list[Trx]:
    """The same transactions with no commit parent (MariaDB's optimistic mode, an upper bound)."""
    return [Trx(t.sequence_number, 0, t.cost) for t in trxs]


def bounded(speedup: float, workers: int, cores: int | None) -> float:
    """What the replica can turn a simulated speed-up into: never more than its workers, nor
    than its cores (when known)."""
    cap = float(workers if cores is None else min(workers, cores))
    return min(speedup, cap)


def mean_group_size(trxs: Sequence[Trx]) -> float:
    """Transactions per distinct commit parent (about the source's group commit size)."""
    if not trxs:
        return 0.0
    return len(trxs) / len({t.last_committed for t in trxs})


# The parameters that set how many workers apply in parallel (0: the single applier thread).
WORKER_PARAMS = frozenset(
    {"slave_parallel_threads", "slave_parallel_workers", "replica_parallel_workers"}
)
OPTIMISTIC_MODES = frozenset({"optimistic", "aggressive"})


def applier_workers(value: str | None) -> int:
    """Workers a setting stands for: 0, unset or unreadable is one (the SQL thread itself)."""
    try:
        return max(1, int(value or 0))
    except ValueError:
        return 1


@dataclass(frozen=True, slots=True)
class CapacityPrediction:
    """A change of the worker count, predicted from the source's writes and checked against
    what the replica then applied. ``factor``: predicted capacity after ÷ before (bounded by
    workers and cores); ``stream_allows``: the unbounded simulated speed-up at
    ``workers_after``; ``error``: measured ÷ predicted − 1."""

    workers_before: int
    workers_after: int
    mode: str  # conservative | optimistic
    factor: float
    stream_allows: float
    cores: int | None
    predicted: float | None
    measured: float | None
    error: float | None


def predict_capacity(
    conservative: dict[int, float],
    optimistic: dict[int, float],
    workers_before: int,
    workers_after: int,
    mode: str | None,
    cores: int | None,
    capacity_before: float | None,
    capacity_after: float | None,
) -> CapacityPrediction:
    """Capacity after = capacity before × bounded speed-up(after) ÷ bounded speed-up(before):
    the measured serial (or current) capacity carried to the new worker count."""
    chosen = optimistic if (mode or "").lower() in OPTIMISTIC_MODES else conservative
    top = max(chosen, default=1)

    def at(workers: int) -> float:
        return bounded(chosen.get(min(workers, top), 1.0), workers, cores)

    factor = at(workers_after) / at(workers_before)
    predicted = None if capacity_before is None else capacity_before * factor
    error = None
    if predicted and capacity_after is not None:
        error = capacity_after / predicted - 1.0
    return CapacityPrediction(
        workers_before=workers_before,
        workers_after=workers_after,
        mode="optimistic" if chosen is optimistic else "conservative",
        factor=factor,
        stream_allows=chosen.get(min(workers_after, top), 1.0),
        cores=cores,
        predicted=predicted,
        measured=capacity_after,
        error=error,
    )
