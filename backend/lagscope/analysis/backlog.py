"""Where a replica's backlog sits, and which of two replicas lags and why (docs/lag.md).

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
    larger, as analysis/impact/ judges a lag change), 0 when alike or unknown."""
    if x is None or y is None:
        return 0
    if abs(x - y) < max(_ALIKE_S, _ALIKE_SHARE * max(abs(x), abs(y))):
        return 0
    return 1 if x > y else -1


def _clearly_more_backlog(x: Backlog, y: Backlog) -> int:
    """+1 / −1 when backlog ``x`` is clearly bigger / smaller than ``y`` (by at least one
    transaction and 20 % of the bigger), 0 when the difference is within noise."""
    if abs(x.total - y.total) < max(_BEHIND_BACKLOG, _ALIKE_SHARE * max(x.total, y.total)):
        return 0
    return 1 if x.total > y.total else -1


Further = Literal["a", "b", "alike"]


def lagging(
    a: tuple[float | None, float | None, Backlog], b: tuple[float | None, float | None, Backlog]
) -> Further | None:
    """Which of two channels (lag p50, lag p95, backlog) is further behind: ``"alike"`` when no
    difference stands out of the noise, None when neither is behind.

    Not by the median alone: a replica at p50 5.0 s / p95 60 s lags more than one at 5.1 / 6 s.
    p50 and p95 each vote for the channel clearly above the other; when the votes agree, that
    channel. When the lags are alike, or the two figures disagree (one lags more often, the other
    further), a clearly bigger backlog (transactions not yet applied) decides; when the backlogs
    are alike too, the two are not measurably different (a 0.3 s gap between two 48 s medians
    is no difference).
    """
    if not (is_behind(a[0], a[2]) or is_behind(b[0], b[2])):
        return None
    votes = {_clearly_more(a[0], b[0]), _clearly_more(a[1], b[1])} - {0}
    if len(votes) == 1:
        return "a" if votes == {1} else "b"
    by_backlog = _clearly_more_backlog(a[2], b[2])
    if by_backlog:
        return "a" if by_backlog > 0 else "b"
    return "alike"


def cause(behind: Backlog) -> Cause:
    """The side of the replica the backlog of the one behind sits on (apply when unsure)."""
    return behind.dominant or "received_not_applied"


def own_link(behind: Backlog, control: Backlog) -> bool:
    """Receive-bound: is it this replica's own link (the control receives in time under the same
    load) rather than a limit shared upstream?"""
    missing = behind.not_received_mean or 0.0
    return (control.not_received_mean or 0.0) < _MUCH_LESS * missing


NetworkAnswer = Literal["yes", "no", "not_measurably_different"]


@dataclass(frozen=True, slots=True)
class LinkVerdict:
    """Is the replica further behind behind because of its link to the source?

    ``network``: "yes" (it lags more, its backlog waits to be received, and the control receives
    in time), "no" (it lags more for another reason: apply, or a limit both share upstream), or
    "not_measurably_different" (the two lag alike: no difference stands out of the noise); None
    when neither is behind. ``behind`` names the one further behind ("a"/"b"); ``side`` is where
    its backlog sits; ``shared`` says a receive-side backlog is shared with the control."""

    network: NetworkAnswer | None
    behind: Literal["a", "b"] | None = None
    side: Cause | None = None
    shared: bool = False


def network_verdict(
    a: tuple[float | None, float | None, Backlog], b: tuple[float | None, float | None, Backlog]
) -> LinkVerdict:
    """Answer "is the one behind behind because of the network?" for two channels under one
    source load: yes, no, or not measurably different."""
    further = lagging(a, b)
    if further is None:
        return LinkVerdict(None)
    if further == "alike":
        return LinkVerdict("not_measurably_different")
    behind, control = (a[2], b[2]) if further == "a" else (b[2], a[2])
    side = cause(behind)
    if side == "not_received":
        own = own_link(behind, control)
        return LinkVerdict("yes" if own else "no", further, side, shared=not own)
    return LinkVerdict("no", further, side)
