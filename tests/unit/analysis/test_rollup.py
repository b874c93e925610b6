"""rollup and merge: known answers, and merge(rollup(·, 1 min), 1 h) == rollup(·, 1 h)."""

from __future__ import annotations

import math
from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lagscope.analysis.codes import Verdict
from lagscope.analysis.rollup import Bucket, RawPoint, merge, rollup

MIN_US = 60_000_000
HOUR_US = 60 * MIN_US
T0 = 1_700_000_000 // 3600 * HOUR_US  # an hour boundary


def point(
    ts_us: int,
    verdict: Verdict = Verdict.CAUGHT_UP,
    lag_s: float | None = None,
    trx_behind: int | None = None,
    not_received: int | None = None,
    received_not_applied: int | None = None,
    apply_rate: float | None = None,
    source_rate: float | None = None,
) -> RawPoint:
    return RawPoint(
        ts_us,
        int(verdict),
        lag_s,
        trx_behind,
        not_received,
        received_not_applied,
        apply_rate,
        source_rate,
    )


def test_one_minute_bucket_known_answer() -> None:
    points = [
        # Given out of order on purpose: "last" means newest by time, not by position.
        point(T0 + 40_000_000, Verdict.APPLY_BOUND, 4.0, 40, 10, 30, 90.0, 100.0),
        point(T0, Verdict.CAUGHT_UP, 0.5, 0, 0, 0, 100.0, 100.0),
        point(T0 + 20_000_000, Verdict.APPLY_BOUND, 2.5, 20, 5, 15, None, 120.0),
        point(T0 + 59_999_999, Verdict.UNREACHABLE),  # nothing known but the verdict
    ]
    assert rollup(points, 60) == [
        Bucket(
            bucket_us=T0,
            samples=4,
            caught_up=1,
            last_verdict=int(Verdict.UNREACHABLE),
            lag_min=0.5,
            lag_avg=7.0 / 3,
            lag_max=4.0,
            lag_last=4.0,
            trx_behind_min=0,
            trx_behind_avg=20.0,
            trx_behind_max=40,
            trx_behind_last=40,
            not_received_avg=5.0,
            not_received_max=10,
            received_not_applied_avg=15.0,
            received_not_applied_max=30,
            apply_rate_avg=95.0,
            source_rate_avg=320.0 / 3,
        )
    ]


def test_buckets_are_aligned_on_the_epoch_and_sorted() -> None:
    points = [point(T0 + 61_000_000, lag_s=1.0), point(T0 + 5, lag_s=2.0), point(T0 - 1, lag_s=3.0)]
    buckets = rollup(points, 60)
    assert [b.bucket_us for b in buckets] == [T0 - MIN_US, T0, T0 + MIN_US]
    assert [b.lag_last for b in buckets] == [3.0, 2.0, 1.0]


def test_bucket_with_no_known_lag_has_none_everywhere() -> None:
    (bucket,) = rollup([point(T0, Verdict.STOPPED), point(T0 + 1, Verdict.STOPPED)], 60)
    assert (bucket.samples, bucket.caught_up) == (2, 0)
    assert (bucket.lag_min, bucket.lag_avg, bucket.lag_max, bucket.lag_last) == (None,) * 4


def test_no_points_no_buckets() -> None:
    assert rollup([], 60) == []
    assert merge([], 3600) == []


@pytest.mark.parametrize("bucket_s", [0, -60])
def test_bucket_size_must_be_positive(bucket_s: int) -> None:
    with pytest.raises(ValueError, match="bucket_s"):
        rollup([point(T0)], bucket_s)


def test_merge_weights_averages_by_sample_count() -> None:
    minute_a = rollup([point(T0 + i, lag_s=1.0, trx_behind=10) for i in range(3)], 60)
    minute_b = rollup([point(T0 + MIN_US, Verdict.STOPPED, lag_s=9.0, trx_behind=2)], 60)
    (hour,) = merge(minute_b + minute_a, 3600)  # order of the input does not matter
    assert hour.bucket_us == T0
    assert (hour.samples, hour.caught_up, hour.last_verdict) == (4, 3, int(Verdict.STOPPED))
    assert hour.lag_avg == pytest.approx((3 * 1.0 + 9.0) / 4)  # not (1 + 9) / 2
    assert (hour.lag_min, hour.lag_max, hour.lag_last) == (1.0, 9.0, 9.0)
    assert (hour.trx_behind_min, hour.trx_behind_max, hour.trx_behind_last) == (2, 10, 2)


