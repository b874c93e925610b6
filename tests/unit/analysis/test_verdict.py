"""classify (every branch, in priority order) and the window vote."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from lagscope.analysis.codes import LagSource, Verdict
from lagscope.analysis.verdict import Observation, classify, verdict
from lagscope.collectors.snapshot import IoState

V = Verdict
# A healthy, running channel; each test changes only what it is about.
RUNNING = Observation(reachable=True, io_state=IoState.YES, sql_running=True)


def obs(**changes: Any) -> Observation:
    return replace(RUNNING, **changes)


def test_unreachable_wins_over_everything() -> None:
    assert classify(obs(reachable=False, sql_running=False, last_sql_errno=1032)) is V.UNREACHABLE


@pytest.mark.parametrize(
    "observation",
    [
        obs(sql_running=False, last_sql_errno=1062),
        obs(io_state=IoState.NO, last_io_errno=2003),
        # Retrying a failed connection is broken, not merely behind.
        obs(io_state=IoState.CONNECTING, last_io_errno=2003, lag_s=0.1),
    ],
)
def test_thread_stopped_by_an_error_is_broken(observation: Observation) -> None:
    assert classify(observation) is V.BROKEN


def test_an_old_error_on_a_running_thread_is_not_broken() -> None:
    # Errors stay displayed after a restart of the thread; a running thread is not broken.
    assert classify(obs(last_sql_errno=1062, last_io_errno=2003, lag_s=0.0)) is V.CAUGHT_UP


@pytest.mark.parametrize(
    "observation",
    [obs(sql_running=False), obs(io_state=IoState.NO), obs(io_state=IoState.NO, lag_s=0.0)],
)
def test_operator_stop_is_stopped(observation: Observation) -> None:
    assert classify(observation) is V.STOPPED


@pytest.mark.parametrize(
    "observation",
    [
        obs(sql_delay=3600, sql_remaining_delay=120, lag_s=3500.0),
        obs(sql_delay=3600, sql_thread_state="Waiting until MASTER_DELAY seconds after master"),
        obs(sql_delay=3600, lag_s=3601.5),  # within 2 s of the delay
        obs(sql_delay=60, lag_s=0.2),  # nothing written for a while: still by design
    ],
)
def test_delayed_by_design(observation: Observation) -> None:
    assert classify(observation) is V.DELAYED_BY_DESIGN


def test_delayed_replica_far_beyond_its_delay_is_behind() -> None:
    observation = obs(sql_delay=60, lag_s=300.0, not_received=0, received_not_applied=9000)
    assert classify(observation) is V.APPLY_BOUND


@pytest.mark.parametrize(
    "observation",
    [obs(lag_s=0.4), obs(lag_s=None, trx_behind=0), obs(lag_s=0.0, trx_behind=3)],
)
def test_caught_up(observation: Observation) -> None:
    assert classify(observation) is V.CAUGHT_UP


def test_caught_up_threshold_is_exclusive_and_configurable() -> None:
    assert classify(obs(lag_s=1.0, trx_behind=5, not_received=5, received_not_applied=0)) is (
        V.RECEIVE_BOUND
    )
    assert classify(obs(lag_s=1.0), caught_up_s=2.0) is V.CAUGHT_UP


@pytest.mark.parametrize("source", list(LagSource))
def test_a_backlog_is_never_caught_up_whatever_the_lag_source(source: LagSource) -> None:
    # Seen once: SBM read 0 while not_received was 10,983; the verdict said caught_up.
    observation = obs(
        lag_s=0.0,
        lag_source=source,
        seconds_behind_source=0,
        trx_behind=10_983,
        not_received=10_983,
        received_not_applied=0,
        source_rate=2500.0,
    )
    assert classify(observation) is V.RECEIVE_BOUND


def test_a_backlog_the_source_writes_within_a_second_is_still_caught_up() -> None:
    busy = obs(lag_s=0.2, trx_behind=1800, not_received=1800, source_rate=2500.0)
    assert classify(busy) is V.CAUGHT_UP
    idle = obs(lag_s=0.2, trx_behind=1800, not_received=1800, source_rate=0.0)
    assert classify(idle) is V.RECEIVE_BOUND
    assert classify(obs(lag_s=0.2, trx_behind=10, source_rate=None)) is V.CAUGHT_UP
    assert classify(obs(lag_s=0.2, trx_behind=11, source_rate=None)) is not V.CAUGHT_UP


def test_sbm_alone_never_makes_a_replica_caught_up() -> None:
    sbm_only = obs(lag_s=0.0, lag_source=LagSource.SBM, seconds_behind_source=0)
    assert classify(sbm_only) is not V.CAUGHT_UP
    with_counts = replace(sbm_only, trx_behind=0, not_received=0, received_not_applied=0)
    assert classify(with_counts) is V.CAUGHT_UP


def test_backlog_mostly_not_received_is_receive_bound() -> None:
    observation = obs(lag_s=40.0, trx_behind=900, not_received=800, received_not_applied=100)
    assert classify(observation) is V.RECEIVE_BOUND


def test_backlog_mostly_in_the_relay_log_is_apply_bound() -> None:
    observation = obs(lag_s=40.0, trx_behind=900, not_received=100, received_not_applied=800)
    assert classify(observation) is V.APPLY_BOUND


def test_equal_halves_count_as_apply_bound() -> None:
    observation = obs(lag_s=40.0, not_received=50, received_not_applied=50)
    assert classify(observation) is V.APPLY_BOUND


def test_no_gtids_sbm_far_below_lag_is_receive_bound() -> None:
    # The disagreement case: SBM reads 0 while the heartbeat says 40 s: the IO thread is the
    # bottleneck.
    assert classify(obs(lag_s=40.0, seconds_behind_source=0)) is V.RECEIVE_BOUND


def test_no_gtids_sbm_matching_lag_is_apply_bound() -> None:
    assert classify(obs(lag_s=40.0, seconds_behind_source=39)) is V.APPLY_BOUND


def test_no_gtids_null_sbm_is_receive_bound() -> None:
    assert classify(obs(lag_s=40.0, seconds_behind_source=None)) is V.RECEIVE_BOUND


def test_no_gtids_and_no_lag_with_sbm_is_apply_bound() -> None:
    assert classify(obs(lag_s=None, seconds_behind_source=30)) is V.APPLY_BOUND


@pytest.mark.parametrize("state", [IoState.CONNECTING, IoState.PREPARING])
def test_connecting_without_error_is_running_not_stopped(state: IoState) -> None:
    assert classify(obs(io_state=state, lag_s=25.0)) is V.RECEIVE_BOUND
    assert classify(obs(io_state=state, lag_s=0.2)) is V.CAUGHT_UP


def test_unknown_thread_states_are_not_stopped() -> None:
    assert classify(Observation(reachable=True, lag_s=0.0)) is V.CAUGHT_UP


# --- the window vote ---------------------------------------------------------------------------


def test_two_of_three_wins() -> None:
    assert verdict([V.CAUGHT_UP, V.STOPPED, V.STOPPED]) is V.STOPPED
    assert verdict([V.STOPPED, V.CAUGHT_UP, V.STOPPED], previous=V.CAUGHT_UP) is V.STOPPED


def test_one_odd_sample_does_not_flip_the_verdict() -> None:
    assert verdict([V.CAUGHT_UP, V.CAUGHT_UP, V.UNREACHABLE], previous=V.CAUGHT_UP) is V.CAUGHT_UP
    window = [V.APPLY_BOUND, V.APPLY_BOUND, V.STOPPED]
    assert verdict(window, previous=V.APPLY_BOUND) is V.APPLY_BOUND


def test_stop_shows_within_two_polls() -> None:
    window: list[Verdict] = [V.APPLY_BOUND] * 3
    shown = V.APPLY_BOUND
    polls = 0
    while shown is not V.STOPPED:
        window = [*window[1:], V.STOPPED]
        shown = verdict(window, shown)
        polls += 1
    assert polls == 2


@pytest.mark.parametrize("halted", [V.STOPPED, V.BROKEN])
def test_a_stopped_thread_in_the_newest_poll_is_never_outvoted_into_caught_up(
    halted: Verdict,
) -> None:
    # Seen once: right after a duplicate-key error the sample had sql_running=false and
    # verdict caught_up, the two polls before it outvoting the stop.
    assert verdict([V.CAUGHT_UP, V.CAUGHT_UP, halted], previous=V.CAUGHT_UP) is halted
    # Once the thread runs again, the window smooths as before.
    assert verdict([V.CAUGHT_UP, halted, V.CAUGHT_UP], previous=halted) is V.CAUGHT_UP


def test_no_majority_keeps_the_previous_verdict() -> None:
    window = [V.CAUGHT_UP, V.RECEIVE_BOUND, V.APPLY_BOUND]
    assert verdict(window, previous=V.BROKEN) is V.BROKEN


def test_no_majority_and_no_previous_takes_the_newest() -> None:
    assert verdict([V.CAUGHT_UP, V.RECEIVE_BOUND, V.APPLY_BOUND]) is V.APPLY_BOUND


def test_half_is_not_a_majority() -> None:
    assert verdict([V.STOPPED, V.STOPPED, V.CAUGHT_UP, V.CAUGHT_UP], V.BROKEN) is V.BROKEN


def test_first_poll_is_its_own_verdict() -> None:
    assert verdict([V.RECEIVE_BOUND]) is V.RECEIVE_BOUND


def test_empty_window() -> None:
    assert verdict([], previous=V.STOPPED) is V.STOPPED
    with pytest.raises(ValueError):
        verdict([])


@pytest.mark.parametrize("behind", [V.RECEIVE_BOUND, V.APPLY_BOUND])
def test_a_backlog_in_the_newest_poll_is_never_outvoted_into_caught_up(behind: Verdict) -> None:
    # Seen once: the first polls of a load showed caught_up with 479 and 652 trx not received.
    assert verdict([V.CAUGHT_UP, V.CAUGHT_UP, behind], previous=V.CAUGHT_UP) is behind
    assert verdict([V.CAUGHT_UP, behind, V.APPLY_BOUND], previous=V.CAUGHT_UP) is V.APPLY_BOUND
    # The other way round the window still smooths: one caught-up poll does not end a backlog.
    assert verdict([behind, behind, V.CAUGHT_UP], previous=behind) is behind
