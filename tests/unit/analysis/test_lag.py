"""Heartbeat lag and its resolution, the best lag, and disagreement between sources."""

from __future__ import annotations

import pytest

from lagscope.analysis.codes import LagSource
from lagscope.analysis.lag import (
    BestLag,
    GtidEvidence,
    best_lag,
    disagreement,
    heartbeat_lag,
    heartbeat_resolution,
    sbm_contradicted,
)
from lagscope.collectors.snapshot import ClockReading


def test_heartbeat_lag_moves_the_read_time_onto_the_source_clock() -> None:
    # Source clock runs 2 s ahead of the poller: at poller time 1000 the source says 1002.
    assert heartbeat_lag(997.5, 1000.0, 2.0) == pytest.approx(4.5)


def test_heartbeat_lag_with_a_source_clock_behind() -> None:
    assert heartbeat_lag(990.0, 1000.0, -3.0) == pytest.approx(7.0)


def test_heartbeat_lag_is_clamped_at_zero() -> None:
    assert heartbeat_lag(1000.4, 1000.0, 0.0) == 0.0


def test_resolution_adds_interval_offset_uncertainty_and_half_round_trip() -> None:
    clock = ClockReading(offset_s=12.0, resolution_s=0.004)
    assert heartbeat_resolution(0.25, clock, 0.010) == pytest.approx(0.25 + 0.004 + 0.005)


def test_resolution_without_a_source_clock_reading() -> None:
    assert heartbeat_resolution(1.0, None, 0.2) == pytest.approx(1.1)


@pytest.mark.parametrize(
    ("heartbeat", "applier", "sbm", "expected"),
    [
        (0.3, 5.0, 7, BestLag(0.3, LagSource.HEARTBEAT)),
        (None, 5.0, 7, BestLag(5.0, LagSource.APPLIER)),
        (None, None, 7, BestLag(7.0, LagSource.SBM)),
        (0.0, None, None, BestLag(0.0, LagSource.HEARTBEAT)),  # 0 is a reading, not "missing"
        (None, None, None, BestLag(None, None)),
    ],
)
def test_best_lag_prefers_heartbeat_then_applier_then_sbm(
    heartbeat: float | None, applier: float | None, sbm: int | None, expected: BestLag
) -> None:
    assert best_lag(heartbeat, applier, sbm) == expected


def test_best_lag_from_sbm_is_a_float() -> None:
    assert isinstance(best_lag(None, None, 7).lag_s, float)


def test_sbm_zero_while_heartbeat_forty_is_flagged() -> None:
    assert disagreement(0, 40.0, None) is True


def test_sbm_three_vs_heartbeat_three_point_four_agrees() -> None:
    assert disagreement(3, 3.4, None) is False


def test_null_sbm_never_disagrees() -> None:
    assert disagreement(None, 40.0, None) is False
    assert disagreement(None, 40.0, 39.0) is False


def test_single_or_no_source_never_disagrees() -> None:
    assert disagreement(12, None, None) is False
    assert disagreement(None, None, None) is False


def test_threshold_is_exclusive() -> None:
    assert disagreement(10, 5.0, None) is False  # exactly 5 s apart
    assert disagreement(10, 4.9, None) is True


def test_large_resolution_widens_the_tolerance_by_a_second_for_sbm() -> None:
    # Resolution 6 s: SBM pairs tolerate 7 s, precise pairs 6 s.
    assert disagreement(0, 6.9, None, resolution_s=6.0) is False
    assert disagreement(0, 7.1, None, resolution_s=6.0) is True
    assert disagreement(None, 6.5, 0.0, resolution_s=6.0) is True


def test_applier_vs_sbm_and_applier_vs_heartbeat() -> None:
    assert disagreement(0, None, 30.0) is True
    assert disagreement(None, 30.0, 0.0) is True
    assert disagreement(2, 2.5, 1.8) is False


def test_custom_threshold() -> None:
    assert disagreement(0, 3.0, None, threshold_s=2.0) is True


