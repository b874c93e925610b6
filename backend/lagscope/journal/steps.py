"""The tuning journal: param changes and annotations as steps, each judged per replica channel.

A *step* is a burst of events: param changes (any instance) and annotations whose times lie
within ``group_s`` of the previous event (a chain, so "one burst" does not depend on where a
query starts). Grouping is deliberate: an operator typing three ``SET GLOBAL`` (or annotating
what they just did) makes one step, and events closer than the settle time could never be
judged apart anyway, since the first one's ``after`` window would be empty.

Step time ``at``: an annotation's ``starts_at``; a param change's ``first_new_at`` — the first
moment the new value is *known* to be in effect (the change happened somewhere in
``(last_old_at, first_new_at]``, one parameter-read interval, wider when polls failed). Timing the
step there means the ``after`` window, which starts ``settle_s`` later, never holds a sample taken
under the old value. The samples of ``[changed_after, at)`` (``changed_after`` = the earliest
``last_old_at`` of the step) are dropped from both windows: nobody knows which side they belong
to. A change whose window is wider than ``width_s`` thus has an empty ``before`` window and is
reported as ``insufficient_data`` — we cannot say when it happened.

Windows (docs/lag.md, "How the journal judges") come from :func:`lagscope.analysis.impact.impact`:
``before`` starts no earlier than the previous step's ``at + settle_s``, ``after`` ends at the next
step's ``changed_after``. Neighbours outside the queried range count, so the events are read over
the range widened by ``width_s + settle_s + group_s`` (a burst longer than that widening, straddling
its edge, may be split there). Every replica channel of the cluster gets each step's impact,
with ``in_scope`` saying whether the step could touch it: a channel the step did not touch is the
control group that tells a tuning effect from a change of load.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from lagscope.analysis.durability import SETTLE_S, WINDOW_S, DurabilityPrediction
from lagscope.analysis.impact import Impact, Point, Window, impact
from lagscope.analysis.parallel_apply import CapacityPrediction
from lagscope.analysis.steps import StepFrame, is_network_step, step_frame
from lagscope.errors import InvalidInput
from lagscope.history.series import RawSeries
from lagscope.history.window import require_window
from lagscope.inventory.instances import get_cluster
from lagscope.journal.events import Event as Event
from lagscope.journal.events import Step as Step
from lagscope.journal.events import group_events as group_events
from lagscope.journal.events import param_changes as param_changes
from lagscope.journal.events import read_events
from lagscope.journal.samples import SampleRow as SampleRow
from lagscope.journal.samples import load_samples as load_samples
from lagscope.journal.samples import merge_spans as merge_spans
from lagscope.journal.samples import sample_backlog as sample_backlog
from lagscope.models import Channel, Cluster, Instance
from lagscope.models.types import to_micros

MAX_STEPS = 500  # a page of the journal; the next page starts at the last step's time


@dataclass(frozen=True, slots=True)
class JournalSettings:
    # The relaxed-flush side panel reads the same defaults (its "before" window of a step now).
    width_s: float = WINDOW_S
    settle_s: float = SETTLE_S
    min_samples: int = 10
    group_s: float = 10.0

    def check(self) -> None:
        if not 1 <= self.width_s <= 86_400:
            raise InvalidInput("width_s: must be between 1 and 86400")
        if not 0 <= self.settle_s <= 3_600:
            raise InvalidInput("settle_s: must be between 0 and 3600")
        if not 1 <= self.min_samples <= 100_000:
            raise InvalidInput("min_samples: must be between 1 and 100000")
        if not 0 <= self.group_s <= 600:
            raise InvalidInput("group_s: must be between 0 and 600")


def replica_channels(
    session: Session, cluster_id: int, start: datetime, end: datetime
) -> list[tuple[Channel, Instance]]:
    """Channels of the cluster that existed at some point of [start, end), by instance name."""
    return list(
        session.execute(
            select(Channel, Instance)
            .join(Instance, Channel.instance_id == Instance.id)
            .where(
                Instance.cluster_id == cluster_id,
                Channel.first_seen_at < end,
                or_(Channel.gone_at.is_(None), Channel.gone_at >= start),
            )
            .order_by(Instance.name, Channel.name)
        )
    )


@dataclass(frozen=True, slots=True)
class ChannelImpact:
    channel: Channel
    instance: Instance
    in_scope: bool
    impact: Impact
    # A step that changed this replica's applier workers: predicted vs measured capacity.
    prediction: CapacityPrediction | None = None
    # A step that relaxed this replica's flush settings: predicted vs measured capacity.
    durability: DurabilityPrediction | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    step: Step
    before: tuple[datetime, datetime]
    after: tuple[datetime, datetime]
    impacts: list[ChannelImpact] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Journal:
    cluster: Cluster
    start: datetime
    end: datetime
    settings: JournalSettings
    channels: list[tuple[Channel, Instance]]
    entries: list[Entry]
    truncated: bool


def _seconds(moment: datetime, origin: datetime) -> float:
    return (to_micros(moment) - to_micros(origin)) / 1e6


def _moment(seconds: float, origin: datetime) -> datetime:
    return origin + timedelta(microseconds=round(seconds * 1e6))


def _frame(steps: Sequence[Step], i: int, settings: JournalSettings) -> StepFrame:
    step = steps[i]
    return step_frame(
        _seconds(steps[i - 1].at, step.at) if i > 0 else None,
        _seconds(steps[i + 1].changed_after, step.at) if i + 1 < len(steps) else None,
        _seconds(step.changed_after, step.at),
        settings.width_s,
        settings.settle_s,
    )


def _in_scope(step: Step, channel: Channel, instance: Instance, sources: set[int]) -> bool:
    """Could the step touch the channel? A source's change or a cluster-wide note touches all."""
    touched = {c.instance_id for c, _ in step.changes}
    for note in step.annotations:
        if note.channel_id is not None:
            if note.channel_id == channel.id:
                return True
        elif note.instance_id is None:
            return True
        else:
            touched.add(note.instance_id)
    return bool(touched & (sources | {instance.id}))


