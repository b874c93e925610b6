"""Catching up (analysis/causes/catching_up.py): a backlog draining after the episode's main cause
ended, or after a step, is a state with that cause beside it — not "cause not identified"."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from lagscope.analysis.causes.episodes import EpisodeState, OpenSegment, main_cause
from lagscope.analysis.causes.model import Cause, CauseInputs, EpisodeContext, Finding, StepSeen
from lagscope.analysis.channel_metrics import ChannelMetrics
from lagscope.analysis.codes import Verdict
from lagscope.analysis.eta import Eta
from tests.cause_factories import (
    NOW,
    PARALLEL_RELAXED,
    SERIAL_DURABLE,
    SQL_COMMIT,
    behind_on_apply,
    causes,
    inputs,
    metrics,
    run,
    status,
)
from tests.unit.test_causes_diagnose import assert_operator_words

EPISODE_START = NOW - 120
FSYNC_EPISODE = EpisodeContext(EPISODE_START, Cause.RELAY_LOG_DURABILITY)


def draining(lag_s: float, trx: int, *, eta_s: float | None = 20.0) -> ChannelMetrics:
    """Behind on apply, the applier gaining on the source."""
    return replace(
        behind_on_apply(lag_s=lag_s, trx=trx, apply_rate=1500.0, source_rate=1000.0),
        eta=Eta(eta_s, True, None) if eta_s is not None else Eta(None, False, 0.0),
    )


def drain(
    lags: list[float],
    episode: EpisodeContext | None = FSYNC_EPISODE,
    params: Mapping[str, str | None] = PARALLEL_RELAXED,
    **kw: Any,
) -> list[CauseInputs]:
    """One poll a second, the lag as given, the transactions behind following it."""
    return [
        replace(
            inputs(
                draining(lag, int(lag * 100)),
                at=NOW + i,
                params=params,
                **kw,
            ),
            episode=episode,
        )
        for i, lag in enumerate(lags)
    ]


def test_a_drain_after_the_main_cause_ended_is_catching_up_with_that_cause_beside_it() -> None:
    found = run(drain([30.0, 28.0, 26.0, 24.0, 22.0]))
    assert causes(found[-1]) == ["catching_up"]
    (finding,) = found[-1]
    assert finding.evidence["main_cause"] == "relay_log_durability"
    assert finding.evidence["after"] == "cause_ended"
    assert finding.evidence["drain_s_per_s"] == 2.0
    assert finding.evidence["eta_s"] == 20.0
    assert "catching up since" in finding.sentence
    assert "after fsync per event on the receiver ended" in finding.sentence
    assert "draining 2.0 s/s" in finding.sentence and "ETA 20 s" in finding.sentence
    assert "the backlog was made by fsync per event on the receiver" in finding.sentence
    assert_operator_words(finding)
    # Never "not identified" once the drain shows (the first poll is one poll behind: a blip).
    assert all("unexplained" not in causes(f) for f in found[2:])


def test_the_run_keeps_its_start() -> None:
    found = run(drain([30.0, 28.0, 26.0, 24.0, 22.0, 20.0]))
    firsts = [f[0].evidence["since"] for f in found if causes(f) == ["catching_up"]]
    assert len(firsts) >= 3 and len(set(firsts)) == 1


def test_without_an_episode_or_a_named_cause_it_stays_not_identified() -> None:
    for episode in (None, EpisodeContext(EPISODE_START, Cause.UNEXPLAINED)):
        found = run(drain([30.0, 28.0, 26.0, 24.0, 22.0], episode=episode))
        assert causes(found[-1]) == ["unexplained"]


def test_a_lag_that_does_not_fall_is_not_catching_up() -> None:
    found = run(drain([30.0, 30.2, 29.9, 30.1, 30.0]))
    assert causes(found[-1]) == ["unexplained"]


def test_a_step_in_the_episode_is_what_it_catches_up_after() -> None:
    step = StepSeen(NOW - 3, "replica2", "sync_relay_log 1→0, sync_master_info 1→0")
    episode = EpisodeContext(EPISODE_START, Cause.UNEXPLAINED, step)
    (finding,) = run(drain([30.0, 28.0, 26.0, 24.0], episode=episode))[-1]
    assert finding.cause is Cause.CATCHING_UP
    assert finding.evidence["after"] == "step"
    assert finding.evidence["step"] == "sync_relay_log 1→0, sync_master_info 1→0"
    assert "after sync_relay_log 1→0, sync_master_info 1→0 on replica2" in finding.sentence
    assert "what made the backlog was not identified" in finding.sentence
    assert_operator_words(finding)


def test_a_step_from_before_the_episode_does_not_count() -> None:
    step = StepSeen(EPISODE_START - 5, "replica2", "sync_relay_log 0→1")
    episode = EpisodeContext(EPISODE_START, Cause.UNEXPLAINED, step)
    assert causes(run(drain([30.0, 28.0, 26.0, 24.0], episode=episode))[-1]) == ["unexplained"]


def test_a_rule_still_named_while_it_drains_is_the_limit() -> None:
    """The receiver's fsyncs are relaxed, the serial durable applier now limits the drain."""
    polls = drain(
        [30.0, 28.0, 26.0, 24.0, 22.0],
        params=SERIAL_DURABLE,
        channel=status(sql_thread_state=SQL_COMMIT),
    )
    found = run(polls)[-1]
    assert causes(found)[:2] == ["catching_up", "durable_apply"]
    assert found[0].evidence["limit"] == "durable_apply"
    assert "what limits the drain: durable serial apply" in found[0].sentence
    assert found[0].action == found[1].action


