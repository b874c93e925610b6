"""Catching up (analysis/causes/catching_up.py): a backlog draining after the episode's main cause
ended, or after a step, is a state with that cause beside it — not "cause not identified"."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest

from lagscope.analysis.causes.episodes import EpisodeState, OpenSegment, main_cause
from lagscope.analysis.causes.model import Cause, CauseInputs, EpisodeContext, Finding, StepSeen
from lagscope.analysis.channel_metrics import ChannelMetrics
from lagscope.analysis.codes import Verdict
from lagscope.analysis.eta import Eta
from lagscope.analysis.rates import CounterRates
from tests.factories.causes import (
    NOW,
    PARALLEL_RELAXED,
    SERIAL_DURABLE,
    SQL_COMMIT,
    behind_on_apply,
    causes,
    inputs,
    metrics,
    run,
    source,
    status,
)
from tests.unit.analysis.causes.test_causes_diagnose import assert_operator_words

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


# --- a drain judged by its pace: the replica's apply rate against the source's ---------------

SERIAL_RELAXED = MappingProxyType(
    {
        **SERIAL_DURABLE,
        "innodb_flush_log_at_trx_commit": "2",
        "sync_binlog": "0",
        "sync_relay_log": "0",
        "sync_master_info": "0",
    }
)
# A source that group-commits: parallel apply would have work to share (the serial-apply rule).
GROUPED = CounterRates(binlog_commits_per_s=1930.0, binlog_group_commits_per_s=640.0)
# What a loaded box reads around each figure, poll after poll (the two servers are read a moment
# apart, the lag figure wanders): fixed, so every run is the same.
TRX_NOISE = (0, 150, -120, 80, -60, 130, -150, 40, 110, -90)
LAG_NOISE = (0.5, -0.4, 0.6, -0.3, 0.2, -0.6, 0.4, -0.2, 0.3, -0.5)
APPLY_NOISE = (60, -80, 40, -30, 90, -70, 20, -50, 70, -50)
SOURCE_NOISE = (-30, 40, -20, 50, -40, 10, -50, 30, -10, 20)


def paced(
    polls: int,
    apply_rate: float,
    source_rate: float,
    *,
    trx0: int = 100_000,
    start: int = 0,
    episode: EpisodeContext = FSYNC_EPISODE,
    params: Mapping[str, str | None] = PARALLEL_RELAXED,
    **kw: Any,
) -> list[CauseInputs]:
    """One poll a second from ``start``: the backlog moves by source − apply each second (with the
    noise above), the lag is the backlog in seconds of the source's writes."""
    out = []
    for i in range(start, start + polls):
        n = i % len(TRX_NOISE)
        trx = int(trx0 + (source_rate - apply_rate) * (i - start) + TRX_NOISE[n])
        gain = apply_rate - source_rate
        m = replace(
            behind_on_apply(
                lag_s=trx / source_rate + LAG_NOISE[n],
                trx=trx,
                apply_rate=apply_rate + APPLY_NOISE[n],
                source_rate=source_rate + SOURCE_NOISE[n],
            ),
            eta=Eta(trx / gain, True, None) if gain > 0 else Eta(None, False, -gain, never=True),
        )
        poll = inputs(m, at=NOW + i, params=params, **kw)
        out.append(replace(poll, episode=episode))
    return out


