"""The pure parts of ``GET /series``: which table, which buckets, the SQL switches, the query.

The table rule (docs/architecture.md, "Storage and time"): the coarsest table whose resolution is at
most the bucket width the points ask for; buckets are whole multiples of that resolution, aligned on
the epoch, and never more than ``points`` of them however the range falls.
"""

from __future__ import annotations

import typing
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from sqlalchemy import column
from sqlalchemy.dialects import mysql, postgresql, sqlite

from lagscope.analysis.buckets import (
    RESOLUTION_US,
    BucketPlan,
    Resolution,
    choose_resolution,
    plan_buckets,
)
from lagscope.api.schemas.series import MetricName, SeriesQuery
from lagscope.history.series import (
    METRICS,
    Point,
    _IntDiv,
    _Real,
    merge_points,
)

S = 1_000_000
MINUTE, HOUR, DAY = 60 * S, 3600 * S, 86_400 * S
NOW = 1_795_300_000 * S  # 2026-11-21, not aligned on anything in particular
ALL: list[Resolution] = ["raw", "1m", "1h"]


def choose(span_us: int, points: int, available: list[Resolution] = ALL, **kw) -> Resolution:
    return choose_resolution(NOW - span_us, NOW, points, available, **kw)


@pytest.mark.parametrize(
    ("span_us", "points", "expected"),
    [
        (HOUR, 500, "raw"),  # 7.2 s buckets
        (DAY, 2000, "raw"),  # 43 s: a 1-minute row would be too coarse
        (2 * DAY, 2000, "1m"),  # 86 s
        (DAY, 500, "1m"),  # 173 s
        (30 * DAY, 2000, "1m"),  # 21.6 min
        (30 * DAY, 500, "1h"),  # 86.6 min ≥ 1 h: the 1-hour table, as 2-hour buckets
        (730 * DAY, 500, "1h"),
        (HOUR, 1, "1h"),  # one bucket over an hour
    ],
)
def test_the_coarsest_table_that_is_fine_enough(span_us, points, expected):
    assert choose(span_us, points) == expected


def test_a_metric_without_rollups_always_reads_raw():
    assert choose(730 * DAY, 500, ["raw"]) == "raw"


def test_a_table_whose_retention_misses_the_start_is_passed_over():
    kept = {"raw": NOW - 3 * DAY, "1m": NOW - 60 * DAY, "1h": NOW - 730 * DAY}
    # 70 days at 2000 points asks for 50-minute buckets: 1-minute rows, but they are kept 60 days.
    assert choose(70 * DAY, 2000) == "1m"
    assert choose(70 * DAY, 2000, oldest_us=kept) == "1h"
    assert choose(50 * DAY, 2000, oldest_us=kept) == "1m"
    # Older than every table: the coarsest, which kept the most.
    assert choose(729 * DAY, 2000, oldest_us={**kept, "1h": NOW - DAY}) == "1h"


def test_thirty_days_at_500_points_are_2_hour_buckets_of_the_hourly_table():
    plan = plan_buckets(NOW - 30 * DAY, NOW, 500, "1h")
    assert plan.width_us == 2 * HOUR
    assert plan.origin_us % (2 * HOUR) == 0
    assert plan.lo_us == (NOW - 30 * DAY) // HOUR * HOUR  # the hour row holding start is read
    assert 360 <= plan.max_buckets <= 361


def test_one_point_is_one_bucket_from_the_start():
    plan = plan_buckets(NOW - 7 * DAY, NOW, 1, "1h")
    assert plan.max_buckets == 1
    assert plan.origin_us == plan.lo_us


def test_buckets_stay_put_while_a_live_window_slides():
    a = plan_buckets(NOW - HOUR, NOW, 500, "raw")
    b = plan_buckets(NOW - HOUR + 3 * S, NOW + 3 * S, 500, "raw")
    assert a.width_us == b.width_us
    assert a.origin_us % a.width_us == b.origin_us % b.width_us == 0


spans = st.integers(min_value=1, max_value=731 * DAY)
starts = st.integers(min_value=0, max_value=NOW)


@given(start=starts, span=spans, points=st.integers(1, 2000), resolution=st.sampled_from(ALL))
def test_never_more_buckets_than_points_and_rows_never_straddle(start, span, points, resolution):
    plan = plan_buckets(start, start + span, points, resolution)
    res = RESOLUTION_US[resolution]
    assert plan.width_us % res == 0 and plan.width_us > 0
    assert plan.origin_us <= plan.lo_us <= start
    assert plan.origin_us % res == 0 or resolution == "raw"
    assert plan.max_buckets <= points
    # The last row read falls in a bucket the count allows.
    last = start + span - 1
    assert (last - plan.origin_us) // plan.width_us < points


