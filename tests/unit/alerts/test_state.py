"""The alert state machine: for-duration, hysteresis, keep-firing, repeat, NULL lag, SQL_Delay."""

from __future__ import annotations

from lagscope.alerts.state import (
    AlertState,
    Notification,
    Observation,
    Phase,
    RuleSpec,
    Unknown,
    step,
)


def run(
    rule: RuleSpec, values: list[float | None], dt: float = 10.0, **kw: bool
) -> list[Notification]:
    st, out = AlertState(), []
    for i, v in enumerate(values):
        st, note = step(rule, st, Observation(at=i * dt, value=v, **kw))  # type: ignore[arg-type]
        if note is not None:
            out.append(note)
    return out


def test_one_sample_spike_does_not_fire_with_for() -> None:
    rule = RuleSpec(threshold=30, for_s=30)
    assert run(rule, [0, 100, 0, 0, 100, 100, 0]) == []


def test_fires_once_after_for_and_resolves_once() -> None:
    rule = RuleSpec(threshold=30, for_s=20)
    notes = run(rule, [0, 50, 50, 50, 50, 50, 0, 0])
    assert [(n.kind, n.at) for n in notes] == [("firing", 30.0), ("resolved", 60.0)]
    assert notes[1].starts_at == 30.0


def test_hysteresis_no_flap_on_oscillation_around_threshold() -> None:
    oscillating = [0, 40, 40, 25, 35, 25, 35, 28, 32, 25, 35, 5]
    plain = run(RuleSpec(threshold=30), oscillating)
    assert [n.kind for n in plain].count("firing") > 1  # without hysteresis it flaps
    with_h = run(RuleSpec(threshold=30, resolve_threshold=10), oscillating)
    assert [n.kind for n in with_h] == ["firing", "resolved"]


def test_keep_firing_holds_through_short_dips() -> None:
    rule = RuleSpec(threshold=30, keep_firing_s=25)
    notes = run(rule, [50, 0, 0, 50, 0, 0, 0, 0])
    assert [(n.kind, n.at) for n in notes] == [("firing", 0.0), ("resolved", 60.0)]


def test_repeat_interval_while_firing() -> None:
    rule = RuleSpec(threshold=30, repeat_s=30)
    notes = run(rule, [50] * 8)
    assert [(n.kind, n.at) for n in notes] == [("firing", 0.0), ("repeat", 30.0), ("repeat", 60.0)]


def test_null_lag_is_unknown_and_fires_when_sql_stopped_by_default() -> None:
    rule = RuleSpec(threshold=30, for_s=10)
    assert run(rule, [None, None, None]) == []
    assert [n.kind for n in run(rule, [None, None, None], sql_stopped=True)] == ["firing"]
    assert [n.kind for n in run(rule, [None, None], unreachable=True)] == ["firing"]
    assert run(RuleSpec(threshold=30, unknown=Unknown.OK), [None] * 3, sql_stopped=True) == []
    assert len(run(RuleSpec(threshold=30, unknown=Unknown.FIRING), [None] * 3)) == 1


def test_one_unanswered_poll_keeps_the_judgement_by_default() -> None:
    """A poll that got no answer (the verdict window not yet unreachable) is unknown: it does
    not resolve a firing alert, so the next stopped poll does not fire it a second time."""
    rule = RuleSpec(threshold=0.5, for_s=10)
    st, notes = AlertState(), []
    polls = [(1.0, False), (1.0, False), (None, True), (1.0, False), (None, True), (0.0, False)]
    for i, (value, unanswered) in enumerate(polls):
        obs = Observation(at=i * 10.0, value=value, sql_stopped=value == 1.0, unanswered=unanswered)
        st, note = step(rule, st, obs)
        notes += [note] if note else []
    assert [(n.kind, n.at) for n in notes] == [("firing", 10.0), ("resolved", 50.0)]
    quiet = [Observation(at=0.0, value=0.0), Observation(at=10.0, value=None, unanswered=True)]
    st = AlertState()
    for obs in quiet:
        st, note = step(RuleSpec(threshold=0.5), st, obs)
        assert note is None and st.phase is Phase.OK  # nor does it start one


def test_unknown_keep_keeps_previous_judgement() -> None:
    rule = RuleSpec(threshold=30, unknown=Unknown.KEEP)
    assert [n.kind for n in run(rule, [50, None, None, 0])] == ["firing", "resolved"]


def test_delayed_replica_judged_on_lag_minus_sql_delay() -> None:
    rule = RuleSpec(threshold=30)
    st, note = step(rule, AlertState(), Observation(at=0, value=3620, sql_delay_s=3600))
    assert note is None and st.phase is Phase.OK
    st, note = step(rule, st, Observation(at=10, value=3640, sql_delay_s=3600))
    assert note is not None and note.kind == "firing"


def test_state_is_resumable_from_stored_copy() -> None:
    """A restarted worker resumes from the stored state: no second firing, the resolved comes."""
    rule = RuleSpec(threshold=30, for_s=10)
    st, _ = step(rule, AlertState(), Observation(at=0, value=50))
    st, note = step(rule, st, Observation(at=10, value=50))
    assert note is not None and note.kind == "firing"
    stored = AlertState(**{f: getattr(st, f) for f in st.__slots__})  # round-trip as the store does
    st2, again = step(rule, stored, Observation(at=20, value=50))
    assert again is None
    _, resolved = step(rule, st2, Observation(at=30, value=0))
    assert resolved is not None and resolved.kind == "resolved"