def _points(
    rows: Sequence[SampleRow], keys: Sequence[int], lo: int, hi: int, origin: datetime, drop: int
) -> list[Point]:
    """Points of rows (``keys``: their µs) in [lo, hi) µs, timed relative to ``origin``,
    without [drop, origin)."""
    zero = to_micros(origin)
    chosen = rows[bisect.bisect_left(keys, lo) : bisect.bisect_left(keys, hi)]
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
        for r in chosen
        if not drop <= r.us < zero
    ]


def journal(
    session: Session,
    cluster_id: int,
    start: datetime,
    end: datetime,
    settings: JournalSettings | None = None,
    raw: RawSeries | None = None,
) -> Journal:
    """The steps with ``at`` in [start, end), in time order, each with its impact per channel
    (the samples read from ``raw`` when the raw series live there)."""
    settings = settings or JournalSettings()
    settings.check()
    require_window(start, end)
    cluster = get_cluster(session, cluster_id)
    reach = timedelta(seconds=settings.width_s + settings.settle_s + settings.group_s)
    steps = group_events(
        read_events(session, cluster.id, start - reach, end + reach), settings.group_s
    )
    inside = [i for i, s in enumerate(steps) if start <= s.at < end]
    truncated = len(inside) > MAX_STEPS
    inside = inside[:MAX_STEPS]
    frames = {i: _frame(steps, i, settings) for i in inside}
    spans = [
        (_moment(f.span[0], steps[i].at), _moment(f.span[1], steps[i].at))
        for i, f in frames.items()
    ]
    channels = replica_channels(session, cluster.id, start - reach, end + reach)
    sources = {i.id for i in cluster.instances if i.role == "source"}
    entries = [_entry(steps[i], frames[i]) for i in inside]
    for channel, instance in channels:
        rows = load_samples(session, channel.id, spans, raw) if spans else []
        keys = [r.us for r in rows]
        for i, entry in zip(inside, entries, strict=True):
            entry.impacts.append(
                _channel_impact(
                    steps[i], frames[i], rows, keys, channel, instance, sources, settings
                )
            )
    return Journal(cluster, start, end, settings, channels, entries, truncated)


def _entry(step: Step, frame: StepFrame) -> Entry:
    def span(window: Window) -> tuple[datetime, datetime]:
        return _moment(window.start, step.at), _moment(window.end, step.at)

    return Entry(step, span(frame.before), span(frame.after))


def _channel_impact(
    step: Step,
    frame: StepFrame,
    rows: Sequence[SampleRow],
    keys: Sequence[int],
    channel: Channel,
    instance: Instance,
    sources: set[int],
    settings: JournalSettings,
) -> ChannelImpact:
    zero = to_micros(step.at)
    lo_s, hi_s = frame.span
    points = _points(
        rows,
        keys,
        zero + round(lo_s * 1e6),
        zero + round(hi_s * 1e6),
        step.at,
        zero + round(frame.changed_after_s * 1e6),
    )
    result = impact(
        points,
        0.0,
        frame.previous_s,
        frame.next_s,
        settings.width_s,
        settings.settle_s,
        settings.min_samples,
        network=is_network_step(
            [change.name for change, _ in step.changes],
            [tag for note in step.annotations for tag in (note.tags or [])],
        ),
    )
    return ChannelImpact(channel, instance, _in_scope(step, channel, instance, sources), result)