@given(start=starts, span=spans, points=st.integers(2, 2000))
def test_buckets_are_not_needlessly_coarse(start, span, points):
    """Within one table row of the width that would give exactly ``points − 1`` buckets."""
    resolution = choose_resolution(start, start + span, points, ALL)
    plan = plan_buckets(start, start + span, points, resolution)
    ideal = -(-(start + span - plan.lo_us) // (points - 1))
    assert plan.width_us < ideal + RESOLUTION_US[resolution]


def test_bucket_plan_counts_from_origin():
    plan = BucketPlan("1m", 10 * MINUTE, 0, 5 * MINUTE, 25 * MINUTE)
    assert plan.max_buckets == 3


def test_integer_division_is_portable():
    a, b = column("a"), column("b")
    assert str(_IntDiv(a, b).compile(dialect=sqlite.dialect())) == "(a) / (b)"
    assert str(_IntDiv(a, b).compile(dialect=postgresql.dialect())) == "(a) / (b)"
    # MySQL's "/" is decimal division rounded to 4 places (FLOOR would put 0.99999 in bucket 1).
    assert str(_IntDiv(a, b).compile(dialect=mysql.dialect())) == "(a) DIV (b)"
    assert "DOUBLE PRECISION" in str(_Real(a).compile(dialect=postgresql.dialect()))
    assert str(_Real(a).compile(dialect=mysql.dialect())) == "(a + 0e0)"


def test_merging_a_finer_tail_into_a_bucket():
    coarse: Point = {"t": 7, "min": 1.0, "avg": 1.0, "max": 2.0, "last": 1.5, "n": 3600}
    tail: Point = {"t": 7, "min": 0.5, "avg": 500.0, "max": 500.0, "last": 0.5, "n": 5}
    merged = merge_points(coarse, tail)
    assert merged == {
        "t": 7, "min": 0.5, "avg": pytest.approx((3600 + 2500) / 3605), "max": 500.0,
        "last": 0.5, "n": 3605,
    }  # fmt: skip
    # A rollup that keeps no min/max/last (rates) leaves the tail's; a tail without a newest
    # value leaves the coarse one's.
    avg_only: Point = {**coarse, "min": None, "max": None, "last": None}
    assert merge_points(avg_only, tail) | {"avg": 0} == {**merged, "last": 0.5, "avg": 0}
    assert merge_points(coarse, {**tail, "last": None})["last"] == 1.5


def test_the_schema_offers_exactly_the_metrics_the_service_knows():
    assert set(typing.get_args(MetricName)) == set(METRICS)
    assert {m.per for m in METRICS.values()} == {"channel", "instance"}


def test_raw_only_and_partial_rollup_metrics_say_so():
    assert METRICS["round_trip_s"].note and "poll resolution" in METRICS["round_trip_s"].note
    assert METRICS["seconds_behind_source"].note
    assert METRICS["lag_s"].note is None
    assert "min" in (METRICS["apply_rate"].note or "")


# --- the query parameters ------------------------------------------------------------------


def query(**params) -> SeriesQuery:
    return SeriesQuery.model_validate({"metric": ["lag_s"], "channel_id": [1], **params})


def error_fields(params: dict) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        query(**params)
    return [".".join(map(str, e["loc"])) for e in caught.value.errors()]


def test_times_are_iso_with_offset_or_epoch_milliseconds():
    q = query(start="2026-11-21T08:00:00+08:00", end="1795300000000")
    assert q.start == datetime(2026, 11, 21, 0, 0, tzinfo=UTC)
    assert q.end == datetime.fromtimestamp(1_795_300_000, UTC)
    assert query(start="2026-11-21T00:00:00Z", end="2026-11-21T01:00:00Z").start == q.start


def test_default_range_is_the_last_hour():
    q = query()
    assert q.start is not None and q.end is not None
    assert q.end - q.start == timedelta(hours=1)
    assert abs(datetime.now(UTC) - q.end) < timedelta(minutes=1)
    only_end = query(end="2026-11-21T01:00:00Z")
    assert only_end.start == datetime(2026, 11, 21, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"start": "2026-11-21T00:00:00"}, "start"),  # naive: which zone?
        ({"start": "yesterday"}, "start"),
        ({"start": "999999999999999"}, "start"),  # the year 33658
        ({"start": "2026-11-21T01:00:00Z", "end": "2026-11-21T01:00:00Z"}, "end"),
        ({"start": "2024-01-01T00:00:00Z", "end": "2026-11-21T00:00:00Z"}, "end"),
        ({"points": 0}, "points"),
        ({"points": 2001}, "points"),
        ({"metric": "lag; DROP TABLE samples"}, "metric"),
        ({"channel_id": [0]}, "channel_id.0"),
        ({"unknown": 1}, "unknown"),
    ],
)
def test_bad_parameters_name_their_field(params, field):
    assert field in error_fields(params)
