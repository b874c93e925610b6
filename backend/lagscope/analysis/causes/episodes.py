"""Lag episodes and their cause timeline (docs/causes.md, "Lag episodes"), one poll at a time.

A channel is in an episode from the poll its lag reaches ``EPISODE_LAG_S`` (a delayed replica's
lag minus its designed delay), or its backlog grew for ``GROWING_POLLS`` polls in a row, or
replication stopped / broke / stopped answering — until it has been caught up for
``caught_up_hold_s`` (30 s by default). The episode's end is the poll it caught up, known only
``caught_up_hold_s`` later: a lag that comes back inside the hold continues the same episode.

Inside, each cause is a segment, with hysteresis so one odd poll neither splits nor invents one:

- a cause opens a segment at once when its finding is confident (``OPEN_AT_ONCE_CONFIDENCE``) or
  is an interruption (stopped, broken, unreachable); a weaker one must be named on two polls in a
  row, and its segment then starts at the first;
- a segment closes when ``SEGMENT_GRACE_POLLS`` polls in a row have not named it, and ends at
  the first of those polls (it held until then).

The main cause of an episode is decided by tier, then by how long it held (closed and open
segments summed), then by which came first:

1. stopped, broken, unreachable: while replication does not run, the backlog grows whatever else
   is going on, and the catching up that follows works off what the interruption left;
2. the causes that hold a replica back (burst, network, durability, serial apply, …);
3. delayed by design and clock skew: they shape the lag figure, they do not slow the applier;
4. unexplained, only when nothing was named;
5. catching up, never over any of them: it is the state the backlog drains in, the backlog was
   made by what came before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from lagscope.analysis.causes.model import Cause, Finding
from lagscope.analysis.codes import Verdict

EPISODE_LAG_S = 5.0
GROWING_POLLS = 3
CAUGHT_UP_HOLD_S = 30.0
SEGMENT_GRACE_POLLS = 2
# A finding at least this sure opens its segment on the first poll; below, it needs two polls.
OPEN_AT_ONCE_CONFIDENCE = 0.7

INTERRUPTIONS = frozenset({Cause.STOPPED, Cause.BROKEN, Cause.UNREACHABLE})
_ALWAYS_EPISODE = frozenset({Verdict.STOPPED, Verdict.BROKEN, Verdict.UNREACHABLE})
_SHAPES_THE_FIGURE = frozenset({Cause.DELAYED_BY_DESIGN, Cause.CLOCK_SKEW})


@dataclass(frozen=True, slots=True)
class EpisodePoint:
    """One poll of one channel, as the episode tracker needs it. ``delay_s``: the channel's
    designed delay (SQL_Delay), not counted as being behind."""

    at: float  # epoch s
    verdict: Verdict
    lag_s: float | None
    trx_behind: int | None
    findings: tuple[Finding, ...] = ()
    delay_s: float = 0.0


@dataclass(frozen=True, slots=True)
class OpenSegment:
    """A cause being seen inside the current episode; ``finding`` is its latest one.
    ``missed_since``: the first poll of the current run of polls that did not name it."""

    cause: Cause
    started_at: float
    last_seen_at: float
    missed_polls: int
    finding: Finding
    missed_since: float | None = None


@dataclass(frozen=True, slots=True)
class EpisodeState:
    """What the tracker remembers between polls (stored on the channel as JSON).

    ``pending``: weak findings seen once, waiting for a second poll. ``held``: seconds each
    cause held in segments already closed. ``saved_at``: when the store last wrote the episode's
    rows (peak, evidence): the tracker keeps it, the store sets it."""

    started_at: float | None = None  # None: not in an episode
    peak_lag_s: float | None = None
    peak_at: float | None = None
    caught_up_since: float | None = None
    growing_polls: int = 0
    last_trx_behind: int | None = None
    segments: tuple[OpenSegment, ...] = ()
    pending: tuple[OpenSegment, ...] = ()
    held: tuple[tuple[Cause, float], ...] = ()
    main_cause: Cause | None = None
    saved_at: float | None = None

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
    started: tuple[OpenSegment, ...] = ()  # segments that opened at this poll
    # The ended episode's figures (state is reset when it ends); None while it goes on.
    ended: EpisodeState | None = None


def advance(
    state: EpisodeState, point: EpisodePoint, caught_up_hold_s: float = CAUGHT_UP_HOLD_S
) -> EpisodeStep:
    """The tracker after ``point`` (polls in time order)."""
    growing = _growing(state, point)
    state = replace(state, growing_polls=growing, last_trx_behind=point.trx_behind)
    behind = _behind(point) or growing >= GROWING_POLLS
    opened = False
    if not state.in_episode:
        if not behind:
            return EpisodeStep(state)
        state = EpisodeState(
            started_at=point.at,
            growing_polls=growing,
            last_trx_behind=point.trx_behind,
            saved_at=state.saved_at,
        )
        opened = True
    if point.lag_s is not None and (state.peak_lag_s is None or point.lag_s > state.peak_lag_s):
        state = replace(state, peak_lag_s=point.lag_s, peak_at=point.at)
    segments, pending, started, closed = _segments(state, point)
    held = _add_held(state.held, closed)
    caught_up = not behind and _at_design(point)
    since = (state.caught_up_since or point.at) if caught_up else None
    state = replace(state, segments=segments, pending=pending, held=held, caught_up_since=since)
    state = replace(state, main_cause=main_cause(state, point.at))
    if since is not None and point.at - since >= caught_up_hold_s:
        ending = tuple(_close_at_end(s, since, point.at) for s in segments)
        ended = replace(state, held=_add_held(held, ending), segments=(), pending=())
        ended = replace(ended, main_cause=main_cause(ended, since))
        done = EpisodeState(
            growing_polls=growing, last_trx_behind=point.trx_behind, saved_at=state.saved_at
        )
        return EpisodeStep(done, opened, since, (*closed, *ending), (), started, ended)
    return EpisodeStep(state, opened, None, closed, segments, started)


def main_cause(state: EpisodeState, now: float) -> Cause | None:
    """The episode's main cause so far (module docstring: tier, then time held, then first)."""
    held: dict[Cause, float] = dict(state.held)
    first: dict[Cause, float] = {}
    for seg in state.segments:
        end = seg.missed_since if seg.missed_since is not None else now
        held[seg.cause] = held.get(seg.cause, 0.0) + max(0.0, end - seg.started_at)
        first[seg.cause] = seg.started_at
    if not held:
        return None
    return min(held, key=lambda c: (_tier(c), -held[c], first.get(c, 0.0), int(c)))