def test_the_main_cause_still_named_is_not_catching_up() -> None:
    polls = drain(
        [30.0, 28.0, 26.0, 24.0, 22.0],
        episode=EpisodeContext(EPISODE_START, Cause.DURABLE_APPLY),
        params=SERIAL_DURABLE,
        channel=status(sql_thread_state=SQL_COMMIT),
    )
    assert causes(run(polls)[-1])[0] == "durable_apply"
    assert "catching_up" not in causes(run(polls)[-1])


def test_transactions_falling_drain_without_a_lag_figure() -> None:
    polls = [
        replace(
            inputs(
                replace(draining(20.0, trx), lag_s=None),
                at=NOW + i,
                params=PARALLEL_RELAXED,
            ),
            episode=FSYNC_EPISODE,
        )
        for i, trx in enumerate([3000, 2600, 2200])
    ]
    (finding,) = run(polls)[-1]
    assert finding.cause is Cause.CATCHING_UP
    assert finding.evidence["drain_s_per_s"] is None
    assert "2,200 transactions to apply, falling" in finding.sentence


def test_caught_up_is_no_finding() -> None:
    polls = drain([30.0, 28.0, 26.0, 24.0])
    done = replace(polls[-1], at=NOW + 4, metrics=metrics(Verdict.CAUGHT_UP, lag_s=0.1))
    assert run([*polls, done])[-1] == ()


def _segment(cause: Cause, start: float) -> OpenSegment:
    return OpenSegment(cause, start, start, 0, Finding(cause, 0.8, "s.", "a"))


def test_catching_up_is_never_the_episodes_main_cause() -> None:
    state = EpisodeState(
        started_at=NOW - 200,
        segments=(_segment(Cause.CATCHING_UP, NOW - 150),),
        held=((Cause.RELAY_LOG_DURABILITY, 20.0),),
    )
    assert main_cause(state, NOW) is Cause.RELAY_LOG_DURABILITY
    state = replace(state, held=((Cause.UNEXPLAINED, 5.0),))
    assert main_cause(state, NOW) is Cause.UNEXPLAINED


def test_a_drain_that_just_began_is_caught_at_its_first_falling_poll() -> None:
    """The slope over the kept polls still holds the growth before the step: one poll of the lag
    and the transactions behind falling together is enough."""
    found = run(drain([10.0, 11.0, 12.0, 13.0, 11.5]))
    assert causes(found[-2]) == ["unexplained"]
    (finding,) = found[-1]
    assert finding.cause is Cause.CATCHING_UP and finding.evidence["drain_s_per_s"] == 1.5


def test_a_lag_dip_while_the_transactions_behind_grow_is_not_a_drain() -> None:
    polls = drain([10.0, 11.0, 12.0, 13.0, 11.5])
    grown = replace(polls[-1].metrics, trx_behind=5000)
    polls[-1] = replace(polls[-1], metrics=grown)
    assert causes(run(polls)[-1]) == ["unexplained"]
