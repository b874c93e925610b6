"""What relaxing a replica's flush settings will do to its apply capacity (docs/prediction.md).

The applier spends ``t = busy ÷ rate`` worker-seconds on each transaction (``busy``: the mean
number of its threads holding one, from the worker reads; ``rate``: the capacity measured while
a backlog existed). Relaxing a setting takes the time that setting costs out of ``t``:

- ``innodb_flush_log_at_trx_commit`` 1 → 0 or 2: the redo log's fsync per commit. MySQL's
  performance_schema times it (``innodb_log_file``); MariaDB 10.8+ does not instrument its redo
  log, so its count (``Innodb_data_fsyncs`` per second, which includes it) is priced at the
  binary log's measured fsync time on the same server.
- ``sync_binlog`` 1 → 0 (or N): the binary log's fsyncs (all of them, or all but 1 in N),
  timed by performance_schema (``sql/binlog``).
- ``sync_relay_log`` 1 → 0 (or N): not the applier's own fsync, but its wait for the relay log
  while the receiver writes and fsyncs each event under the same lock; measured as the share of
  worker reads in ``Reading event from the relay log`` (MariaDB's state; lab: 41 % of the serial
  applier's time at 1, 3.5 % once relaxed).

``capacity after = rate × t ÷ (t − removed)``, with the same threads as busy as before. An
applier idle over 10 % of the window waited for the receiver: unless ``sync_relay_log`` is
relaxed too, the prediction is no gain, and says why. Where the
removed time is 90 % of ``t`` or more the rest (CPU, reading events) was too small to measure:
the factor is capped at 10× and flagged. A replica whose backlog was mostly not yet received
was bound by its receiver: relaxing ``sync_relay_log`` then speeds the receiver up by its
relay-log fsync share of the time (it was busy all along), and the prediction is the lesser of
the two. Tightening a setting is not predicted: the fsyncs it would add were never timed on this
replica.

The side panel ("what relaxing would give now") and the journal ("what the step was predicted to
give") price the same thing, so they read the same window and the same polls: the window ends
when the settings were last known in force (now, or the step's last read of the old values) and
starts ``WINDOW_S`` earlier, or ``SETTLE_S`` after the cluster's previous step, whichever is
later (analysis/impact/ ``windows``: the journal's before window); and every figure of the
cost is a mean over the window's polls with a backlog (:func:`window_cost`), the polls whose
apply rate is the capacity. A mean over every poll mixed a replica's idle or differently tuned
stretches into its busy share while the fsync times, read only while behind, were not mixed:
an incident drained just before the strict settings made ~1.2× of a replica that then gained 5×.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lagscope.analysis.durability_cost import ApplierCost as ApplierCost
from lagscope.analysis.durability_cost import CostPoll as CostPoll
from lagscope.analysis.durability_cost import window_cost as window_cost

FLUSH_LOG = "innodb_flush_log_at_trx_commit"
SYNC_BINLOG = "sync_binlog"
SYNC_RELAY_LOG = "sync_relay_log"
DURABILITY_PARAMS = frozenset({FLUSH_LOG, SYNC_BINLOG, SYNC_RELAY_LOG})
MAX_FACTOR = 10.0
# Below this mean the applier was mostly idle in the window: its rate is what it was sent.
MIN_BUSY = 0.5
# Below this it waited for events part of the time: the receiver bounds the rate, and relaxing
# the applier's own fsyncs gains nothing unless the receiver's (sync_relay_log) goes too. The
# e2e journal story's first step: busy 58 %, flush_log relaxed alone, +11 % measured.
SATURATED_BUSY = 0.9
# The journal's default windows (journal/steps.py JournalSettings), which the side panel reads
# too: a prediction there and one at the step agree when nothing changed in between.
WINDOW_S = 600.0
SETTLE_S = 30.0


@dataclass(frozen=True, slots=True)
class Removed:
    """One cost the change takes away: seconds per transaction (of the applier's threads)."""

    what: str  # "redo log fsync" | "binary log fsync" | "relay-log wait"
    s_per_trx: float


@dataclass(frozen=True, slots=True)
class DurabilityPrediction:
    """``factor``: predicted capacity ÷ capacity before; ``error``: measured ÷ predicted − 1;
    ``unknown``: why a part could not be priced (the prediction then leaves it out)."""

    settings: tuple[str, ...]  # "sync_binlog 1 → 0", …
    applier_s_per_trx: float | None
    removed: tuple[Removed, ...]
    factor: float | None
    capped: bool
    predicted: float | None
    measured: float | None
    error: float | None
    unknown: tuple[str, ...] = field(default=())
    note: str | None = None  # what bounds the prediction besides the removed costs


def _level(value: str | None) -> int | None:
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def _every(level: int | None) -> float:
    """Share of the fsyncs a ``sync_*`` level keeps: 1 at 1, 1/N at N, none at 0."""
    return 0.0 if not level or level <= 0 else 1.0 / level


def _dropped(name: str, before: int, after: int) -> float:
    """Share of a setting's cost the change removes: all of the redo log's per-commit fsync
    (0 and 2 both leave only the once-a-second one), ``1 − kept`` for a ``sync_*`` level."""
    return 1.0 if name == FLUSH_LOG else 1.0 - _every(after) / _every(before)


def predict_durability(
    changes: Mapping[str, tuple[str | None, str | None]],
    cost: ApplierCost,
    measured: float | None,
) -> DurabilityPrediction | None:
    """The prediction for a step's durability changes on one replica (None: none relaxes)."""
    relaxed = _relaxed(changes)
    if not relaxed:
        return None
    dropped = {name: _dropped(name, *levels) for name, levels in relaxed.items()}
    settings = tuple(f"{n} {a} → {b}" for n, (a, b) in sorted(relaxed.items()))
    rate, busy = cost.rate, cost.busy
    unknown = _unpredictable(rate, busy)
    if unknown:
        return DurabilityPrediction(settings, None, (), None, False, None, measured, None,
                                    tuple(unknown))  # fmt: skip
    assert rate is not None and busy is not None
    per_trx = busy / rate
    removed = _removed(relaxed, dropped, cost, rate, unknown)
    total = sum(r.s_per_trx for r in removed)
    capped = total >= per_trx * (1 - 1 / MAX_FACTOR)
    factor = MAX_FACTOR if capped else per_trx / (per_trx - total)
    factor, capped, note = _bounded(factor, capped, relaxed, dropped, cost, busy)
    predicted = rate * factor
    error = None if measured is None else measured / predicted - 1.0
    return DurabilityPrediction(
        settings=settings,
        applier_s_per_trx=per_trx,
        removed=tuple(removed),
        factor=factor,
        capped=capped,
        predicted=predicted,
        measured=measured,
        error=error,
        unknown=tuple(unknown),
        note=note,
    )


def _relaxed(changes: Mapping[str, tuple[str | None, str | None]]) -> dict[str, tuple[int, int]]:
    """The durability settings the step relaxed, with their levels before and after."""
    relaxed: dict[str, tuple[int, int]] = {}
    for name, (old, new) in changes.items():
        before, after = _level(old), _level(new)
        if name not in DURABILITY_PARAMS or before is None or after is None:
            continue
        if name == FLUSH_LOG:
            if before == 1 and after != 1:
                relaxed[name] = (before, after)
        elif _every(after) < _every(before):
            relaxed[name] = (before, after)
    return relaxed


def _unpredictable(rate: float | None, busy: float | None) -> list[str]:
    """Why the window before the step cannot carry a prediction (empty: it can)."""
    unknown: list[str] = []
    if not rate or rate <= 0:
        unknown.append("no capacity before the change: the replica kept up")
    if busy is None:
        unknown.append("the applier's threads were not read in the window")
    elif busy < MIN_BUSY:
        unknown.append(f"the applier was busy {busy:.0%} of the window: not saturated")
    return unknown


def _removed(
    relaxed: Mapping[str, tuple[int, int]],
    dropped: Mapping[str, float],
    cost: ApplierCost,
    rate: float,
    unknown: list[str],
) -> list[Removed]:
    """The applier's cost per transaction each relaxed setting removes; a cost that was not
    measured is noted in ``unknown`` instead."""
    removed: list[Removed] = []
    binlog_latency = _binlog_latency(cost)
    if FLUSH_LOG in relaxed:
        if cost.redo_fsync_s_per_s is not None:
            removed.append(Removed("redo log fsync", cost.redo_fsync_s_per_s / rate))
        elif cost.redo_fsyncs_per_s is not None and binlog_latency is not None:
            removed.append(
                Removed("redo log fsync", cost.redo_fsyncs_per_s * binlog_latency / rate)
            )
        else:
            unknown.append("redo log fsync: not timed (performance_schema's file summary)")
    if SYNC_BINLOG in relaxed:
        if cost.binlog_fsync_s_per_s is not None:
            share = dropped[SYNC_BINLOG]
            removed.append(Removed("binary log fsync", cost.binlog_fsync_s_per_s * share / rate))
        else:
            unknown.append("binary log fsync: not timed (performance_schema's file summary)")
    if SYNC_RELAY_LOG in relaxed:
        if cost.relay_waiting is not None:
            share = dropped[SYNC_RELAY_LOG]
            removed.append(Removed("relay-log wait", cost.relay_waiting * share / rate))
        else:
            unknown.append("relay-log wait: the applier's state was not read")
    return removed


def _bounded(
    factor: float,
    capped: bool,
    relaxed: Mapping[str, tuple[int, int]],
    dropped: Mapping[str, float],
    cost: ApplierCost,
    busy: float,
) -> tuple[float, bool, str | None]:
    """The factor as the rest of the replica bounds it: a receiver that was the bottleneck,
    or an applier idle waiting for the receiver; with the note saying which."""
    note = None
    receiver = _receiver_factor(dropped.get(SYNC_RELAY_LOG), cost)
    if receiver is not None and receiver < factor:
        factor, capped = receiver, False
        note = (
            f"the receiver bounds it: its relay-log fsyncs were {cost.relay_log_fsync_s_per_s:.0%}"
            f" of its time; without them it receives ~{receiver:.1f}× as fast"
        )
    if busy < SATURATED_BUSY and SYNC_RELAY_LOG not in relaxed:
        factor, capped = 1.0, False
        note = (
            f"the applier was idle {1 - busy:.0%} of the window, waiting for the receiver: "
            "relaxing its own fsyncs does not raise what it is sent"
        )
    return factor, capped, note


def _receiver_factor(dropped: float | None, cost: ApplierCost) -> float | None:
    """How much faster a receive-bound replica's receiver gets when ``dropped`` of its
    relay-log fsyncs go: busy all the time before (it was the bottleneck), that share of its
    fsync time removed. None when sync_relay_log is kept, the receiver was not the bottleneck
    (then it bounds nothing) or its fsyncs were not timed."""
    share = cost.relay_log_fsync_s_per_s
    if dropped is None or share is None or (cost.receive_bound or 0) < 0.5:
        return None
    return 1 / max(1 - min(share, 1.0) * dropped, 1 / MAX_FACTOR)


def _binlog_latency(cost: ApplierCost) -> float | None:
    """One binary log fsync's time: its fsync seconds over its fsyncs, else the timed mean."""
    seconds, count = cost.binlog_fsync_s_per_s, cost.binlog_fsyncs_per_s
    if seconds is not None and count:
        return seconds / count
    return cost.fsync_latency_s
