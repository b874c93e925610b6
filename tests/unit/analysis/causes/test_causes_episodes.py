"""The episode tracker over synthetic poll sequences (analysis/causes/episodes.py) and its JSON
round trip (serial.py)."""

from __future__ import annotations

from collections.abc import Iterable

from lagscope.analysis.causes.episodes import (
    CAUGHT_UP_HOLD_S,
    EpisodePoint,
    EpisodeState,
    EpisodeStep,
    advance,
)
from lagscope.analysis.causes.model import Cause, Finding
from lagscope.analysis.causes.serial import episode_state_from_json, episode_state_to_json
from lagscope.analysis.codes import Verdict

UP, APPLY, STOPPED = Verdict.CAUGHT_UP, Verdict.APPLY_BOUND, Verdict.STOPPED


def found(cause: Cause, confidence: float = 0.9) -> Finding:
    return Finding(cause, confidence, f"{cause.words}.", "")


def point(
    at: float,
    lag: float | None,
    verdict: Verdict = APPLY,
    *causes: Cause,
    trx: int | None = None,
    weak: Iterable[Cause] = (),
    delay: float = 0.0,
) -> EpisodePoint:
    findings = (*(found(c) for c in causes), *(found(c, 0.3) for c in weak))
    return EpisodePoint(at, verdict, lag, trx, findings, delay)


def run(points: Iterable[EpisodePoint], state: EpisodeState | None = None) -> list[EpisodeStep]:
    steps = []
    current = state or EpisodeState()
    for p in points:
        step = advance(current, p)
        # Every poll's state goes through the store's JSON and back, as in ingest.
        current = episode_state_from_json(episode_state_to_json(step.state))
        steps.append(step)
    return steps


def caught_up(from_s: int, to_s: int) -> list[EpisodePoint]:
    return [point(t, 0.0, UP) for t in range(from_s, to_s)]


def test_a_small_lag_is_no_episode() -> None:
    steps = run([point(t, 3.0) for t in range(10)])
    assert not any(s.opened for s in steps)
    assert not steps[-1].state.in_episode


def test_start_peak_and_end_after_30_s_caught_up() -> None:
    lags = [1.0, 6.0, 9.0, 14.0, 11.0, 4.0]
    points = [point(t, lag, APPLY, Cause.SOURCE_BURST) for t, lag in enumerate(lags)]
    steps = run([*points, *caught_up(6, 6 + 31)])
    opened = [i for i, s in enumerate(steps) if s.opened]
    assert opened == [1]
    assert steps[1].state.started_at == 1
    during = steps[5].state
    assert (during.peak_lag_s, during.peak_at) == (14.0, 3)
    ends = [(i, s.ended_at) for i, s in enumerate(steps) if s.ended_at is not None]
    # Caught up at t=6; known to have ended once it held 30 s, at t=36; the end is t=6.
    assert ends == [(36, 6)]
    assert steps[36].ended is not None and steps[36].ended.peak_lag_s == 14.0
    assert steps[36].ended.main_cause is Cause.SOURCE_BURST
    assert not steps[36].state.in_episode
    closed = [(c.cause, c.started_at, c.ended_at) for s in steps for c in s.closed]
    assert closed == [(Cause.SOURCE_BURST, 1, 6)]  # named from t=1 (in the episode) to t=5
    assert all(s.ended_at is None for s in steps[:36])


def test_lag_back_inside_the_hold_continues_the_episode_then_a_new_one_opens() -> None:
    seq = [
        point(0, 8.0),
        *caught_up(1, 20),
        point(20, 7.0),  # back before 30 s caught up: the same episode
        *caught_up(21, 52),
        *caught_up(52, 60),
        point(60, 9.0),  # after the end: a new episode
    ]
    steps = run(seq)
    assert [i for i, s in enumerate(steps) if s.opened] == [0, len(seq) - 1]
    ends = [s.ended_at for s in steps if s.ended_at is not None]
    assert ends == [21]
    assert steps[-1].state.started_at == 60
    assert steps[-1].state.peak_lag_s == 9.0  # the new episode's own peak


def test_not_caught_up_but_under_the_threshold_keeps_it_open() -> None:
    steps = run([point(0, 6.0), *[point(t, 2.0) for t in range(1, 60)]])
    assert steps[-1].state.in_episode
    assert not any(s.ended_at for s in steps)


def test_stopped_is_an_episode_whatever_the_lag() -> None:
    steps = run([point(0, 0.0, STOPPED, Cause.STOPPED)])
    assert steps[0].opened
    assert [s.cause for s in steps[0].started] == [Cause.STOPPED]


def test_a_growing_backlog_opens_an_episode_after_3_polls() -> None:
    steps = run([point(t, 1.0, APPLY, trx=10 + 5 * t) for t in range(5)])
    assert [i for i, s in enumerate(steps) if s.opened] == [3]


def test_a_caught_up_backlog_that_wiggles_is_no_episode() -> None:
    steps = run([point(t, 0.0, UP, trx=t) for t in range(10)])
    assert not any(s.opened for s in steps)


