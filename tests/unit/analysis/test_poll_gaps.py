"""A missed tick is found at the next one, with the most specific reason the store knows."""

from __future__ import annotations

import pytest

from lagscope.analysis.poll_gaps import GAP_FACTOR, GapReason, tick_gap


@pytest.mark.parametrize("width", [0.4, 1.0, 1.3, GAP_FACTOR])
def test_ticks_on_time_or_jittered_are_no_gap(width: float) -> None:
    assert tick_gap(100.0, 0.05, None, 100.0 + width, 1.0) is None


def test_the_first_tick_has_nothing_to_compare_with() -> None:
    assert tick_gap(None, None, None, 100.0, 1.0) is None


def test_a_hole_with_nothing_known_is_not_polled_and_counts_its_ticks() -> None:
    gap = tick_gap(100.0, 0.05, None, 105.0, 1.0)
    assert gap is not None
    assert (gap.started_at, gap.ended_at, gap.missed) == (100.0, 105.0, 4)
    assert gap.reason is GapReason.NOT_POLLED
    assert "lost mid-tick" in gap.detail


def test_one_missed_tick_at_a_longer_interval() -> None:
    gap = tick_gap(100.0, 0.2, None, 110.0, 5.0)
    assert gap is not None and gap.missed == 1


def test_an_expiry_inside_the_hole_names_the_queue() -> None:
    gap = tick_gap(100.0, 0.05, 102.0, 104.0, 1.0)
    assert gap is not None and gap.reason is GapReason.EXPIRED


@pytest.mark.parametrize("expired_at", [99.0, 100.0, 104.5])
def test_an_expiry_outside_the_hole_says_nothing_of_it(expired_at: float) -> None:
    gap = tick_gap(100.0, 0.05, expired_at, 104.0, 1.0)
    assert gap is not None and gap.reason is GapReason.NOT_POLLED


def test_a_slow_previous_tick_explains_the_skipped_ones_first() -> None:
    gap = tick_gap(100.0, 3.2, 102.0, 104.0, 1.0)
    assert gap is not None and gap.reason is GapReason.SLOW
    assert "3.2 s" in gap.detail


def test_a_takeover_names_the_owner_lost_and_the_one_that_took_over():
    gap = tick_gap(100.0, 0.05, None, 103.0, 1.0, "host:11:aa", "host:12:bb")
    assert gap is not None and gap.reason == GapReason.NOT_POLLED
    assert "host:11:aa stopped recording" in gap.detail and "host:12:bb took" in gap.detail
    same = tick_gap(100.0, 0.05, None, 103.0, 1.0, "host:11:aa", "host:11:aa")
    assert same is not None and "host:11:aa" not in same.detail
    unknown = tick_gap(100.0, 0.05, None, 103.0, 1.0, None, "host:12:bb")
    assert unknown is not None and "took the cluster over" not in unknown.detail
