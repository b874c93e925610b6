"""Where a replica's backlog sits, and which of two replicas lags and why (DESIGN.md §4).

Pure decisions for the comparison of two channels under one load: the backlog splits into
``not_received`` (the IO side: the network, or the replica's own relay-log writes) and
``received_not_applied`` (the SQL side: apply). The other channel is the control: a far replica
with far more not received than the near one is network-bound; two that receive alike are not.
journal/compare.py loads the samples and words the conclusion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from lagscope.analysis.stats import mean, p95

Cause = Literal["not_received", "received_not_applied"]
_BEHIND_LAG_S = 1.0  # below a second of lag p50, a 1 s poll cannot tell "behind" from jitter
_BEHIND_BACKLOG = 1.0  # on average at least one transaction (or byte) outstanding
_ALIKE_S, _ALIKE_SHARE = 0.5, 0.2  # lags closer than 0.5 s or 20 % are "alike"
_MUCH_LESS = 0.5  # the control receives "in time" when it has under half the laggard's backlog


@dataclass(frozen=True, slots=True)
class Backlog:
    """Where the outstanding work sits, over the samples that measured it."""

    samples: int
    not_received_mean: float | None
    not_received_p95: float | None
    received_not_applied_mean: float | None
    received_not_applied_p95: float | None

    @property
    def total(self) -> float:
        return (self.not_received_mean or 0.0) + (self.received_not_applied_mean or 0.0)

    @property
    def dominant(self) -> Cause | None:
        if self.total < _BEHIND_BACKLOG:
            return None
        missing, queued = self.not_received_mean or 0.0, self.received_not_applied_mean or 0.0
        return "not_received" if missing > queued else "received_not_applied"


def backlog_of(not_received: Sequence[float], received_not_applied: Sequence[float]) -> Backlog:
    return Backlog(
        samples=max(len(not_received), len(received_not_applied)),
        not_received_mean=mean(not_received),
        not_received_p95=p95(not_received),
        received_not_applied_mean=mean(received_not_applied),
        received_not_applied_p95=p95(received_not_applied),
    )


def is_behind(lag_p50: float | None, backlog: Backlog) -> bool:
    return (lag_p50 or 0.0) >= _BEHIND_LAG_S or backlog.total >= _BEHIND_BACKLOG


def _clearly_more(x: float | None, y: float | None) -> int:
    """+1 / −1 when lag ``x`` is clearly above / below ``y`` (by ≥ 0.5 s and ≥ 20 % of the
    larger, as impact.py judges a lag change), 0 when alike or unknown."""
    if x is None or y is None:
        return 0
    if abs(x - y) < max(_ALIKE_S, _ALIKE_SHARE * max(abs(x), abs(y))):
        return 0
    return 1 if x > y else -1


def lagging(
    a: tuple[float | None, float | None, Backlog], b: tuple[float | None, float | None, Backlog]
) -> Literal["a", "b"] | None:
    """Which of two channels (lag p50, lag p95, backlog) is further behind; None when neither is.

    Not by the median alone: a replica at p50 5.0 s / p95 60 s lags more than one at 5.1 / 6 s.
    p50 and p95 each vote for the channel clearly above the other; when the votes agree, that
    channel. When the lags are alike, or the two figures disagree (one lags more often, the other
    further), the bigger backlog (transactions not yet applied) decides, then the higher p95.
    """
    if not (is_behind(a[0], a[2]) or is_behind(b[0], b[2])):
        return None
    votes = {_clearly_more(a[0], b[0]), _clearly_more(a[1], b[1])} - {0}
    if len(votes) == 1:
        return "a" if votes == {1} else "b"
    if a[2].total != b[2].total:
        return "a" if a[2].total > b[2].total else "b"
    a_p95, b_p95 = a[1] if a[1] is not None else a[0], b[1] if b[1] is not None else b[0]
    if a_p95 is not None and b_p95 is not None and a_p95 != b_p95:
        return "a" if a_p95 > b_p95 else "b"
    return "a"


def cause(behind: Backlog) -> Cause:
    """The side of the replica the backlog of the one behind sits on (apply when unsure)."""
    return behind.dominant or "received_not_applied"


def own_link(behind: Backlog, control: Backlog) -> bool:
    """Receive-bound: is it this replica's own link (the control receives in time under the same
    load) rather than a limit shared upstream?"""
    missing = behind.not_received_mean or 0.0
    return (control.not_received_mean or 0.0) < _MUCH_LESS * missing
