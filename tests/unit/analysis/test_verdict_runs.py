"""Verdict runs (history/verdicts.py): a bucket's verdict and merging buckets into runs."""

from __future__ import annotations

from lagscope.analysis.codes import Verdict
from lagscope.analysis.verdict_runs import Run, bucket_verdict, runs_from_buckets

V = Verdict


def test_the_most_common_verdict_wins_and_a_tie_goes_to_the_more_severe():
    assert bucket_verdict({V.CAUGHT_UP: 5, V.APPLY_BOUND: 2}) is V.CAUGHT_UP
    assert bucket_verdict({V.CAUGHT_UP: 2, V.STOPPED: 2}) is V.STOPPED
    assert bucket_verdict({V.RECEIVE_BOUND: 3, V.APPLY_BOUND: 3}) is V.RECEIVE_BOUND


def test_consecutive_buckets_merge_and_a_missing_bucket_ends_a_run():
    buckets = [(0, V.CAUGHT_UP), (10, V.CAUGHT_UP), (20, V.STOPPED), (40, V.STOPPED)]
    assert runs_from_buckets(buckets, 10) == [
        Run(0, 20, V.CAUGHT_UP),
        Run(20, 30, V.STOPPED),
        Run(40, 50, V.STOPPED),
    ]
    assert runs_from_buckets([], 10) == []
