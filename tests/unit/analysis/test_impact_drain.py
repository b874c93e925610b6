"""Impact rules for a draining backlog: no credit for a drain already under way; capacity, catch-up
time against the ETA, and the receive side for network steps (analysis/impact/,
analysis/drain.py).

Series are 1 Hz polls with known backlogs: a replica applying ``apply`` trx/s while the source
writes ``source`` trx/s drains ``apply − source`` trx/s; lag = backlog ÷ source rate.
"""

from __future__ import annotations

import random

from lagscope.analysis.codes import Verdict
from lagscope.analysis.drain import caught_up_at, draining, eta_before
from lagscope.analysis.impact import ImpactVerdict, Point, impact

T = 50_000.0
W, SETTLE = 120.0, 10.0
SOURCE = 100.0


def drain_series(backlog_at_step: float, apply_before: float, apply_after: float) -> list[Point]:
    """Polls over [T − W, T + SETTLE + W): a backlog draining at ``apply − SOURCE`` trx/s."""
    rng = random.Random(7)
    points, backlog = [], backlog_at_step + (apply_before - SOURCE) * W
    for i in range(int(W + SETTLE + W)):
        ts = T - W + i
        apply = apply_before if ts < T else apply_after
        if backlog <= 0:
            apply = SOURCE  # caught up: it applies what the source writes
        noisy = apply * rng.uniform(0.97, 1.03)
        behind = max(0, round(backlog))
        verdict = Verdict.APPLY_BOUND if behind > 10 else Verdict.CAUGHT_UP
        lag = behind / SOURCE + rng.uniform(0.0, 0.2)
        points.append(Point(ts, lag, verdict, noisy, SOURCE, behind, 0))
        backlog = max(0.0, backlog - (apply - SOURCE))
    return points


def judge(points: list[Point], network: bool = False) -> tuple[ImpactVerdict, str]:
    result = impact(points, T, width_s=W, settle_s=SETTLE, network=network)
    return result.verdict, result.reason


def test_drain_helpers_on_a_known_drain() -> None:
    points = drain_series(backlog_at_step=4000, apply_before=300, apply_after=300)
    before = [p for p in points if p.ts < T]
    assert draining(before)
    eta = eta_before(before, T)
    assert eta is not None and 18 <= eta <= 22  # 4000 trx at a gain of ~200 trx/s
    took = caught_up_at([p for p in points if p.ts >= T], T)
    assert took is not None and 18 <= took <= 22


def test_a_step_inside_a_drain_gets_no_credit() -> None:
    # Lag p50 falls from ~40 s to ~0 s, as it would have without the step: the old rule said
    # "improved"; the drain kept its pace, so nothing changed that the step could claim.
    verdict, reason = judge(drain_series(4000, apply_before=300, apply_after=300))
    assert verdict is ImpactVerdict.NO_CLEAR_CHANGE, reason
    assert reason.startswith("already catching up before the step")


def test_a_drain_that_ends_before_the_after_window_is_not_measurable() -> None:
    verdict, reason = judge(drain_series(1000, apply_before=300, apply_after=300))
    assert verdict is ImpactVerdict.NOT_MEASURABLE
    assert reason.startswith("caught up; capacity after the step not measurable")


def test_a_step_that_raises_apply_capacity_inside_a_drain_is_improved() -> None:
    # Predicted: 12,000 trx at +200 trx/s = 60 s. With 600 trx/s it takes 24 s.
    verdict, reason = judge(drain_series(12_000, apply_before=300, apply_after=600))
    assert verdict is ImpactVerdict.IMPROVED, reason
    assert "where 60 s was predicted" in reason
    assert "the apply rate rose from 29" in reason or "the apply rate rose from 30" in reason


def test_a_step_that_slows_a_drain_is_worse() -> None:
    verdict, reason = judge(drain_series(12_000, apply_before=300, apply_after=150))
    assert verdict is ImpactVerdict.WORSE, reason


def receive_series(far: bool) -> list[Point]:
    """A network step at T: the far replica's link got faster; the near one never waited."""
    rng = random.Random(3 if far else 4)
    points = []
    for i in range(int(W + SETTLE + W)):
        ts = T - W + i
        if far and ts < T:
            missing, lag = round(rng.uniform(400, 600)), rng.uniform(4.0, 6.0)
        else:
            missing, lag = round(rng.uniform(0, 4)), rng.uniform(0.1, 0.5)
        verdict = Verdict.RECEIVE_BOUND if missing > 10 else Verdict.CAUGHT_UP
        apply = SOURCE * rng.uniform(0.97, 1.03)
        points.append(Point(ts, lag, verdict, apply, SOURCE, missing, missing))
    return points


def test_a_network_step_is_credited_on_the_far_replica_only() -> None:
    far, far_reason = judge(receive_series(far=True), network=True)
    near, near_reason = judge(receive_series(far=False), network=True)
    assert far is ImpactVerdict.IMPROVED, far_reason
    assert "not received fell from 4" in far_reason
    assert near is ImpactVerdict.NO_CLEAR_CHANGE, near_reason
