"""How beat's dispatcher batches the clusters due in a second (ingest/tick_batch.py)."""

from __future__ import annotations

from lagscope.ingest.tick_batch import batches


def test_batches_hold_at_most_the_servers_asked_and_one_interval_each():
    due = [(1, 1.0, 5), (2, 1.0, 5), (3, 5.0, 5), (4, 1.0, 5), (5, 1.0, 3), (6, 5.0, 2)]
    assert list(batches(due, 10)) == [(1.0, [1, 2]), (1.0, [4, 5]), (5.0, [3, 6])]


def test_a_cluster_larger_than_a_batch_goes_alone_and_nothing_is_lost():
    due = [(1, 1.0, 2), (2, 1.0, 50), (3, 1.0, 2), (4, 1.0, 2)]
    got = list(batches(due, 10))
    assert got == [(1.0, [1]), (1.0, [2]), (1.0, [3, 4])]
    assert sorted(c for _, ids in got for c in ids) == [1, 2, 3, 4]


def test_nothing_due_is_no_batch():
    assert list(batches([], 40)) == []
