"""The shared percentile (one definition for impact and compare) and step helpers."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lagscope.analysis.impact import Window
from lagscope.analysis.stats import p95, percentile
from lagscope.analysis.steps import group_in_bursts, is_network_step, step_frame


def test_p95_known_answers() -> None:
    assert p95([float(v) for v in range(1, 11)]) == pytest.approx(9.55)
    assert p95([3.0]) == 3.0
    assert p95([]) is None
    assert percentile([10.0, 0.0], 0.5) == 5.0
    with pytest.raises(ValueError):
        percentile([1.0], 1.0)


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=50))
def test_p95_equals_the_inclusive_quantiles_the_reports_used(values: list[float]) -> None:
    expected = statistics.quantiles(values, n=20, method="inclusive")[-1]
    assert p95(values) == pytest.approx(expected, rel=1e-9, abs=1e-6)


def test_events_seconds_apart_make_one_step() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    times = [t0 + timedelta(seconds=s) for s in (30, 0, 8, 100, 104)]
    bursts = group_in_bursts(times, lambda t: t, group_s=10)
    assert [[int((t - t0).total_seconds()) for t in b] for b in bursts] == [
        [0, 8],
        [30],
        [100, 104],
    ]


def test_network_steps() -> None:
    assert is_network_step(["slave_compressed_protocol"], [])
    assert not is_network_step(["slave_compressed_protocol", "sync_binlog"], [])
    assert is_network_step([], ["Network"])
    assert not is_network_step([], ["disk"])
    assert not is_network_step(["sync_binlog"], ["network"])


def test_step_frame_cuts_the_uncertain_stretch_and_clips_at_neighbours() -> None:
    # Previous step 100 s ago, next one's change began 200 s after, this change began (last read
    # of the old value) 2 s before the step: before = [−100 + 30, −2), after = [30, 200).
    frame = step_frame(-100.0, 200.0, -2.0, width_s=600, settle_s=30)
    assert (frame.before, frame.after) == (Window(-70.0, -2.0), Window(30.0, 200.0))
    assert frame.span == (-70.0, 200.0)
    # A next step whose change may predate this step: clipped at 0, the after window is empty.
    alone = step_frame(None, -5.0, 0.0, width_s=60, settle_s=10)
    assert alone.next_s == 0.0 and alone.after == Window(10.0, 10.0)
    assert alone.before == Window(-60.0, 0.0)
