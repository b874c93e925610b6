"""Is the heartbeat writer alive? Its own row's age on the source."""

from __future__ import annotations

import pytest

from lagscope.analysis.heartbeat import STALE_MIN_S, stale_after_s, writer_stopped_since


def test_the_threshold_is_ten_intervals_never_under_five_seconds() -> None:
    assert stale_after_s(0.25) == STALE_MIN_S == 5.0
    assert stale_after_s(1.0) == pytest.approx(10.0)


def test_a_row_that_keeps_advancing_is_fresh() -> None:
    assert writer_stopped_since(999.8, 1000.0, 0.25) is None
    assert writer_stopped_since(995.0, 1000.0, 0.25) is None  # exactly 5 s: not yet


def test_a_row_older_than_the_threshold_is_a_stopped_writer_since_its_last_beat() -> None:
    # A cluster seen once: the writer's last beat 2,734 s before the read.
    assert writer_stopped_since(1000.0 - 2734, 1000.0, 1.0) == pytest.approx(1000.0 - 2734)
    assert writer_stopped_since(994.9, 1000.0, 0.25) == pytest.approx(994.9)


def test_a_pt_heartbeat_at_a_slow_interval_gets_more_room() -> None:
    assert writer_stopped_since(992.0, 1000.0, 1.0) is None  # 8 s < 10 intervals
    assert writer_stopped_since(989.0, 1000.0, 1.0) == pytest.approx(989.0)


def test_no_row_on_the_source_is_not_a_stopped_writer() -> None:
    assert writer_stopped_since(None, 1000.0, 0.25) is None
