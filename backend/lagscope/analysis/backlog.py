"""Where a replica's backlog sits, and which of two replicas lags and why (DESIGN.md §4).

Pure decisions for the comparison of two channels under one load: the backlog splits into
``not_received`` (the IO side: the network, or the replica's own relay-log writes) and
``received_not_applied`` (the SQL side: apply). The other channel is the control: a far replica
with far more not received than the near one is network-bound; two that receive alike are not.
services/compare.py loads the samples and words the conclusion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from lagscope.analysis.stats import mean, p95

Cause = Literal["not_received", "received_not_applied"]
_BEHIND_LAG_S = 1.0  # below a second of lag p50, a 1 s poll cannot tell "behind" from jitter
_BEHIND_BACKLOG = 1.0  # on average at least one transaction (or byte) outstanding
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


def lagging(
    a: tuple[float | None, Backlog], b: tuple[float | None, Backlog]
) -> Literal["a", "b"] | None:
    """Which of two channels (lag p50, backlog) is further behind; None when neither is."""
    if not (is_behind(*a) or is_behind(*b)):
        return None
    a_lag, b_lag = a[0], b[0]
    if a_lag is not None and b_lag is not None and a_lag != b_lag:
        return "a" if a_lag > b_lag else "b"
    return "a" if a[1].total >= b[1].total else "b"


def cause(behind: Backlog) -> Cause:
    """The side of the replica the backlog of the one behind sits on (apply when unsure)."""
    return behind.dominant or "received_not_applied"


def own_link(behind: Backlog, control: Backlog) -> bool:
    """Receive-bound: is it this replica's own link (the control receives in time under the same
    load) rather than a limit shared upstream?"""
    missing = behind.not_received_mean or 0.0
    return (control.not_received_mean or 0.0) < _MUCH_LESS * missing
