"""Comparisons: one channel in two windows (did it change?) or two channels over one window
(why does one of them lag?).

Two windows of one channel are judged with :func:`lagscope.analysis.impact.impact`, ``a`` as the
baseline: the samples of each window are re-timed so that ``a`` ends and ``b`` starts at 0, so the
windows may lie in any order, and even overlap, without a second implementation of the verdict.

Two channels over one window answer "why is one behind" by decomposition: the backlog of the
channel that lags more is split into ``not_received`` (the IO side: the network, or the replica's
own relay-log writes) and ``received_not_applied`` (the SQL side: apply). The other channel, under
the same source load, is the control: a far replica that has far more not received than the near
one is network-bound; two that receive alike are not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy.orm import Session

from lagscope.analysis.backlog import (
    Backlog,
    Cause,
    LinkVerdict,
    NetworkAnswer,
    backlog_of,
    network_verdict,
)
from lagscope.analysis.impact import Impact, Point, Window, WindowStats, impact, window_stats
from lagscope.errors import InvalidInput, NotFound
from lagscope.history.series import RawSeries
from lagscope.history.window import require_window
from lagscope.journal.samples import SampleRow, load_samples, sample_backlog
from lagscope.models import Channel, Instance
from lagscope.models.types import to_micros


@dataclass(frozen=True, slots=True)
class Side:
    channel: Channel
    instance: Instance
    start: datetime
    end: datetime
    stats: WindowStats
    backlog: Backlog


@dataclass(frozen=True, slots=True)
class Comparison:
    mode: Literal["windows", "channels"]
    a: Side
    b: Side
    conclusion: str
    impact: Impact | None = None  # windows: how b compares with a
    lagging: Literal["a", "b"] | None = None  # channels: the one further behind, if any
    cause: Cause | None = None  # channels: why the lagging one lags
    # channels: is the one behind behind because of the network? (None: neither is behind)
    network: NetworkAnswer | None = None


def get_channel(session: Session, channel_id: int) -> Channel:
    channel = session.get(Channel, channel_id)
    if channel is None:
        raise NotFound(f"channel {channel_id} does not exist")
    return channel


def backlog(rows: Sequence[SampleRow]) -> Backlog:
    return backlog_of(
        [float(r.not_received) for r in rows if r.not_received is not None],
        [float(r.received_not_applied) for r in rows if r.received_not_applied is not None],
    )


def _inside(rows: Sequence[SampleRow], start: datetime, end: datetime) -> list[SampleRow]:
    lo, hi = to_micros(start), to_micros(end)
    return [r for r in rows if lo <= r.us < hi]


def _points(rows: Sequence[SampleRow], origin: datetime) -> list[Point]:
    zero = to_micros(origin)
    return [
        Point(
            (r.us - zero) / 1e6,
            r.lag_s,
            r.verdict,
            r.apply_rate,
            r.source_rate,
            sample_backlog(r),
            r.not_received,
        )
        for r in rows
    ]


def compare_windows(
    session: Session,
    channel_id: int,
    a: tuple[datetime, datetime],
    b: tuple[datetime, datetime],
    min_samples: int = 10,
    raw: RawSeries | None = None,
) -> Comparison:
    """Window ``b`` of a channel against window ``a``, its baseline."""
    require_window(*a, "a_start", "a_end")
    require_window(*b, "b_start", "b_end")
    if min_samples < 1:
        raise InvalidInput("min_samples: must be at least 1")
    channel = get_channel(session, channel_id)
    rows = load_samples(session, channel.id, [a, b], raw)
    in_a, in_b = _inside(rows, *a), _inside(rows, *b)
    a_s, b_s = (a[1] - a[0]).total_seconds(), (b[1] - b[0]).total_seconds()
    # a re-timed to [−a_s, 0), b to [0, b_s): "before" and "after" a step at 0 with no settling.
    points = _points(in_a, a[1]) + _points(in_b, b[0])
    result = impact(points, 0.0, -a_s, b_s, max(a_s, b_s), 0.0, min_samples)
    verdict = result.verdict.value.replace("_", " ")
    return Comparison(
        "windows",
        Side(channel, channel.instance, *a, result.before, backlog(in_a)),
        Side(channel, channel.instance, *b, result.after, backlog(in_b)),
        f"b against a: {verdict} — {result.reason}",
        impact=result,
    )


def compare_channels(
    session: Session,
    channel_id: int,
    other_channel_id: int,
    start: datetime,
    end: datetime,
    raw: RawSeries | None = None,
) -> Comparison:
    """Two channels of one cluster over the same window, and why the one behind is behind."""
    require_window(start, end)
    first, second = get_channel(session, channel_id), get_channel(session, other_channel_id)
    if first.instance.cluster_id != second.instance.cluster_id:
        # Another cluster has another source and load: there is no control to compare with.
        raise InvalidInput("other_channel_id: the two channels must be in the same cluster")
    sides = []
    for channel in (first, second):
        rows = load_samples(session, channel.id, [(start, end)], raw)
        stats = window_stats(_points(rows, start), Window(0.0, (end - start).total_seconds()))
        sides.append(Side(channel, channel.instance, start, end, stats, backlog(rows)))
    return conclude_channels(*sides)


def conclude_channels(a: Side, b: Side) -> Comparison:
    """The answer over two channels' figures (pure): which is further behind, whether the
    network is why, in one sentence of operator words."""
    verdict = network_verdict(
        (a.stats.lag_p50, a.stats.lag_p95, a.backlog), (b.stats.lag_p50, b.stats.lag_p95, b.backlog)
    )
    if verdict.network is None:
        return Comparison("channels", a, b, _neither(a, b))
    if verdict.behind is None:
        return Comparison("channels", a, b, _alike(a, b), network=verdict.network)
    behind, control = (a, b) if verdict.behind == "a" else (b, a)
    return Comparison(
        "channels",
        a,
        b,
        _why(behind, control, verdict),
        None,
        verdict.behind,
        verdict.side,
        verdict.network,
    )


# Sentences are read by operators: the backlog's two sides in words, never their field names.
_SIDE_WORDS: dict[Cause, str] = {
    "not_received": "not yet received",
    "received_not_applied": "received and waiting to be applied",
}


def _name(side: Side) -> str:
    name = side.instance.name + (f"/{side.channel.name}" if side.channel.name else "")
    return f"{name} ({side.instance.region})" if side.instance.region else name


def _lag(side: Side) -> str:
    p50, p95 = side.stats.lag_p50, side.stats.lag_p95
    if p50 is None or p95 is None:
        return "unknown"
    return f"{p50:.1f}/{p95:.1f} s"


def _lags(first: Side, second: Side) -> str:
    return f"lag median/p95 {_lag(first)} vs {_lag(second)}"


def _neither(a: Side, b: Side) -> str:
    return (
        f"Neither {_name(a)} nor {_name(b)} was behind in this window ({_lags(a, b)}), so there "
        "is no backlog to explain."
    )


def _alike(a: Side, b: Side) -> str:
    """Lags and backlogs within noise of each other: no difference, and not one replica's link."""
    sides = {a.backlog.dominant, b.backlog.dominant}
    common = next(iter(sides)) if len(sides) == 1 else None
    held = (
        f"; in both the backlog is mostly {_SIDE_WORDS[common]}, so what holds them is shared"
        if common is not None
        else ""
    )
    return (
        f"{_name(a)} and {_name(b)} are not measurably different ({_lags(a, b)}): the gap is "
        f"within noise, so neither is behind because of its own network link{held}."
    )


def _why(behind: Side, control: Side, verdict: LinkVerdict) -> str:
    """One sentence: who lags, whether the network is why, and what the control says."""
    missing = behind.backlog.not_received_mean or 0.0
    queued = behind.backlog.received_not_applied_mean or 0.0
    other_missing = control.backlog.not_received_mean or 0.0
    head = f"{_name(behind)} lags more than {_name(control)} ({_lags(behind, control)})"
    if verdict.network == "yes":
        return (
            f"{head}, because of the network: on average {missing:.0f} transactions are not yet "
            f"received (and {queued:.0f} received, waiting to be applied), while "
            f"{_name(control)} has only {other_missing:.0f} not yet received under the same "
            "load, so the link to it (or its relay-log writes) is the limit."
        )
    if verdict.shared:
        return (
            f"{head}, but not because of its own link: {_name(control)} receives as late "
            f"({other_missing:.0f} vs {missing:.0f} transactions not yet received on average), "
            "so the limit is shared upstream (the source or the receivers' relay-log writes)."
        )
    return (
        f"{head}, but not because of the network: on average {queued:.0f} transactions are "
        f"received and waiting to be applied (only {missing:.0f} not yet received), so its "
        "applier is the limit."
    )