def _tier(cause: Cause) -> int:
    if cause in INTERRUPTIONS:
        return 0
    if cause is Cause.CATCHING_UP:
        return 4
    if cause is Cause.UNEXPLAINED:
        return 3
    return 2 if cause in _SHAPES_THE_FIGURE else 1


def _growing(state: EpisodeState, point: EpisodePoint) -> int:
    """Polls in a row the backlog grew. A caught-up poll's backlog is noise, not growth."""
    if (
        point.verdict is Verdict.CAUGHT_UP
        or point.trx_behind is None
        or state.last_trx_behind is None
        or point.trx_behind <= state.last_trx_behind
    ):
        return 0
    return state.growing_polls + 1


def _effective_lag(point: EpisodePoint) -> float | None:
    if point.lag_s is None:
        return None
    return max(0.0, point.lag_s - max(0.0, point.delay_s))


def _behind(point: EpisodePoint) -> bool:
    if point.verdict in _ALWAYS_EPISODE:
        return True
    lag = _effective_lag(point)
    return lag is not None and lag >= EPISODE_LAG_S


def _at_design(point: EpisodePoint) -> bool:
    """Caught up, or a delayed replica holding just its designed delay."""
    return point.verdict in (Verdict.CAUGHT_UP, Verdict.DELAYED_BY_DESIGN)


def _opens_at_once(finding: Finding) -> bool:
    return finding.cause in INTERRUPTIONS or finding.confidence >= OPEN_AT_ONCE_CONFIDENCE


def _segments(
    state: EpisodeState, point: EpisodePoint
) -> tuple[
    tuple[OpenSegment, ...],
    tuple[OpenSegment, ...],
    tuple[OpenSegment, ...],
    tuple[ClosedSegment, ...],
]:
    """(open segments, pending, opened at this poll, closed at this poll)."""
    named: dict[Cause, Finding] = {}
    for f in point.findings:
        named.setdefault(f.cause, f)  # strongest first: the first of a cause is its best
    kept: list[OpenSegment] = []
    closed: list[ClosedSegment] = []
    for seg in state.segments:
        if seg.cause in named:
            found = named.pop(seg.cause)
            kept.append(
                replace(
                    seg, last_seen_at=point.at, missed_polls=0, missed_since=None, finding=found
                )
            )
        elif seg.missed_polls + 1 >= SEGMENT_GRACE_POLLS:
            end = seg.missed_since if seg.missed_since is not None else point.at
            closed.append(ClosedSegment(seg.cause, seg.started_at, end, seg.finding))
        else:
            missed_since = seg.missed_since if seg.missed_since is not None else point.at
            kept.append(replace(seg, missed_polls=seg.missed_polls + 1, missed_since=missed_since))
    waiting = {p.cause: p for p in state.pending}
    started: list[OpenSegment] = []
    pending: list[OpenSegment] = []
    for cause, found in named.items():
        before = waiting.get(cause)
        if before is not None:
            started.append(OpenSegment(cause, before.started_at, point.at, 0, found))
        elif _opens_at_once(found):
            started.append(OpenSegment(cause, point.at, point.at, 0, found))
        else:
            pending.append(OpenSegment(cause, point.at, point.at, 0, found))
    return (*kept, *started), tuple(pending), tuple(started), tuple(closed)


def _close_at_end(seg: OpenSegment, episode_end: float, now: float) -> ClosedSegment:
    """A segment still open when the episode ends: it held until it was last missed, and never
    past the episode's end (nor before its own start)."""
    end = seg.missed_since if seg.missed_since is not None else now
    return ClosedSegment(
        seg.cause, seg.started_at, max(seg.started_at, min(end, episode_end)), seg.finding
    )


def _add_held(
    held: tuple[tuple[Cause, float], ...], closed: tuple[ClosedSegment, ...]
) -> tuple[tuple[Cause, float], ...]:
    if not closed:
        return held
    total = dict(held)
    for seg in closed:
        total[seg.cause] = total.get(seg.cause, 0.0) + max(0.0, seg.ended_at - seg.started_at)
    return tuple(sorted(total.items()))
