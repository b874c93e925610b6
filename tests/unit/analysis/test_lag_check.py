"""The lag check's judgement (analysis/lag_check.py): stale never healthy, a poll's faults, and
the stateless hysteresis, with properties over random lag histories."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lagscope.analysis.lag_check import (
    CANNOT_JUDGE,
    CheckVerdict,
    Poll,
    Thresholds,
    http_status,
    judge_channel,
    reason,
    recovered,
    thresholds,
    worst,
)

V = CheckVerdict
NOW = datetime(2026, 12, 10, 12, 0, 0, tzinfo=UTC)
LIMITS = Thresholds(5.0, 4.0)
STALE_AFTER_S = 3.0


def polls(*lags: float | None, step_s: float = 1.0, newest_age_s: float = 0.2) -> list[Poll]:
    """Polls one ``step_s`` apart, oldest first, the newest ``newest_age_s`` old."""
    count = len(lags)
    return [
        Poll(NOW - timedelta(seconds=newest_age_s + step_s * (count - 1 - i)), lag)
        for i, lag in enumerate(lags)
    ]


def judge(found: list[Poll], limits: Thresholds = LIMITS, **kw: object) -> V:
    return judge_channel(found, NOW, STALE_AFTER_S, limits, **kw).verdict  # type: ignore[arg-type]


def test_caught_up_is_usable_and_answers_200() -> None:
    judged = judge_channel(polls(0.1, 0.2, 0.0), NOW, STALE_AFTER_S, LIMITS)
    assert judged.verdict is V.USABLE and judged.lag_s == 0.0
    assert http_status(judged.verdict) == 200


def test_over_max_lag_is_lagging_429() -> None:
    assert judge(polls(0.1, 5.5)) is V.LAGGING
    assert http_status(V.LAGGING) == 429


def test_exactly_max_lag_is_still_usable_when_it_never_was_over() -> None:
    assert judge(polls(4.5, 5.0)) is V.USABLE


def test_back_under_max_but_not_under_recover_is_recovering() -> None:
    assert judge(polls(6.0, 4.5)) is V.RECOVERING
    assert judge(polls(6.0, 4.5, 4.2, 4.9)) is V.RECOVERING
    assert judge(polls(6.0, 4.5, 4.0)) is V.USABLE  # at recover_lag: usable
    assert judge(polls(6.0, 3.0, 4.5)) is V.USABLE  # it came down to 3 s, then 4.5 is fine


def test_a_window_inside_the_band_is_usable() -> None:
    # The over-max poll has left the window: under max_lag for the whole window.
    assert judge(polls(4.5, 4.6, 4.4)) is V.USABLE


@pytest.mark.parametrize("age_s", [3.5, 60.0, 86400.0])
def test_stale_data_is_never_healthy(age_s: float) -> None:
    judged = judge_channel(polls(0.0, newest_age_s=age_s), NOW, STALE_AFTER_S, LIMITS)
    assert judged.verdict is V.STALE and http_status(judged.verdict) == 503


def test_no_recent_poll_is_stale_and_none_ever_is_not_polled() -> None:
    assert judge([], last_sample_at=NOW - timedelta(minutes=5)) is V.STALE
    assert judge([]) is V.NOT_POLLED
    assert http_status(V.NOT_POLLED) == 503 and http_status(V.NO_REPLICAS) == 503


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"answered": False, "sql_running": None, "io_running": None}, V.UNREACHABLE),
        ({"sql_running": False}, V.STOPPED),
        ({"io_running": False}, V.STOPPED),
        ({"sql_running": False, "broken": True}, V.BROKEN),
        ({"lag_s": None}, V.LAG_UNKNOWN),
    ],
)
def test_a_fault_of_the_newest_poll_wins_over_a_small_lag(
    change: dict[str, object], expected: V
) -> None:
    newest = Poll(NOW, **{"lag_s": 0.0, **change})  # type: ignore[arg-type]
    assert judge([*polls(0.0, 0.0), newest]) is expected
    assert http_status(expected) == 429


def test_caught_up_without_a_lag_figure_is_usable() -> None:
    assert judge([Poll(NOW, None, caught_up=True)]) is V.USABLE


def test_a_fault_in_the_window_counts_as_over_max() -> None:
    window = [*polls(0.0, 0.0), Poll(NOW - timedelta(seconds=1), None, answered=False)]
    assert judge([*window, Poll(NOW, 4.5)]) is V.RECOVERING
    assert judge([*window, Poll(NOW, 1.0)]) is V.USABLE


def test_the_worst_verdict_decides() -> None:
    assert worst([V.USABLE, V.RECOVERING, V.STALE]) is V.RECOVERING
    assert worst([V.USABLE, V.STALE]) is V.STALE
    assert worst([V.LAGGING, V.BROKEN]) is V.BROKEN
    assert worst([V.USABLE, V.USABLE]) is V.USABLE
    assert worst([]) is None


def test_thresholds_are_checked_and_recover_defaults_to_a_share_of_max() -> None:
    assert thresholds(5.0, None, 0.8) == Thresholds(5.0, 4.0)
    assert thresholds(5.0, 5.0, 0.8) == Thresholds(5.0, 5.0)
    for bad in ((0.0, 0.0), (5.0, 6.0), (5.0, -1.0), (float("nan"), 1.0), (float("inf"), 1.0)):
        with pytest.raises(ValueError):
            Thresholds(*bad)


def test_reasons_say_the_figures() -> None:
    assert reason(V.LAGGING, 7.25, LIMITS) == "lag 7.25 s is over max_lag 5 s"
    assert "recover_lag 4 s" in reason(V.RECOVERING, 4.5, LIMITS)
    assert all(reason(v, None, LIMITS) for v in V)


# -- properties -------------------------------------------------------------------------------

LAG = st.one_of(st.none(), st.floats(min_value=0, max_value=20, allow_nan=False))
LAGS = st.lists(LAG, min_size=1, max_size=40)


@st.composite
def limits(draw: st.DrawFn) -> Thresholds:
    max_lag = draw(st.floats(min_value=0.001, max_value=15, allow_nan=False))
    return Thresholds(max_lag, draw(st.floats(min_value=0, max_value=max_lag)))


def walk_back(lags: list[float | None], limit: Thresholds) -> bool:
    """The rule as the docstring says it: the newest poll outside the band decides."""
    for lag in reversed(lags):
        if lag is None or lag > limit.max_lag_s:
            return False
        if lag <= limit.recover_lag_s:
            return True
    return True


@given(LAGS, limits())
def test_the_trigger_is_the_walk_back_rule(lags: list[float | None], limit: Thresholds) -> None:
    assert recovered(lags, limit) == walk_back(lags, limit)


@given(LAGS, limits())
def test_the_newest_lag_alone_decides_outside_the_band(
    lags: list[float | None], limit: Thresholds
) -> None:
    newest = lags[-1]
    if newest is None or newest > limit.max_lag_s:
        assert not recovered(lags, limit)
    elif newest <= limit.recover_lag_s:
        assert recovered(lags, limit)


@given(LAGS, limits(), st.data())
def test_less_lag_never_makes_a_usable_replica_unusable(
    lags: list[float | None], limit: Thresholds, data: st.DataObject
) -> None:
    lower = [
        lag if lag is None else data.draw(st.floats(min_value=0, max_value=lag)) for lag in lags
    ]
    if recovered(lags, limit):
        assert recovered(lower, limit)


@given(st.lists(LAG, min_size=2, max_size=80), limits(), st.integers(min_value=1, max_value=30))
def test_sliding_on_no_flap_inside_the_band(
    history: list[float | None], limit: Thresholds, window: int
) -> None:
    """Poll after poll, each answer from the last ``window`` polls only: it turns unusable only
    on a poll over max_lag, and usable again only on a poll at or under recover_lag or once the
    whole window is back under max_lag."""
    answers = [
        recovered(history[max(0, i + 1 - window) : i + 1], limit) for i in range(len(history))
    ]
    for i in range(1, len(history)):
        newest = history[i]
        seen = history[max(0, i + 1 - window) : i + 1]
        if answers[i - 1] and not answers[i]:
            assert newest is None or newest > limit.max_lag_s
        if not answers[i - 1] and answers[i]:
            assert (newest is not None and newest <= limit.recover_lag_s) or all(
                lag is not None and lag <= limit.max_lag_s for lag in seen
            )


@given(LAGS, limits(), st.floats(min_value=STALE_AFTER_S + 0.001, max_value=1e6))
def test_stale_is_never_usable_whatever_the_lags(
    lags: list[float | None], limit: Thresholds, age_s: float
) -> None:
    judged = judge_channel(polls(*lags, newest_age_s=age_s), NOW, STALE_AFTER_S, limit)
    assert judged.verdict in CANNOT_JUDGE and http_status(judged.verdict) == 503


@given(LAGS, limits())
def test_usable_only_within_max_lag(lags: list[float | None], limit: Thresholds) -> None:
    judged = judge_channel(polls(*lags), NOW, STALE_AFTER_S, limit)
    if judged.verdict is V.USABLE:
        assert judged.lag_s is not None and judged.lag_s <= limit.max_lag_s
    assert http_status(judged.verdict) in (200, 429)
