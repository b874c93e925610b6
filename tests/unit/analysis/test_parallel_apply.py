"""The commit-parent rule simulated on hand-made chains (analysis/parallel_apply.py)."""

from __future__ import annotations

import pytest

from lagscope.analysis.parallel_apply import (
    Trx,
    applier_workers,
    bounded,
    from_commit_groups,
    independent,
    makespan,
    mean_group_size,
    predict_capacity,
    speedups,
)


def chain(n: int) -> list[Trx]:
    """Each transaction waits for the one before it (a single hot row, or sync_binlog-like
    commits one at a time on the source)."""
    return [Trx(i, i - 1) for i in range(1, n + 1)]


def all_independent(n: int) -> list[Trx]:
    return [Trx(i, 0) for i in range(1, n + 1)]


def test_all_independent_scales_with_the_workers():
    got = speedups(all_independent(48), counts=(1, 2, 4, 8, 16))
    assert got == {1: 1.0, 2: 2.0, 4: 4.0, 8: 8.0, 16: 16.0}
    # 48 over 16 workers: three rounds; over 5: ten rounds (48 / 10 = 4.8×)
    assert makespan(all_independent(48), 5) == 10.0


def test_a_strict_chain_gains_nothing_from_any_worker_count():
    assert set(speedups(chain(30)).values()) == {1.0}


@pytest.mark.parametrize("k", [2, 3, 5])
def test_groups_of_k_apply_k_at_a_time(k: int):
    trxs = from_commit_groups([[1.0] * k] * 12)
    assert mean_group_size(trxs) == k
    got = speedups(trxs, counts=(1, 2, k, k + 3))
    assert got[1] == 1.0
    assert got[k] == pytest.approx(k)
    assert got[k + 3] == pytest.approx(k)  # more workers than a group: idle
    assert got[2] == pytest.approx(12 * k / (12 * -(-k // 2)))  # ⌈k/2⌉ rounds per group


def test_commit_order_holds_a_worker_behind_a_long_predecessor():
    trxs = [Trx(1, 0, 3.0), Trx(2, 0, 1.0), Trx(3, 0, 1.0), Trx(4, 0, 1.0)]
    assert makespan(trxs, 2, preserve_commit_order=True) == 4.0  # 6 / 4 = 1.5×
    assert makespan(trxs, 2, preserve_commit_order=False) == 3.0  # 2×


def test_a_parent_older_than_the_sample_has_committed_already():
    # A sample starting mid-log: parents 97…99 are before it.
    trxs = [Trx(100, 97), Trx(101, 97), Trx(102, 99)]
    assert makespan(trxs, 3) == 1.0


def test_mariadb_optimistic_is_the_bound_without_parents():
    groups = from_commit_groups([[1.0]] * 20)  # no group commit at all: a chain
    assert speedups(groups, counts=(4,))[4] == 1.0
    assert speedups(independent(groups), counts=(4,))[4] == 4.0


def test_bounded_by_workers_and_cores():
    assert bounded(3.4, workers=4, cores=2) == 2.0
    assert bounded(1.6, workers=4, cores=2) == 1.6
    assert bounded(7.0, workers=4, cores=None) == 4.0


def test_no_workers_is_an_error_and_an_empty_sample_gains_nothing():
    with pytest.raises(ValueError):
        makespan(chain(3), 0)
    assert speedups([], counts=(1, 4)) == {1: 1.0, 4: 1.0}


def test_a_prediction_carries_the_measured_capacity_to_the_new_worker_count():
    groups = from_commit_groups([[1.0] * 3] * 20)  # groups of 3: 3× at most
    conservative = speedups(groups)
    optimistic = speedups(independent(groups))
    got = predict_capacity(conservative, optimistic, 1, 4, "conservative", None, 500.0, 1400.0)
    assert got.factor == pytest.approx(3.0) and got.stream_allows == pytest.approx(3.0)
    assert got.predicted == pytest.approx(1500.0)
    assert got.error == pytest.approx(1400 / 1500 - 1)
    # Two cores: at most 2× whatever the stream allows; optimistic takes the bound's table.
    capped = predict_capacity(conservative, optimistic, 1, 4, "optimistic", 2, 500.0, None)
    assert capped.mode == "optimistic" and capped.factor == pytest.approx(2.0)
    assert capped.measured is None and capped.error is None
    # Groups of 3 on 2 workers take two rounds each (1.5×); 8 workers on 2 cores apply 2×.
    more = predict_capacity(conservative, optimistic, 2, 8, None, 2, 900.0, 880.0)
    assert more.factor == pytest.approx(2.0 / 1.5) and more.predicted == pytest.approx(1200.0)
    # Without parents 2 workers already use both cores: nothing more to gain.
    same = predict_capacity(conservative, optimistic, 2, 8, "aggressive", 2, 900.0, 880.0)
    assert same.factor == pytest.approx(1.0) and same.predicted == pytest.approx(900.0)
    assert (
        predict_capacity(conservative, optimistic, 1, 4, None, None, None, 10.0).predicted is None
    )


def test_worker_settings_read_as_worker_counts():
    assert [applier_workers(v) for v in ("0", "4", None, "", "x", "16")] == [1, 4, 1, 1, 1, 16]
