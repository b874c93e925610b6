"""The durability prediction: the applier's time per transaction less what relaxing takes out."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lagscope.analysis.codes import Verdict
from lagscope.analysis.durability import ApplierCost, CostPoll, predict_durability, window_cost
from lagscope.analysis.impact import Point

# The lab's phase A replica (MariaDB 10.11, 2 cores), measured with 20 reads a second:
# 546.6 trx/s, busy 94.7 %, waiting for the relay log 41.6 %; binlog fsyncs 0.193 s/s over
# 546.6 a second; InnoDB 556.6 fsyncs a second (redo, untimed on MariaDB). Relaxed: 2,911.
LAB_A = ApplierCost(
    rate=546.6,
    busy=0.947,
    relay_waiting=0.416,
    binlog_fsync_s_per_s=0.193,
    binlog_fsyncs_per_s=546.6,
    redo_fsyncs_per_s=556.6,
)
ALL_RELAXED = {
    "innodb_flush_log_at_trx_commit": ("1", "2"),
    "sync_binlog": ("1", "0"),
    "sync_relay_log": ("1", "0"),
}


def test_relaxing_everything_on_the_lab_phase_a_replica() -> None:
    p = predict_durability(ALL_RELAXED, LAB_A, measured=2911.0)
    assert p is not None and not p.unknown and not p.capped
    assert p.applier_s_per_trx == pytest.approx(0.947 / 546.6)
    removed = {r.what: r.s_per_trx for r in p.removed}
    # MariaDB's redo fsyncs priced at the binary log's own fsync time (0.353 ms).
    binlog_latency = 0.193 / 546.6
    assert removed["redo log fsync"] == pytest.approx(556.6 * binlog_latency / 546.6)
    assert removed["binary log fsync"] == pytest.approx(0.193 / 546.6)
    assert removed["relay-log wait"] == pytest.approx(0.416 / 546.6)
    left = (0.947 - 0.416) / 546.6 - 0.193 / 546.6 - 556.6 * binlog_latency / 546.6
    assert p.predicted == pytest.approx(0.947 / left)
    assert p.error == pytest.approx(2911.0 / p.predicted - 1)


def test_each_setting_removes_only_its_own_cost() -> None:
    only_binlog = predict_durability({"sync_binlog": ("1", "0")}, LAB_A, None)
    assert only_binlog is not None
    assert [r.what for r in only_binlog.removed] == ["binary log fsync"]
    assert only_binlog.factor == pytest.approx((0.947 / 546.6) / (0.947 / 546.6 - 0.193 / 546.6))
    assert only_binlog.measured is None and only_binlog.error is None


def test_sync_every_n_keeps_one_fsync_in_n() -> None:
    p = predict_durability({"sync_binlog": ("1", "4")}, LAB_A, None)
    assert p is not None
    (removed,) = p.removed
    assert removed.s_per_trx == pytest.approx(0.193 * 0.75 / 546.6)


def test_mysql_times_its_redo_log_itself() -> None:
    cost = ApplierCost(rate=1000.0, busy=1.0, relay_waiting=0.0, redo_fsync_s_per_s=0.5,
                       redo_fsyncs_per_s=1000.0, fsync_latency_s=0.01)  # fmt: skip
    p = predict_durability({"innodb_flush_log_at_trx_commit": ("1", "0")}, cost, None)
    assert p is not None
    assert p.removed[0].s_per_trx == pytest.approx(0.0005)
    assert p.factor == pytest.approx(2.0)


def test_removing_nearly_all_the_time_is_capped_and_flagged() -> None:
    cost = ApplierCost(rate=100.0, busy=1.0, relay_waiting=0.95)
    p = predict_durability({"sync_relay_log": ("1", "0")}, cost, 1500.0)
    assert p is not None and p.capped and p.factor == 10.0 and p.predicted == 1000.0


def test_tightening_or_unchanged_levels_predict_nothing() -> None:
    tighter = {"sync_binlog": ("0", "1"), "innodb_flush_log_at_trx_commit": ("2", "1")}
    assert predict_durability(tighter, LAB_A, None) is None
    assert predict_durability({"innodb_flush_log_at_trx_commit": ("2", "0")}, LAB_A, None) is None
    assert predict_durability({"sync_relay_log": ("10000", "20000")}, LAB_A, None) is not None
    assert predict_durability({"slave_parallel_threads": ("0", "4")}, LAB_A, None) is None


def test_an_unsaturated_or_unread_applier_gets_reasons_not_a_figure() -> None:
    kept_up = predict_durability(ALL_RELAXED, ApplierCost(None, 1.0, 0.0), None)
    assert kept_up is not None and kept_up.predicted is None
    assert kept_up.unknown == ("no capacity before the change: the replica kept up",)
    idle = predict_durability(ALL_RELAXED, ApplierCost(500.0, 0.2, 0.0), None)
    assert idle is not None and idle.predicted is None
    assert "busy 20% of the window" in idle.unknown[0]
    unread = predict_durability(ALL_RELAXED, ApplierCost(500.0, None, None), None)
    assert unread is not None and unread.unknown == (
        "the applier's threads were not read in the window",
    )


def test_without_performance_schema_only_the_relay_wait_is_priced() -> None:
    cost = ApplierCost(rate=500.0, busy=1.0, relay_waiting=0.5, redo_fsyncs_per_s=500.0)
    p = predict_durability(ALL_RELAXED, cost, None)
    assert p is not None and [r.what for r in p.removed] == ["relay-log wait"]
    assert p.factor == pytest.approx(2.0)
    assert p.unknown == (
        "redo log fsync: not timed (performance_schema's file summary)",
        "binary log fsync: not timed (performance_schema's file summary)",
    )


def test_an_applier_waiting_for_the_receiver_gains_nothing_unless_the_receiver_is_relaxed() -> None:
    # The e2e journal story's first step: busy 58 %, the redo fsync relaxed alone.
    waiting = ApplierCost(rate=654.0, busy=0.58, relay_waiting=0.1, binlog_fsync_s_per_s=0.2,
                          binlog_fsyncs_per_s=654.0, redo_fsyncs_per_s=660.0)  # fmt: skip
    flush_only = predict_durability({"innodb_flush_log_at_trx_commit": ("1", "2")}, waiting, 724.0)
    assert flush_only is not None and flush_only.factor == 1.0 and flush_only.predicted == 654.0
    assert flush_only.note is not None and "idle 42% of the window" in flush_only.note
    assert flush_only.removed  # the cost is still shown: it is what the change takes away
    with_relay = predict_durability(
        {"innodb_flush_log_at_trx_commit": ("1", "2"), "sync_relay_log": ("1", "0")}, waiting, None
    )
    assert with_relay is not None and with_relay.note is None and with_relay.factor > 1.0


def test_a_receive_bound_replica_is_bounded_by_its_receiver_without_relay_log_fsyncs() -> None:
    # The lab's phase A is receive-bound: its receiver spent 82 % of its time in relay-log
    # fsyncs (performance_schema), so without them it receives 1 / 0.18 = 5.6× as fast, less
    # than the applier alone would allow (capped at 10×).
    bound = replace(LAB_A, relay_log_fsync_s_per_s=0.82, receive_bound=0.95)
    p = predict_durability(ALL_RELAXED, bound, None)
    assert p is not None and not p.capped
    assert p.factor == pytest.approx(1 / 0.18)
    assert p.note is not None and p.note.startswith("the receiver bounds it: its relay-log fsyncs")
    # Apply-bound (backlog mostly received): the receiver bounds nothing.
    applying = replace(bound, receive_bound=0.1)
    unbound = predict_durability(ALL_RELAXED, applying, None)
    assert unbound is not None and unbound.note is None
    assert unbound.factor == predict_durability(ALL_RELAXED, LAB_A, None).factor  # type: ignore[union-attr]
    # sync_relay_log kept: the receiver is not sped up, nothing to bound with.
    kept = predict_durability({"sync_binlog": ("1", "0")}, bound, None)
    assert kept is not None and kept.note is None


def _poll(ts: float, backlog: int, busy: int, **fsync: float | None) -> CostPoll:
    """A 1 s poll at 3,000 trx/s from the source; receive-bound when it holds a backlog."""
    verdict = Verdict.RECEIVE_BOUND if backlog else Verdict.CAUGHT_UP
    point = Point(ts, backlog / 3_000, verdict, 700.0 if backlog else 3_000.0, 3_000.0,
                  backlog, backlog - 100 if backlog else 0)  # fmt: skip
    return CostPoll(point, busy=busy, relay_waiting=0, **fsync)


def test_the_cost_is_read_over_the_polls_with_a_backlog_only() -> None:
    """A caught-up replica is idle: its polls said nothing of the applier's cost per
    transaction, and mixed in they halved the busy share the fsync times are set against."""
    behind = [_poll(t, 5_000, 1, binlog_fsync_s_per_s=0.2, binlog_fsyncs_per_s=700.0)
              for t in range(10)]  # fmt: skip
    idle = [_poll(10 + t, 0, 0, binlog_fsyncs_per_s=3_000.0) for t in range(10)]
    cost = window_cost(behind + idle)
    assert cost.rate == pytest.approx(700.0)
    assert cost.busy == pytest.approx(1.0)
    assert cost.binlog_fsync_s_per_s == pytest.approx(0.2)
    assert cost.binlog_fsyncs_per_s == pytest.approx(700.0)  # the timed polls' count
    assert cost.receive_bound == pytest.approx(1.0)


def test_too_few_polls_behind_give_no_rate() -> None:
    cost = window_cost([_poll(0, 5_000, 1), _poll(1, 5_000, 1), _poll(2, 0, 0)])
    assert cost.rate is None and cost.busy == pytest.approx(1.0)