def test_a_delayed_replica_is_behind_only_beyond_its_delay() -> None:
    delayed = Verdict.DELAYED_BY_DESIGN
    steps = run([point(t, 60.0 + t % 3, delayed, delay=60.0) for t in range(10)])
    assert not any(s.opened for s in steps)
    steps = run([point(0, 70.0, APPLY, delay=60.0)])
    assert steps[0].opened


def test_overlapping_causes_start_and_end_inside() -> None:
    big, blocked = Cause.LARGE_TRANSACTION, Cause.BLOCKED_BY_SESSION
    seq = [
        point(0, 6.0, APPLY, big),
        point(1, 7.0, APPLY, big),
        point(2, 8.0, APPLY, big, blocked),
        point(3, 9.0, APPLY, big, blocked),
        point(4, 10.0, APPLY, blocked),
        point(5, 11.0, APPLY, blocked),
        point(6, 12.0, APPLY, blocked),
        point(7, 13.0, APPLY, blocked),
    ]
    steps = run(seq)
    assert [s.cause for s in steps[0].started] == [big]
    assert [s.cause for s in steps[2].started] == [blocked]
    assert {s.cause for s in steps[3].current} == {big, blocked}
    # big missed at t=4 (grace) and t=5: closed at 5, ended when first missed (t=4).
    closed = [(c.cause, c.started_at, c.ended_at) for s in steps for c in s.closed]
    assert closed == [(big, 0, 4)]
    assert steps[4].state.main_cause is big  # 4 s held vs 2 s
    assert steps[6].state.main_cause is big  # 4 s held each: the tie goes to the first
    assert steps[7].state.main_cause is blocked  # 5 s vs 4 s


def test_one_odd_poll_does_not_split_a_segment() -> None:
    net = Cause.NETWORK
    seq = [point(0, 6.0, APPLY, net), point(1, 7.0, APPLY), point(2, 8.0, APPLY, net)]
    steps = run(seq)
    assert not any(s.closed for s in steps)
    assert [(s.cause, s.started_at) for s in steps[-1].current] == [(net, 0)]
    assert steps[-1].current[0].missed_since is None


def test_a_weak_finding_needs_two_polls_and_starts_at_the_first() -> None:
    ordering = Cause.ORDERING
    steps = run([point(0, 6.0, weak=[ordering]), point(1, 6.0, weak=[ordering])])
    assert steps[0].started == () and steps[0].current == ()
    assert [(s.cause, s.started_at) for s in steps[1].started] == [(ordering, 0)]
    once = run([point(0, 6.0, weak=[ordering]), point(1, 6.0), point(2, 6.0)])
    assert not any(s.started or s.current for s in once)


def test_stopped_takes_precedence_as_main_cause() -> None:
    seq = [
        *[point(t, 6.0 + t, APPLY, Cause.SOURCE_BURST) for t in range(0, 20)],
        *[point(t, 30.0, STOPPED, Cause.STOPPED) for t in range(20, 25)],
        *[point(t, 20.0, APPLY, Cause.SOURCE_BURST) for t in range(25, 40)],
    ]
    assert run(seq)[-1].state.main_cause is Cause.STOPPED


def test_unexplained_is_main_only_when_nothing_was_named() -> None:
    seq = [
        *[point(t, 10.0, APPLY, Cause.UNEXPLAINED) for t in range(0, 30)],
        *[point(t, 10.0, APPLY, Cause.DURABLE_APPLY) for t in range(30, 35)],
    ]
    steps = run(seq)
    assert steps[29].state.main_cause is Cause.UNEXPLAINED
    assert steps[-1].state.main_cause is Cause.DURABLE_APPLY


def test_open_segments_close_with_the_episode_never_past_its_end() -> None:
    skew = Cause.CLOCK_SKEW
    seq = [point(0, 6.0, APPLY, skew), *[point(t, 0.0, UP, skew) for t in range(1, 40)]]
    steps = run(seq)
    end = next(s for s in steps if s.ended_at is not None)
    assert end.ended_at == 1
    assert [(c.cause, c.started_at, c.ended_at) for c in end.closed] == [(skew, 0, 1)]


def test_the_hold_can_be_shortened() -> None:
    state = EpisodeState()
    for p in [point(0, 6.0), point(1, 0.0, UP), point(4, 0.0, UP)]:
        step = advance(state, p, caught_up_hold_s=3.0)
        state = step.state
    assert step.ended_at == 1
    assert CAUGHT_UP_HOLD_S == 30.0


def test_state_json_round_trip_and_old_or_unknown_rows() -> None:
    seq = [point(0, 6.0, APPLY, Cause.DDL, weak=[Cause.ORDERING]), point(1, 6.0, APPLY)]
    state = run(seq)[-1].state
    raw = episode_state_to_json(state)
    assert episode_state_from_json(raw) == state
    assert episode_state_from_json(None) == EpisodeState()
    raw["segments"][0]["finding"]["cause"] = "from_a_later_version"
    raw["held"] = [["from_a_later_version", 3.0]]
    assert episode_state_from_json(raw).segments == ()
    old = {"started_at": 5.0, "segments": [], "growing_polls": 1}
    assert episode_state_from_json(old).started_at == 5.0
