"""Is the far replica behind because of the network? (issue 19 item 4): yes, no, or not
measurably different — a difference within the samples' noise is no difference."""

from __future__ import annotations

import random
import re

from lagscope.analysis.causes.compare_link import (
    LinkAnswer,
    LinkSide,
    far_behind_because_of_network,
    spread,
)

_IDENTIFIER = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")


def _series(center: float, width: float, n: int = 300, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [max(0.0, rng.uniform(center - width, center + width)) for _ in range(n)]


def _no_identifiers(sentence: str) -> None:
    assert not _IDENTIFIER.findall(sentence), sentence


def test_the_demo_phase_a_difference_is_not_measurably_different() -> None:
    """The issue's case: 48.3/66.4 s vs 47.7/66.1 s, called a difference today."""
    near = LinkSide("replica1", "eu", _series(52.0, 14.0, seed=1), _series(3000, 800, seed=2))
    far = LinkSide("replica2", "us", _series(52.3, 14.0, seed=3), _series(3020, 800, seed=4))
    verdict = far_behind_because_of_network(near, far)
    assert verdict.answer is LinkAnswer.NOT_MEASURABLY_DIFFERENT
    assert verdict.sentence.startswith("Not measurably different: replica2 (far, us) and replica1")
    assert "within the ±" in verdict.sentence
    assert verdict.lag_noise_s is not None and verdict.lag_noise_s > 1.0
    _no_identifiers(verdict.sentence)


def test_a_far_replica_short_of_received_transactions_is_yes() -> None:
    near = LinkSide("replica1", "eu", _series(0.3, 0.3, seed=5), _series(5, 5, seed=6))
    far = LinkSide("replica2", "us", _series(20.0, 15.0, seed=7), _series(2500, 1500, seed=8))
    verdict = far_behind_because_of_network(near, far)
    assert verdict.answer is LinkAnswer.YES
    assert "the link to it is the limit" in verdict.sentence
    assert verdict.not_received_difference is not None and verdict.not_received_difference > 1000
    _no_identifiers(verdict.sentence)


def test_a_far_replica_behind_on_applying_is_no() -> None:
    near = LinkSide("replica1", "eu", _series(0.3, 0.3, seed=9), _series(5, 5, seed=10))
    far = LinkSide("replica2", "us", _series(20.0, 5.0, seed=11), _series(6, 5, seed=12))
    verdict = far_behind_because_of_network(near, far, backlog_resolution=20.0)
    assert verdict.answer is LinkAnswer.NO
    assert "receives as promptly" in verdict.sentence
    assert "applying" in verdict.sentence
    _no_identifiers(verdict.sentence)


def test_a_near_replica_lagging_more_is_no() -> None:
    near = LinkSide("replica1", "eu", _series(30.0, 3.0), _series(10, 5))
    far = LinkSide("replica2", "us", _series(2.0, 1.0), _series(10, 5))
    verdict = far_behind_because_of_network(near, far)
    assert verdict.answer is LinkAnswer.NO
    assert "lags less than" in verdict.sentence


def test_neither_behind_is_no() -> None:
    near = LinkSide("replica1", "eu", [0.1, 0.2, 0.1, 0.3], [0, 1, 0, 0])
    far = LinkSide("replica2", "us", [0.2, 0.4, 0.3, 0.2], [1, 2, 0, 1])
    verdict = far_behind_because_of_network(near, far)
    assert verdict.answer is LinkAnswer.NO
    assert verdict.sentence.startswith("No: neither replica2 (far, us) nor replica1 (near, eu)")


def test_a_small_steady_difference_within_the_poll_resolution_is_no_difference() -> None:
    near = LinkSide("replica1", "", [10.0] * 20, [100.0] * 20)
    far = LinkSide("replica2", "", [10.6] * 20, [500.0] * 20)
    verdict = far_behind_because_of_network(near, far, resolution_s=1.0)
    assert verdict.answer is LinkAnswer.NOT_MEASURABLY_DIFFERENT
    # The same 0.6 s with a finer resolution is a difference.
    finer = far_behind_because_of_network(near, far, resolution_s=0.1)
    assert finer.answer is LinkAnswer.YES


def test_too_few_samples_or_no_backlog_split_is_unknown() -> None:
    few = far_behind_because_of_network(LinkSide("a", lag_s=[1.0]), LinkSide("b", lag_s=[9.0]))
    assert few.answer is LinkAnswer.UNKNOWN
    no_split = far_behind_because_of_network(
        LinkSide("a", lag_s=[0.2] * 10), LinkSide("b", lag_s=[20.0] * 10)
    )
    assert no_split.answer is LinkAnswer.UNKNOWN
    assert "cannot be told" in no_split.sentence


def test_spread_is_robust_to_a_spike() -> None:
    assert spread([1.0] * 99 + [1000.0]) == 0.0
    assert spread([]) == 0.0
