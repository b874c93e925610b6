"""Lag episodes and their cause timeline (CAUSES.md "An episode"), one poll at a time.

A channel is in an episode from the poll its lag reaches ``EPISODE_LAG_S`` (or its backlog grew
for ``GROWING_POLLS`` polls, or replication stopped / broke / stopped answering) until it has
been caught up for ``CAUGHT_UP_HOLD_S``. Inside, each cause is a segment: it opens when this
poll names it and closes when ``SEGMENT_GRACE_POLLS`` polls in a row have not.

FIRST CUT (contract): the issue-19 episodes work refines the thresholds and the segment rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from lagscope.analysis.causes.model import Cause, Finding
from lagscope.analysis.codes import Verdict

EPISODE_LAG_S = 5.0
GROWING_POLLS = 3
CAUGHT_UP_HOLD_S = 30.0
SEGMENT_GRACE_POLLS = 2
_ALWAYS_EPISODE = frozenset({Verdict.STOPPED, Verdict.BROKEN, Verdict.UNREACHABLE})


@dataclass(frozen=True, slots=True)
class EpisodePoint:
    """One poll of one channel, as the episode tracker needs it."""

    at: float  # epoch s
    verdict: Verdict
    lag_s: float | None
    trx_behind: int | None
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True, slots=True)
class OpenSegment:
    """A cause being seen inside the current episode; ``finding`` is its latest, strongest."""

    cause: Cause
    started_at: float
    last_seen_at: float
    missed_polls: int
    finding: Finding


@dataclass(frozen=True, slots=True)
class EpisodeState:
    """What the tracker remembers between polls (stored on the channel as JSON)."""

    started_at: float | None = None  # None: not in an episode
    peak_lag_s: float | None = None
    peak_at: float | None = None
    caught_up_since: float | None = None
    growing_polls: int = 0
    last_trx_behind: int | None = None
    segments: tuple[OpenSegment, ...] = ()

    @property
    def in_episode(self) -> bool:
        return self.started_at is not None


@dataclass(frozen=True, slots=True)
class ClosedSegment:
    cause: Cause
    started_at: float
    ended_at: float
    finding: Finding


@dataclass(frozen=True, slots=True)
class EpisodeStep:
    """The state after a poll and what happened in it, for the store to write."""

    state: EpisodeState
    opened: bool = False  # an episode started at this poll (state.started_at)
    ended_at: float | None = None  # the episode ended at this time (caught up since then)
    closed: tuple[ClosedSegment, ...] = ()  # segments that ended at this poll
    current: tuple[OpenSegment, ...] = field(default=())  # open segments after this poll


def _behind(point: EpisodePoint) -> bool:
    if point.verdict in _ALWAYS_EPISODE:
        return True
    return point.lag_s is not None and point.lag_s >= EPISODE_LAG_S


def advance(state: EpisodeState, point: EpisodePoint) -> EpisodeStep:
    """The tracker after ``point`` (polls in time order)."""
    growing = (
        state.growing_polls + 1
        if point.trx_behind is not None
        and state.last_trx_behind is not None
        and point.trx_behind > state.last_trx_behind
        else 0
    )
    state = replace(state, growing_polls=growing, last_trx_behind=point.trx_behind)
    behind = _behind(point) or growing >= GROWING_POLLS
    opened = False
    if not state.in_episode:
        if not behind:
            return EpisodeStep(state)
        state = replace(state, started_at=point.at, peak_lag_s=None, peak_at=None, segments=())
        opened = True
    if point.lag_s is not None and (state.peak_lag_s is None or point.lag_s > state.peak_lag_s):
        state = replace(state, peak_lag_s=point.lag_s, peak_at=point.at)
    segments, closed = _segments(state.segments, point)
    caught_up = point.verdict is Verdict.CAUGHT_UP and not behind
    since = (state.caught_up_since or point.at) if caught_up else None
    state = replace(state, segments=segments, caught_up_since=since)
    if since is not None and point.at - since >= CAUGHT_UP_HOLD_S:
        ended = tuple(
            ClosedSegment(s.cause, s.started_at, s.last_seen_at, s.finding) for s in segments
        )
        done = replace(state, started_at=None, caught_up_since=None, segments=())
        return EpisodeStep(done, opened, since, (*closed, *ended), ())
    return EpisodeStep(state, opened, None, closed, segments)


def _segments(
    open_: tuple[OpenSegment, ...], point: EpisodePoint
) -> tuple[tuple[OpenSegment, ...], tuple[ClosedSegment, ...]]:
    named = {f.cause: f for f in point.findings}
    kept: list[OpenSegment] = []
    closed: list[ClosedSegment] = []
    for seg in open_:
        if seg.cause in named:
            kept.append(
                replace(seg, last_seen_at=point.at, missed_polls=0, finding=named.pop(seg.cause))
            )
        elif seg.missed_polls + 1 >= SEGMENT_GRACE_POLLS:
            closed.append(ClosedSegment(seg.cause, seg.started_at, seg.last_seen_at, seg.finding))
        else:
            kept.append(replace(seg, missed_polls=seg.missed_polls + 1))
    kept.extend(OpenSegment(c, point.at, point.at, 0, f) for c, f in named.items())
    return tuple(kept), tuple(closed)
