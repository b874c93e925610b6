"""Verdict runs from bucketed verdict counts: a bucket's verdict is the most common one among
its samples, the more severe on a tie; consecutive buckets with the same verdict merge into one
run, and a bucket without samples ends a run (the band shows a hole, never a guess).

Pure: history/verdicts.py counts the verdicts per bucket in the store and calls these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lagscope.analysis.codes import Verdict

# Most severe first: a tie between two verdicts in a bucket goes to the one earlier here.
SEVERITY = (
    Verdict.BROKEN,
    Verdict.UNREACHABLE,
    Verdict.STOPPED,
    Verdict.RECEIVE_BOUND,
    Verdict.APPLY_BOUND,
    Verdict.DELAYED_BY_DESIGN,
    Verdict.CAUGHT_UP,
)
_RANK = {v: i for i, v in enumerate(SEVERITY)}


@dataclass(frozen=True, slots=True)
class Run:
    start_ms: int
    end_ms: int
    verdict: Verdict


def bucket_verdict(counts: dict[Verdict, int]) -> Verdict:
    """The most common verdict; on a tie, the more severe."""
    return min(counts, key=lambda v: (-counts[v], _RANK[v]))


def runs_from_buckets(buckets: Sequence[tuple[int, Verdict]], width_ms: int) -> list[Run]:
    """(bucket start ms, verdict) in time order → runs; a missing bucket ends a run."""
    runs: list[Run] = []
    for start, verdict in buckets:
        last = runs[-1] if runs else None
        if last and last.verdict == verdict and last.end_ms == start:
            runs[-1] = Run(last.start_ms, start + width_ms, verdict)
        else:
            runs.append(Run(start, start + width_ms, verdict))
    return runs
