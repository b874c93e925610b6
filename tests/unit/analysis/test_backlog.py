"""Which of two replicas lags and why: the comparison's pure decisions (analysis/backlog.py)."""

from __future__ import annotations

from lagscope.analysis.backlog import (
    LinkVerdict,
    backlog_of,
    cause,
    is_behind,
    lagging,
    network_verdict,
    own_link,
)

NONE = backlog_of([0.0, 0.0], [0.0, 0.0])
FAR = backlog_of([900.0, 1100.0], [10.0, 30.0])  # waiting on the network
APPLYING = backlog_of([5.0, 15.0], [800.0, 1200.0])  # received, waiting on the applier


def test_backlog_figures() -> None:
    assert (FAR.samples, FAR.not_received_mean, FAR.received_not_applied_mean) == (2, 1000, 20)
    assert FAR.not_received_p95 == 1090.0
    assert backlog_of([], []).total == 0.0 and backlog_of([], []).dominant is None


def test_neither_behind() -> None:
    assert not is_behind(0.3, NONE)
    assert lagging((0.3, 0.4, NONE), (0.2, 0.3, NONE)) is None


def test_the_one_further_behind_and_its_side() -> None:
    assert lagging((0.2, 0.3, NONE), (12.0, 14.0, FAR)) == "b"
    assert cause(FAR) == "not_received"
    assert cause(APPLYING) == "received_not_applied"
    # Lags unknown: the bigger backlog is the one behind.
    assert lagging((None, None, APPLYING), (None, None, NONE)) == "a"


def test_the_one_further_behind_is_not_picked_by_the_median_alone() -> None:
    # Medians alike (5.0 vs 5.1 s) but a's p95 is 60 s: a lags more (the median alone said b).
    assert lagging((5.0, 60.0, APPLYING), (5.1, 6.0, APPLYING)) == "a"
    # p50 and p95 disagree (b more often behind, a further behind): the bigger backlog decides.
    queued = backlog_of([0.0, 0.0], [3000.0, 3000.0])
    assert lagging((3.0, 40.0, FAR), (8.0, 10.0, queued)) == "b"
    assert lagging((3.0, 40.0, queued), (8.0, 10.0, FAR)) == "a"
    # Alike on both: a clearly bigger backlog decides, not a 0.1 s difference of medians.
    assert lagging((40.0, 45.0, FAR), (40.1, 45.2, NONE)) == "a"


def test_far_replica_with_its_own_slow_link_vs_a_shared_limit() -> None:
    assert own_link(FAR, NONE)  # the near control receives in time: the far link is the limit
    assert not own_link(FAR, backlog_of([800.0], [0.0]))  # both receive late: upstream limit


def test_a_gap_within_noise_is_no_difference() -> None:
    # Seen once: 48.3/66.4 s vs 47.7/66.1 s with alike backlogs was called "lags more".
    near = backlog_of([2.0, 4.0], [9000.0, 9400.0])
    far = backlog_of([3.0, 5.0], [9100.0, 9200.0])
    assert lagging((48.3, 66.4, near), (47.7, 66.1, far)) == "alike"
    assert network_verdict((48.3, 66.4, near), (47.7, 66.1, far)) == LinkVerdict(
        "not_measurably_different"
    )
    # The same lags with one backlog clearly bigger: that one is further behind.
    assert lagging((48.3, 66.4, near), (47.7, 66.1, NONE)) == "a"
    # p50 and p95 disagree and the backlogs are alike: no measurable order either.
    assert lagging((3.0, 40.0, FAR), (8.0, 10.0, FAR)) == "alike"


def test_is_the_far_replica_behind_because_of_the_network() -> None:
    assert network_verdict((0.2, 0.3, NONE), (20.0, 22.0, FAR)) == LinkVerdict(
        "yes", "b", "not_received"
    )
    # Behind, but its backlog waits on the applier: no.
    assert network_verdict((12.0, 14.0, APPLYING), (0.2, 0.3, NONE)) == LinkVerdict(
        "no", "a", "received_not_applied"
    )
    # Both receive late, the far one more: not its own link (shared upstream): no.
    late = backlog_of([700.0, 700.0], [0.0, 0.0])
    assert network_verdict((20.0, 22.0, FAR), (9.0, 10.0, late)) == LinkVerdict(
        "no", "a", "not_received", shared=True
    )
    assert network_verdict((0.2, 0.3, NONE), (0.1, 0.2, NONE)) == LinkVerdict(None)