def test_a_drain_too_slow_for_the_lag_slope_is_catching_up_by_its_pace_without_flicker() -> None:
    """The tuning story's phase B on a loaded box: 2,150 trx/s applied against the source's
    1,930, the lag near 50 s falling ~0.1 s/s, under the lag slope's 0.2 s/s, in the lag
    figure's noise. Every poll from the pace's fifth says so, none "not identified"."""
    found = run(paced(40, 2150.0, 1930.0))
    settled = found[5:]
    assert all(causes(f) == ["catching_up"] for f in settled), [causes(f) for f in found]
    (finding,) = found[-1]
    assert finding.evidence["pace"] == "barely_draining"
    assert finding.evidence["apply_rate"] == pytest.approx(2150.0, abs=15)
    assert finding.evidence["source_rate"] == pytest.approx(1930.0, abs=15)
    drain = finding.evidence["drain_s_per_s"]
    assert isinstance(drain, float) and 0.08 <= drain <= 0.15
    assert "is keeping pace but barely draining since" in finding.sentence
    assert "apply 2,1" in finding.sentence and "vs source 1,9" in finding.sentence
    # The status's ETA: 91,330 transactions behind at 220 more a second applied than written.
    assert finding.evidence["eta_s"] == pytest.approx(415.0, abs=1)
    assert "ETA 415 s" in finding.sentence
    assert "the backlog was made by fsync per event on the receiver" in finding.sentence
    assert "Nothing to do" not in finding.action and "apply capacity" in finding.action
    assert_operator_words(finding)
    # One run: the same start all along.
    assert len({f[0].evidence["since"] for f in settled}) == 1


def test_keeping_pace_without_draining_is_said_as_such_not_as_not_identified() -> None:
    found = run(paced(20, 1935.0, 1930.0))
    assert all(causes(f) == ["catching_up"] for f in found[5:]), [causes(f) for f in found]
    (finding,) = found[-1]
    assert finding.evidence["pace"] == "not_draining"
    assert finding.evidence["eta_s"] is None
    assert "is keeping pace, not draining, since" in finding.sentence
    assert "apply 1,9" in finding.sentence and "no ETA at this pace" in finding.sentence
    assert "draining 0" not in finding.sentence
    assert "ETA " not in finding.sentence.replace("no ETA at this pace", "")
    assert_operator_words(finding)


def test_a_backlog_growing_a_little_does_not_begin_a_run() -> None:
    """Apply 2 % under the source's rate: within the keeping-pace band, but the backlog grows,
    and nothing was catching up before: not a drain, not keeping pace."""
    found = run(paced(20, 1890.0, 1930.0))
    assert not any("catching_up" in causes(f) for f in found), [causes(f) for f in found]
    assert causes(found[-1]) == ["unexplained"]


def test_a_run_lasts_through_a_pace_near_the_source_and_ends_once_the_backlog_clearly_grows() -> (
    None
):
    draining = paced(15, 2150.0, 1930.0)
    level = draining[-1].metrics.trx_behind
    assert level is not None
    wobbling = paced(10, 1890.0, 1930.0, trx0=level, start=15)  # 2 % under the source
    falling = paced(15, 1500.0, 1930.0, trx0=level + 400, start=25)  # the applier slowed
    found = run([*draining, *wobbling, *falling])
    assert all(causes(f) == ["catching_up"] for f in found[5:25]), [causes(f) for f in found]
    # Once the window holds only the wobble: keeping pace, the backlog growing a little.
    assert [f[0].evidence["pace"] for f in found[21:25]] == ["not_draining"] * 4
    # The window has the slowdown after a few polls; the run ends, and what is left is said.
    assert causes(found[-1]) == ["unexplained"]
    assert not any("catching_up" in causes(f) for f in found[-5:])


def test_one_applier_thread_named_while_it_barely_drains_is_what_limits_the_drain() -> None:
    """Relaxed flush, a serial applier, a source that group-commits: the serial-apply rule holds
    while the replica barely outruns the source, and is named as the limit."""
    found = run(paced(20, 2150.0, 1930.0, params=SERIAL_RELAXED, src=source(rates=GROUPED)))
    last = found[-1]
    assert causes(last)[:2] == ["catching_up", "serial_apply"]
    head = last[0]
    assert head.evidence["limit"] == "serial_apply"
    assert head.evidence["pace"] == "barely_draining"
    assert "what limits the drain: one applier thread, parallelism available" in head.sentence
    assert head.action == last[1].action
    assert all(causes(f)[0] == "catching_up" for f in found[5:]), [causes(f) for f in found]


def test_rates_that_contradict_the_backlog_say_nothing() -> None:
    """Apply reads 800 trx/s above the source while the backlog stays put: one of the figures is
    wrong, and the pace is not used (the lag decides, and it does not fall)."""
    polls = paced(12, 1930.0, 1930.0)
    polls = [replace(p, metrics=replace(p.metrics, apply_rate=2730.0)) for p in polls]
    assert causes(run(polls)[-1]) == ["unexplained"]