@pytest.mark.parametrize(
    ("sbm", "not_received", "source_rate", "expected"),
    [
        (0, 40_000, 2_000.0, True),  # phase A: 20 s of the source's work not received, SBM 0
        (0, 3_000, 2_000.0, False),  # 1.5 s in flight at 2,000 trx/s: SBM 0 may be right
        (0, 8, None, False),  # a handful in flight, rate unknown: no evidence
        (0, 500, None, True),  # rate unknown (source missed the tick), hundreds missing
        (0, 50, 0.0, True),  # the source went idle and the replica still lacks 50
        (3, 40_000, 2_000.0, False),  # only a 0 is the known failure; SBM 3 is a reading
        (None, 40_000, 2_000.0, False),  # NULL is not a reading at all
        (0, None, 2_000.0, False),  # no GTID counts: nothing contradicts SBM
    ],
)
def test_sbm_zero_is_contradicted_only_by_a_real_receive_backlog(
    sbm: int | None, not_received: int | None, source_rate: float | None, expected: bool
) -> None:
    assert sbm_contradicted(sbm, not_received, source_rate) is expected


def test_a_contradicted_sbm_leaves_the_lag_unknown_not_zero() -> None:
    assert best_lag(None, None, 0, sbm_contradicted=True) == BestLag(None, None)
    # Any better source still wins; the contradiction only removes SBM's 0.
    assert best_lag(None, None, 0, timeline_lag_s=21.0, sbm_contradicted=True) == BestLag(
        21.0, LagSource.TIMELINE
    )


# Seen once: a stopped heartbeat writer showed caught-up replicas 2,734 s behind.
NOTHING_MISSING = GtidEvidence(trx_behind=0, not_received=0, received_not_applied=0)


def test_a_stale_heartbeat_is_skipped_in_the_best_lag_order() -> None:
    got = best_lag(2734.0, None, 0, timeline_lag_s=0.0, heartbeat_stale=True)
    assert got == BestLag(0.0, LagSource.TIMELINE)
    assert best_lag(2734.0, None, 4, heartbeat_stale=True) == BestLag(4.0, LagSource.SBM)
    assert best_lag(2734.0, None, None, heartbeat_stale=True) == BestLag(None, None)


def test_a_stale_heartbeat_is_skipped_even_on_a_replica_far_behind() -> None:
    # The backlog's own figures say how far behind it is; the heartbeat does not.
    behind = GtidEvidence(trx_behind=5000, not_received=0, received_not_applied=5000)
    got = best_lag(2734.0, None, 300, timeline_lag_s=310.0, heartbeat_stale=True, gtid=behind)
    assert got == BestLag(310.0, LagSource.TIMELINE)


def test_nothing_missing_overrules_a_heartbeat_claiming_lag() -> None:
    # The writer has just stopped (not stale yet): the GTID sets already say nothing is missing.
    got = best_lag(40.0, None, 0, timeline_lag_s=0.2, gtid=NOTHING_MISSING)
    assert got == BestLag(0.2, LagSource.TIMELINE)
    # Seen live with a looser bound: a row 1.4 s old turned a caught-up replica apply_bound.
    got = best_lag(1.4, None, 0, timeline_lag_s=0.0, gtid=NOTHING_MISSING)
    assert got == BestLag(0.0, LagSource.TIMELINE)
    assert best_lag(1.0, None, 0, gtid=NOTHING_MISSING) == BestLag(0.0, LagSource.SBM)


def test_nothing_missing_leaves_a_figure_that_says_caught_up() -> None:
    # A writer late by 0.8 s on a busy box: still under the caught-up bound, still the heartbeat.
    got = best_lag(0.83, None, 0, timeline_lag_s=0.0, gtid=NOTHING_MISSING)
    assert got == BestLag(0.83, LagSource.HEARTBEAT)


def test_nothing_missing_overrules_every_source_that_claims_lag() -> None:
    got = best_lag(40.0, 30.0, 20, timeline_lag_s=25.0, gtid=NOTHING_MISSING)
    assert got == BestLag(None, None)
    assert best_lag(40.0, 30.0, 0, gtid=NOTHING_MISSING) == BestLag(0.0, LagSource.SBM)


@pytest.mark.parametrize(
    "evidence",
    [
        GtidEvidence(trx_behind=1, not_received=0, received_not_applied=1),
        GtidEvidence(trx_behind=0, not_received=0, received_not_applied=3),
        GtidEvidence(trx_behind=None, not_received=None, received_not_applied=None),
        None,
    ],
)
def test_a_backlog_or_no_counts_never_removes_a_lag_figure(evidence: GtidEvidence | None) -> None:
    # GTID evidence only removes a figure when it says nothing is missing: a replica with any
    # backlog keeps its heartbeat lag, however large.
    got = best_lag(40.0, None, 0, timeline_lag_s=0.0, gtid=evidence)
    assert got == BestLag(40.0, LagSource.HEARTBEAT)