def test_merge_last_skips_newer_buckets_without_a_value() -> None:
    minutes = rollup([point(T0, lag_s=5.0), point(T0 + MIN_US, Verdict.UNREACHABLE)], 60)
    (hour,) = merge(minutes, 3600)
    assert hour.lag_last == 5.0
    assert hour.last_verdict == int(Verdict.UNREACHABLE)


def test_merge_with_a_metric_known_in_part_of_a_minute_is_sample_weighted() -> None:
    # Documented limit: per-metric counts are not stored, so a minute whose lag was known in one
    # sample of two weighs as two samples. The raw average would be (10 + 0 + 0) / 3.
    minute_a = rollup([point(T0, lag_s=10.0), point(T0 + 1, Verdict.UNREACHABLE)], 60)
    minute_b = rollup([point(T0 + MIN_US, lag_s=0.0), point(T0 + MIN_US + 1, lag_s=0.0)], 60)
    (hour,) = merge(minute_a + minute_b, 3600)
    assert hour.lag_avg == pytest.approx(5.0)


# --- property: straight to 1 h == 1 min then merged to 1 h ----------------------------------------

_LAG = st.floats(0, 1e6, allow_nan=False)
_COUNT = st.integers(0, 2**40)
_RATE = st.floats(0, 1e6, allow_nan=False)


@st.composite
def minute_of_points(draw: st.DrawFn, minute: int) -> list[RawPoint]:
    """Points in one minute; each metric is known in all of them or none (see rollup's doc)."""
    start = T0 + minute * MIN_US
    offsets = draw(st.lists(st.integers(0, MIN_US - 1), min_size=1, max_size=8, unique=True))
    lag, trx, not_received, not_applied, apply, source = (draw(st.booleans()) for _ in range(6))
    points = []
    for offset in offsets:
        points.append(
            RawPoint(
                ts_us=start + offset,
                verdict=int(draw(st.sampled_from(Verdict))),
                lag_s=draw(_LAG) if lag else None,
                trx_behind=draw(_COUNT) if trx else None,
                not_received=draw(_COUNT) if not_received else None,
                received_not_applied=draw(_COUNT) if not_applied else None,
                apply_rate=draw(_RATE) if apply else None,
                source_rate=draw(_RATE) if source else None,
            )
        )
    return points


@st.composite
def points_over_hours(draw: st.DrawFn) -> list[RawPoint]:
    minutes = draw(st.lists(st.integers(0, 3 * 60 - 1), min_size=1, max_size=12, unique=True))
    points = [p for m in minutes for p in draw(minute_of_points(m))]
    return draw(st.permutations(points))


def _close(left: object, right: object) -> bool:
    if isinstance(left, float) and isinstance(right, float):
        return math.isclose(left, right, rel_tol=1e-9, abs_tol=1e-9)
    return left == right


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(points_over_hours())
def test_direct_hourly_rollup_equals_merged_minutes(points: list[RawPoint]) -> None:
    direct = rollup(points, 3600)
    merged = merge(rollup(points, 60), 3600)
    assert len(direct) == len(merged)
    for want, got in zip(direct, merged, strict=True):
        for f in fields(Bucket):
            w, g = getattr(want, f.name), getattr(got, f.name)
            assert _close(w, g), (f.name, w, g)


def test_timeline_lag_is_rolled_up_as_avg_and_max_skipping_unknowns() -> None:
    def raw(second: int, timeline: float | None) -> RawPoint:
        return RawPoint(second * 1_000_000, 2, 5.0, 9, 9, 0, 1.0, 1.0, timeline)

    minute = rollup([raw(0, 10.0), raw(1, None), raw(2, 20.0), raw(61, 4.0)], 60)
    assert [(b.timeline_lag_avg, b.timeline_lag_max) for b in minute] == [(15.0, 20.0), (4.0, 4.0)]
    hour = merge(minute, 3600)
    # Weighted by samples (3 and 1): (15 × 3 + 4 × 1) / 4 = 12.25 — the unknown poll weighs
    # in, as for every rolled-up metric (see the module docstring).
    assert (hour[0].timeline_lag_avg, hour[0].timeline_lag_max) == (12.25, 20.0)