def test_the_limit_named_is_the_strongest_rule_still_named_the_first_listed_after_it() -> None:
    """A serial durable applier committing in most polls (durable serial apply, 0.75) while the
    source group-commits (one applier thread, 0.8): the sentence names the one listed first."""
    polls = paced(
        20,
        2150.0,
        1930.0,
        params=SERIAL_DURABLE,
        src=source(rates=GROUPED),
        channel=status(sql_thread_state=SQL_COMMIT),
    )
    last = run(polls)[-1]
    assert causes(last) == ["catching_up", "serial_apply", "durable_apply"]
    assert last[0].evidence["limit"] == "serial_apply"
    assert last[0].action == last[1].action


def test_a_backlog_barely_falling_while_the_lag_grows_is_not_called_a_drain() -> None:
    """On a starved box the source's rate swings: the replica applies a little more than the
    source writes now, but what it applies was written faster, and its lag grows 0.5 s/s.
    "Draining" would contradict the lag chart: it keeps pace, and the sentence says the lag
    grows."""
    polls = paced(20, 2150.0, 1930.0)
    polls = [
        replace(p, metrics=replace(p.metrics, lag_s=80.0 + 0.5 * i + LAG_NOISE[i % 10]))
        for i, p in enumerate(polls)
    ]
    found = run(polls)
    assert all(causes(f) == ["catching_up"] for f in found[5:]), [causes(f) for f in found]
    (finding,) = found[-1]
    assert finding.evidence["pace"] == "not_draining"
    assert finding.evidence["lag_rise_s_per_s"] == pytest.approx(0.5, abs=0.1)
    assert "is keeping pace, not draining, since" in finding.sentence
    assert "its lag still growing 0.5 s/s" in finding.sentence
    assert "barely draining" not in finding.sentence and finding.evidence["eta_s"] is None


def test_a_drain_after_a_stopped_applier_is_judged_on_the_polls_from_the_stop_on() -> None:
    """The live lab's restart: ten polls stopped (the source writing 600 trx/s, nothing applied,
    the lag rising 1 s/s), then the applier drains at 1,400 trx/s. A pace over a window still
    holding the stopped polls' zero apply rate read that 1 s/s drain as "barely draining …,
    ETA 59 min"; every drain poll is catching up, by the lag and then by its pace."""
    episode = EpisodeContext(NOW - 1, Cause.STOPPED)
    stopped = status(sql_running=False, sql_thread_state="")
    polls = []
    trx = 20_000
    for i in range(10):
        trx += 600
        m = replace(
            metrics(Verdict.STOPPED, lag_s=trx / 600, trx_behind=trx),
            apply_rate=0.0,
            source_rate=600.0,
        )
        polls.append(replace(inputs(m, at=NOW + i, channel=stopped), episode=episode))
    for i in range(10, 25):
        trx -= 800
        m = replace(
            behind_on_apply(lag_s=trx / 600, trx=trx, apply_rate=1400.0, source_rate=600.0),
            eta=Eta(trx / 800, True, None),
        )
        polls.append(replace(inputs(m, at=NOW + i, params=PARALLEL_RELAXED), episode=episode))
    found = run(polls)
    assert all(causes(f) == ["stopped"] for f in found[:10]), [causes(f) for f in found]
    draining = found[10:]
    assert all(causes(f)[:1] == ["catching_up"] for f in draining), [causes(f) for f in found]
    for findings in draining:
        head = findings[0]
        assert head.evidence["pace"] == "draining", head.sentence
        assert "is catching up since" in head.sentence
        assert "the backlog was made by replication stopped" in head.sentence
        assert head.evidence["drain_s_per_s"] == pytest.approx(1.33, abs=0.05)
    # From the pace's fifth poll after the stop, the pace measures it: the two rates named.
    assert draining[-1][0].evidence["pace_polls"] == 10
    assert "apply 1,400 trx/s vs source 600 trx/s" in draining[-1][0].sentence
