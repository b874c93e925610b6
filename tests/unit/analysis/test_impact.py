"""impact: windows, window figures and the verdict on known synthetic series.

Series are 1 Hz polls drawn from ``random.Random(seed)``; a sample is caught up below 1 s of lag
(as ``verdict.classify`` says by default) and apply-bound above it, unreachable when its lag is
None. Rates get ±5 % noise.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lagscope.analysis.codes import Verdict
from lagscope.analysis.drain import draining
from lagscope.analysis.impact import (
    Impact,
    ImpactVerdict,
    Point,
    Window,
    WindowStats,
    impact,
    trend,
    window_stats,
    windows,
)

T = 100_000.0  # the step
IV = ImpactVerdict
Lag = Callable[[random.Random], float | None]


def uniform(lo: float, hi: float) -> Lag:
    return lambda rng: rng.uniform(lo, hi)


def normal(mu: float, sd: float) -> Lag:
    return lambda rng: max(0.0, rng.gauss(mu, sd))


@dataclass(frozen=True)
class Regime:
    lag: Lag
    source_rate: float = 100.0
    apply_rate: float = 100.0


def point(ts: float, lag: float | None, source: float = 100.0, apply: float = 100.0) -> Point:
    if lag is None:
        return Point(ts, None, Verdict.UNREACHABLE, None, None)
    verdict = Verdict.CAUGHT_UP if lag < 1.0 else Verdict.APPLY_BOUND
    return Point(ts, lag, verdict, apply, source)


def series(
    before: Regime, after: Regime, seed: int = 1, start: float = T - 600, end: float = T + 630
) -> list[Point]:
    """Polls every second over [start, end): ``before`` regime up to T, ``after`` from T."""
    rng = random.Random(seed)
    points = []
    for i in range(int(end - start)):
        ts = start + i
        regime = before if ts < T else after
        source = regime.source_rate * rng.uniform(0.95, 1.05)
        apply = regime.apply_rate * rng.uniform(0.95, 1.05)
        points.append(point(ts, regime.lag(rng), source, apply))
    return points


# --- windows -------------------------------------------------------------------------------


def test_windows_default_to_ten_minutes_after_a_30_s_settle() -> None:
    assert windows(T, None, None) == (Window(T - 600, T), Window(T + 30, T + 630))


def test_windows_are_clipped_at_neighbouring_steps() -> None:
    # Before starts after the previous step's own settle; after stops at the next step.
    assert windows(T, T - 100, T + 200) == (Window(T - 70, T), Window(T + 30, T + 200))


def test_neighbours_inside_the_settle_leave_empty_windows() -> None:
    before, after = windows(T, T - 10, T + 20)
    assert before.empty and after.empty
    assert not windows(T, None, None)[0].empty


@pytest.mark.parametrize(
    ("previous", "next_", "width", "settle"),
    [(T + 1, None, 600, 30), (None, T - 1, 600, 30), (None, None, 0, 30), (None, None, 600, -1)],
)
def test_windows_reject_impossible_arguments(
    previous: float | None, next_: float | None, width: float, settle: float
) -> None:
    with pytest.raises(ValueError):
        windows(T, previous, next_, width, settle)


# --- window_stats --------------------------------------------------------------------------


def test_window_stats_known_answers() -> None:
    points = [point(float(ts), float(ts + 1), source=50.0, apply=60.0) for ts in range(10)]
    points += [point(-1.0, 999.0), point(10.0, 999.0)]  # just outside [0, 10)
    points.append(point(0.5, 0.5, source=160.0, apply=170.0))  # caught up
    stats = window_stats(list(reversed(points)), Window(0, 10))
    # Lags 0.5, 1 … 10: p50 is the 6th of 11; p95 interpolates at rank 9.5 between 9 and 10.
    assert stats == WindowStats(
        samples=11,
        lag_p50=5.0,
        lag_p95=9.5,
        lag_max=10.0,
        caught_up_share=pytest.approx(1 / 11),
        apply_rate=pytest.approx(70.0),
        source_rate=pytest.approx(60.0),
        capacity=pytest.approx(60.0),  # the ten polls behind; not the caught-up one's 170
    )


def test_window_stats_of_an_empty_window_are_all_unknown() -> None:
    assert window_stats([point(5.0, 1.0)], Window(10, 10)) == WindowStats(
        0, None, None, None, None, None, None
    )


def test_null_lags_are_left_out_of_the_lag_figures() -> None:
    rng = random.Random(7)
    known = [point(float(ts), rng.uniform(0, 20)) for ts in range(0, 300, 2)]
    unreachable = [point(float(ts), None) for ts in range(1, 300, 2)]
    # Unreachable samples neither lower the lag (as a 0 would) nor count as not caught up.
    assert window_stats(known + unreachable, Window(0, 300)) == window_stats(known, Window(0, 300))
    assert window_stats(known + unreachable, Window(0, 300)).samples == len(known)


def test_null_lags_do_not_turn_an_improvement_into_insufficient_data() -> None:
    points = series(Regime(uniform(40, 50)), Regime(uniform(2, 5)))
    holed = [p if i % 3 else point(p.ts, None) for i, p in enumerate(points)]
    result = impact(holed, T)
    assert result.verdict is IV.IMPROVED
    assert result.before.samples == 400
    assert result.before.lag_p50 is not None and 40 < result.before.lag_p50 < 50


# --- verdicts ------------------------------------------------------------------------------


def test_clear_improvement_under_the_same_load() -> None:
    result = impact(series(Regime(uniform(40, 50)), Regime(uniform(2, 5))), T)
    assert result.verdict is IV.IMPROVED
    assert result.lag_change_p50 is not None and -46 < result.lag_change_p50 < -36
    assert result.load_change == pytest.approx(1.0, abs=0.02)
    assert result.reason.startswith("lag p50 fell from 4")
    assert "while the load was unchanged (±" in result.reason


def test_lag_from_2_to_30_s_is_worse() -> None:
    result = impact(series(Regime(uniform(1.5, 2.5)), Regime(uniform(25, 35))), T)
    assert result.verdict is IV.WORSE
    assert result.lag_change_p50 is not None and 26 < result.lag_change_p50 < 30
    assert result.reason.startswith("lag p50 rose from 2.0 s to 2")


def wandering(phi: float, mu: float, sd: float) -> Lag:
    """AR(1) lag around ``mu``: each poll keeps ``phi`` of the last offset, as real lag does."""
    offset = 0.0

    def lag(rng: random.Random) -> float:
        nonlocal offset
        offset = phi * offset + rng.gauss(0, sd * (1 - phi * phi) ** 0.5)
        return max(0.0, mu + offset)

    return lag


@pytest.mark.slow
@pytest.mark.parametrize(
    ("make_lag", "width_s"),
    [
        (lambda: normal(5, 2), 600),  # the default window
        (lambda: normal(5, 2), 60),  # a short one: the p50 of 60 polls wanders by ~±0.3 s
        (lambda: uniform(0, 60), 15),  # wide noise, few polls: medians of 15 differ by ~20 %
        # Lag wandering ±4 s around 10 s with a ~20 s memory: 600 such polls are worth far fewer
        # independent ones; a rank test over single polls (not blocks) calls ~18 % a change.
        (lambda: wandering(0.95, 10, 4), 600),
    ],
)
def test_same_distribution_is_rarely_called_a_change(
    make_lag: Callable[[], Lag], width_s: float
) -> None:
    called = 0
    seeds = range(200)
    for seed in seeds:
        lag = make_lag()
        points = series(Regime(lag), Regime(lag), seed, T - width_s, T + 30 + width_s)
        verdict = impact(points, T, width_s=width_s).verdict
        assert verdict is not IV.INSUFFICIENT_DATA
        called += verdict in (IV.IMPROVED, IV.WORSE)
    assert called / len(seeds) <= 0.05


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (5.0, 5.3),  # 6 %, but 0.3 s is under the 0.5 s floor
        (40.0, 37.0),  # 3 s, but 7.5 %
        (8.2, 10.0),  # 1.8 s is 22 % of 8.2 but 18 % of 10: judged against the larger
        (10.0, 8.2),
    ],
)
def test_a_certain_but_small_change_is_no_clear_change(before: float, after: float) -> None:
    # 600 tight polls a side make any shift certain; only the size thresholds stop it.
    result = impact(series(Regime(normal(before, 0.05)), Regime(normal(after, 0.05))), T)
    assert result.verdict is IV.NO_CLEAR_CHANGE
    assert result.reason.startswith(f"lag p50 went from {before:.1f} s to {after:.1f} s, no clear")


def test_caught_up_share_from_0_to_95_percent_is_an_improvement() -> None:
    # Lag hovers just above the 1 s caught-up line, then mostly just below it: p50 and p95 move
    # less than 0.5 s, so only the share of time caught up can tell.
    def after(rng: random.Random) -> float:
        return rng.uniform(1.0, 1.2) if rng.random() < 0.05 else rng.uniform(0.75, 0.95)

    result = impact(series(Regime(uniform(1.0, 1.2)), Regime(after)), T)
    assert result.before.caught_up_share == 0.0
    assert result.after.caught_up_share is not None and result.after.caught_up_share > 0.9
    assert result.verdict is IV.IMPROVED
    assert result.reason.startswith("time caught up rose from 0 % to 9")


def test_a_small_gain_in_time_caught_up_is_no_clear_change() -> None:
    # 44 % → 67 % caught up is certain over 600 polls, but under the 25-point threshold.
    result = impact(series(Regime(uniform(0.8, 1.25)), Regime(uniform(0.8, 1.1))), T)
    assert result.before.caught_up_share == pytest.approx(0.44, abs=0.05)
    assert result.after.caught_up_share == pytest.approx(0.67, abs=0.05)
    assert result.verdict is IV.NO_CLEAR_CHANGE


def test_votes_that_disagree_are_no_clear_change() -> None:
    # Lag halves, but the replica, behind throughout, now applies 30 % less: which one matters?
    after = Regime(uniform(20, 25), apply_rate=70.0)
    result = impact(series(Regime(uniform(40, 50)), after), T)
    assert result.verdict is IV.NO_CLEAR_CHANGE
    assert result.reason.startswith("mixed evidence: lag p50 fell from 4")
    assert "but the apply rate fell from 100 to 70 trx/s, behind after the step" in result.reason


def test_lag_falling_with_the_load_is_not_an_improvement() -> None:
    # The load halves; the replica applies what it always did, so the lower lag is the load's.
    points = series(Regime(uniform(40, 50)), Regime(uniform(2, 5), source_rate=50.0), seed=3)
    result = impact(points, T)
    assert result.verdict is IV.NO_CLEAR_CHANGE
    assert result.load_change == pytest.approx(0.5, abs=0.02)
    assert "but the load fell by 5" in result.reason
    assert "shows no more capacity" in result.reason


def test_lag_falling_with_the_load_and_a_higher_apply_ceiling_is_an_improvement() -> None:
    # Behind before at 100 trx/s (its ceiling), 150 trx/s after: more capacity, whatever the load.
    after = Regime(uniform(2, 5), source_rate=50.0, apply_rate=150.0)
    result = impact(series(Regime(uniform(40, 50)), after), T)
    assert result.verdict is IV.IMPROVED
    assert "the apply rate rose from 100 to 150 trx/s" in result.reason
    assert "the load fell by 5" in result.reason


def test_lag_rising_although_the_load_fell_is_worse() -> None:
    result = impact(series(Regime(uniform(2, 5)), Regime(uniform(20, 30), source_rate=55.0)), T)
    assert result.verdict is IV.WORSE
    assert result.reason.endswith("while the load fell by 45 %")


def test_lag_rising_with_a_doubled_load_the_replica_keeps_up_with_is_not_worse() -> None:
    # Caught up before, so 100 trx/s was the load, not a ceiling; after it applies all 200 trx/s.
    before = Regime(uniform(0.2, 0.8))
    after = Regime(uniform(5, 10), source_rate=200.0, apply_rate=200.0)
    result = impact(series(before, after), T)
    assert result.verdict is IV.NO_CLEAR_CHANGE
    assert result.load_change == pytest.approx(2.0, abs=0.04)
    assert "but the load rose by 10" in result.reason


def test_lag_rising_with_a_doubled_load_and_a_lower_apply_ceiling_is_worse() -> None:
    # Behind after at 70 trx/s, when it had done 100 before: less capacity, whatever the load.
    before = Regime(uniform(0.2, 0.8))
    after = Regime(uniform(5, 10), source_rate=200.0, apply_rate=70.0)
    result = impact(series(before, after), T)
    assert result.verdict is IV.WORSE
    assert result.reason.startswith("the apply rate fell from 100 to 70 trx/s, behind after")


def test_lag_falling_although_the_load_doubled_is_an_improvement() -> None:
    after = Regime(uniform(2, 5), source_rate=200.0, apply_rate=200.0)
    result = impact(series(Regime(uniform(40, 50)), after), T)
    assert result.verdict is IV.IMPROVED
    assert "while the load rose by 10" in result.reason


def test_an_unknown_load_sets_nothing_aside() -> None:
    points = series(Regime(uniform(1.5, 2.5)), Regime(uniform(25, 35)))
    result = impact([replace(p, source_rate=None) for p in points], T)
    assert (result.verdict, result.load_change) == (IV.WORSE, None)
    assert result.reason.endswith("while the load was unknown")


def test_load_arriving_on_an_idle_source_explains_a_higher_lag() -> None:
    before = Regime(uniform(0.2, 0.8), source_rate=0.0, apply_rate=0.0)
    result = impact(series(before, Regime(uniform(5, 10))), T)
    assert (result.verdict, result.load_change) == (IV.NO_CLEAR_CHANGE, None)
    assert "but the source was idle before, which can explain it" in result.reason


def test_only_samples_inside_the_clipped_windows_count() -> None:
    points = series(Regime(uniform(40, 50)), Regime(uniform(2, 5)))
    # Outside the windows: the previous step's era, this step's settle and the next step's era.
    wild = {p.ts for p in points if p.ts < T - 70 or T <= p.ts < T + 30 or p.ts >= T + 200}
    points = [point(p.ts, 1000.0) if p.ts in wild else p for p in points]
    result = impact(points, T, previous_step_at=T - 100, next_step_at=T + 200)
    assert (result.before.samples, result.after.samples) == (70, 170)
    assert result.before.lag_max is not None and result.before.lag_max < 50
    assert result.after.lag_max is not None and result.after.lag_max < 5
    assert result.verdict is IV.IMPROVED


def test_too_few_samples_after_the_step_is_insufficient_data() -> None:
    points = series(Regime(uniform(40, 50)), Regime(uniform(2, 5)), end=T + 39)
    result = impact(points, T)
    assert (result.before.samples, result.after.samples) == (600, 9)
    assert result.verdict is IV.INSUFFICIENT_DATA
    assert result.reason == (
        "too few lag samples to judge: 600 before and 9 after the step "
        "(at least 10 needed on each side)"
    )
    assert impact(points, T, min_samples=9).verdict is IV.IMPROVED


def test_a_next_step_inside_the_settle_leaves_nothing_to_judge() -> None:
    points = series(Regime(uniform(40, 50)), Regime(uniform(2, 5)))
    result = impact(points, T, next_step_at=T + 20)
    assert result.after == WindowStats(0, None, None, None, None, None, None)
    assert (result.verdict, result.lag_change_p50, result.load_change) == (
        IV.INSUFFICIENT_DATA,
        None,
        None,
    )


def test_min_samples_must_be_positive() -> None:
    with pytest.raises(ValueError):
        impact([], T, min_samples=0)


# --- properties ----------------------------------------------------------------------------

lag_lists = st.lists(st.floats(0, 100, allow_nan=False), min_size=10, max_size=60)


def sides(before: list[float], after: list[float]) -> list[Point]:
    # In time order, as impact() reads them: draining() looks at the newest points at the end
    # (built newest-first, the assumptions below judged the oldest ones; Hypothesis found a
    # drain the test took for steady).
    return [point(T - len(before) + i, lag) for i, lag in enumerate(before)] + [
        point(T + 30 + i, lag) for i, lag in enumerate(after)
    ]


def drained_inside(lags: list[float]) -> bool:
    """Behind (lag ≥ 1 s) somewhere, but not in the last 5 polls."""
    return any(lag >= 1.0 for lag in lags[:-5]) and all(lag < 1.0 for lag in lags[-5:])


def flipped(result: Impact) -> ImpactVerdict:
    swap = {IV.IMPROVED: IV.WORSE, IV.WORSE: IV.IMPROVED}
    return swap.get(result.verdict, result.verdict)


@settings(max_examples=60, deadline=None)
@given(lag_lists)
def test_the_same_lags_on_both_sides_are_no_clear_change(lags: list[float]) -> None:
    # A backlog that ended inside the before window is the previous step's drain, left out of
    # the baseline (_settled): the same lags after it are then a change. CI's derandomized run
    # found [1, 0, 1, 0, …, 0].
    assume(not drained_inside(lags))
    assert impact(sides(lags, lags), T).verdict is IV.NO_CLEAR_CHANGE


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(lag_lists, lag_lists)
def test_swapping_before_and_after_swaps_improved_and_worse(
    before: list[float], after: list[float]
) -> None:
    # Symmetric only between steady states: a drain under way before a step is judged on its
    # catch-up time instead, a growing or falling lag on its trend; neither has a
    # mirror image.
    assume(not draining(sides(before, [])) and not draining(sides(after, [])))
    assume(trend(sides(before, [])) == 0 and trend(sides(after, [])) == 0)
    # Nor a backlog that ended inside a window (its levels are the previous step's drain).
    assume(not drained_inside(before) and not drained_inside(after))
    forward, backward = impact(sides(before, after), T), impact(sides(after, before), T)
    # The assumption above reads every point; impact reads the before window as it judges it,
    # and may still find a drain there (a lag of 1-2 s falling to 0): "not measurable" has no
    # mirror image either. Hypothesis found such a pair.
    assume(IV.NOT_MEASURABLE not in (forward.verdict, backward.verdict))
    assert backward.verdict is flipped(forward)
