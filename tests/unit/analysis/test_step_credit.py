"""Which parameter change an episode ended after (analysis/step_credit.py)."""

from __future__ import annotations

from lagscope.analysis.step_credit import StepCandidate, credited_step, upstream_of

SOURCE, REPLICA1, REPLICA2 = 1, 2, 3


def test_the_replicas_own_step_wins_over_a_sibling_step_in_the_same_second() -> None:
    own = StepCandidate(change_id=10, instance_id=REPLICA1, at=100.0)
    sibling = StepCandidate(change_id=11, instance_id=REPLICA2, at=100.0)
    upstream = frozenset({SOURCE})
    assert credited_step([own, sibling], REPLICA1, upstream) == 10
    assert credited_step([own, sibling], REPLICA2, upstream) == 11


def test_the_replicas_own_step_wins_over_a_later_one_on_its_source() -> None:
    own = StepCandidate(10, REPLICA1, 100.0)
    on_source = StepCandidate(11, SOURCE, 130.0)
    assert credited_step([on_source, own], REPLICA1, frozenset({SOURCE})) == 10


def test_a_step_on_the_source_is_credited_when_the_replica_made_none() -> None:
    early = StepCandidate(10, SOURCE, 100.0)
    late = StepCandidate(12, SOURCE, 140.0)
    sibling = StepCandidate(11, REPLICA2, 150.0)
    assert credited_step([early, sibling, late], REPLICA1, frozenset({SOURCE})) == 12


def test_a_sibling_replicas_step_alone_is_not_credited() -> None:
    sibling = StepCandidate(11, REPLICA2, 100.0)
    assert credited_step([sibling], REPLICA1, frozenset({SOURCE})) is None
    assert credited_step([], REPLICA1, frozenset({SOURCE})) is None


def test_ties_in_time_go_to_the_later_write() -> None:
    a, b = StepCandidate(10, REPLICA1, 100.0), StepCandidate(11, REPLICA1, 100.0)
    assert credited_step(iter([b, a]), REPLICA1, frozenset()) == 11


def test_upstream_follows_a_chain_and_stops_at_a_ring() -> None:
    # source → replica1 → replica2 (replica2's channel reads replica1)
    feeds = {REPLICA1: [SOURCE], REPLICA2: [REPLICA1], SOURCE: [REPLICA2]}  # and a ring back
    assert upstream_of(REPLICA1, feeds, [SOURCE]) == {REPLICA1, SOURCE, REPLICA2}
    assert upstream_of(REPLICA1, {REPLICA1: [SOURCE]}, [SOURCE]) == {REPLICA1, SOURCE}


def test_a_channel_whose_source_is_unknown_replicates_from_the_source_role() -> None:
    assert upstream_of(None, {}, [SOURCE]) == {SOURCE}
    assert upstream_of(None, {}, []) == frozenset()
