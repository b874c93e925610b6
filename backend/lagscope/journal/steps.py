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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import BigInteger, and_, or_, select, type_coerce
from sqlalchemy.orm import Session

from lagscope.analysis.durability import SETTLE_S, WINDOW_S, DurabilityPrediction
from lagscope.analysis.impact import Impact, Point, Window, impact
from lagscope.analysis.parallel_apply import CapacityPrediction
from lagscope.analysis.steps import StepFrame, group_in_bursts, is_network_step, step_frame
from lagscope.errors import InvalidInput
from lagscope.history.series import RawSeries
from lagscope.history.window import require_window
from lagscope.inventory.instances import get_cluster, instance_in_cluster
from lagscope.models import Annotation, Channel, Cluster, Instance, ParamChange, Sample
from lagscope.models.types import Scaled, to_micros

MAX_STEPS = 500  # a page of the journal; the next page starts at the last step's time
_SPANS_PER_QUERY = 50  # SQLite parses an OR chain as a tree ~1000 deep at most


def param_changes(
    session: Session,
    cluster_id: int,
    start: datetime,
    end: datetime,
    instance_id: int | None = None,
) -> list[tuple[ParamChange, str]]:
    """The cluster's changes with ``first_new_at`` in [start, end), in time order, with the
    instance name."""
    require_window(start, end)
    cluster = get_cluster(session, cluster_id)
    query = (
        select(ParamChange, Instance.name)
        .join(Instance, ParamChange.instance_id == Instance.id)
        .where(
            Instance.cluster_id == cluster.id,
            ParamChange.first_new_at >= start,
            ParamChange.first_new_at < end,
        )
        .order_by(ParamChange.first_new_at, Instance.name, ParamChange.name)
    )
    if instance_id is not None:
        query = query.where(Instance.id == instance_in_cluster(session, cluster, instance_id).id)
    return [(change, name) for change, name in session.execute(query)]


@dataclass(frozen=True, slots=True)
class Event:
    """A change (made in ``(changed_after, at]``) or an annotation (``changed_after == at``)."""

    at: datetime
    changed_after: datetime
    change: tuple[ParamChange, str] | None = None
    annotation: Annotation | None = None


@dataclass(frozen=True, slots=True)
class Step:
    at: datetime
    changed_after: datetime
    changes: tuple[tuple[ParamChange, str], ...]
    annotations: tuple[Annotation, ...]


def _whole_ms(moment: datetime) -> datetime:
    """Down to the millisecond: a step's windows are then named exactly by a client that keeps
    milliseconds (the UI's compare link), and judge the same samples there as here. A sample
    taken in the dropped microseconds after a change is the change's own poll, on the after
    side either way."""
    return moment.replace(microsecond=moment.microsecond - moment.microsecond % 1000)


def group_events(events: Sequence[Event], group_s: float) -> list[Step]:
    """Chain events (in any order) closer than ``group_s`` to the previous one into steps."""
    steps = group_in_bursts(events, lambda e: e.at, group_s)
    return [
        Step(
            at=_whole_ms(max(e.at for e in burst)),
            changed_after=_whole_ms(min(e.changed_after for e in burst)),
            changes=tuple(e.change for e in burst if e.change is not None),
            annotations=tuple(e.annotation for e in burst if e.annotation is not None),
        )
        for burst in steps
    ]


def _events(session: Session, cluster_id: int, lo: datetime, hi: datetime) -> list[Event]:
    changes = session.execute(
        select(ParamChange, Instance.name)
        .join(Instance, ParamChange.instance_id == Instance.id)
        .where(
            Instance.cluster_id == cluster_id,
            ParamChange.first_new_at >= lo,
            ParamChange.first_new_at < hi,
        )
        .order_by(ParamChange.first_new_at, Instance.name, ParamChange.name)
    )
    notes = session.scalars(
        select(Annotation)
        .where(
            Annotation.cluster_id == cluster_id,
            Annotation.starts_at >= lo,
            Annotation.starts_at < hi,
        )
        .order_by(Annotation.starts_at, Annotation.id)
    )
    # min(): a change read by two workers with skewed clocks must not get an inverted window.
    return [
        Event(c.first_new_at, min(c.last_old_at, c.first_new_at), change=(c, name))
        for c, name in changes
    ] + [Event(n.starts_at, n.starts_at, annotation=n) for n in notes]


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


@dataclass(frozen=True, slots=True)
class SampleRow:
    """The columns of a sample the journal and the comparison read; ``us`` = ts in epoch µs."""

    us: int
    lag_s: float | None
    verdict: int
    apply_rate: float | None
    source_rate: float | None
    not_received: int | None
    received_not_applied: int | None


def merge_spans(spans: Sequence[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    merged: list[tuple[datetime, datetime]] = []
    for lo, hi in sorted(s for s in spans if s[0] < s[1]):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def load_samples(
    session: Session,
    channel_id: int,
    spans: Sequence[tuple[datetime, datetime]],
    raw: RawSeries | None = None,
) -> list[SampleRow]:
    """A channel's samples inside the half-open ``spans``, in time order: only the windows a
    caller needs, in as few queries as the OR-chain limit allows (one for a typical journal).
    ``raw``: the raw-series store they are read from instead of the ``samples`` table."""
    merged = merge_spans(spans)
    if raw is not None:
        bounds = [(to_micros(lo), to_micros(hi)) for lo, hi in merged]
        found = raw.rows(channel_id, _ROW_COLUMNS, bounds)
        return [row for us, values in found if (row := _sample_row(us, values)) is not None]
    rows: list[SampleRow] = []
    for i in range(0, len(merged), _SPANS_PER_QUERY):
        chunk = merged[i : i + _SPANS_PER_QUERY]
        # Core, and ts as its stored integer: a day of 1 Hz samples is ~86k rows per channel,
        # and ORM row handling plus µs → datetime → µs cost more than the query itself.
        result = session.connection().execute(
            select(
                type_coerce(Sample.ts, BigInteger()),
                Sample.lag_s,
                Sample.verdict,
                Sample.apply_rate,
                Sample.source_rate,
                Sample.not_received,
                Sample.received_not_applied,
            )
            .where(
                Sample.channel_id == channel_id,
                or_(*(and_(Sample.ts >= lo, Sample.ts < hi) for lo, hi in chunk)),
            )
            .order_by(Sample.ts)
        )
        rows.extend(
            SampleRow(us, lag, verdict, apply, source, missing, queued)
            for us, lag, verdict, apply, source, missing, queued in result
        )
    return rows


_ROW_COLUMNS = (
    "lag_s",
    "verdict",
    "apply_rate",
    "source_rate",
    "not_received",
    "received_not_applied",
)


def _as_stored(column: str) -> Callable[[float], float | int]:
    """A value read from the raw-series store (a float) as its ``samples`` column gives it back."""
    kind = Sample.__table__.c[column].type
    if isinstance(kind, Scaled):
        scale = kind.scale
        return lambda value: round(value * scale) / scale
    return lambda value: round(value)


_STORED = {column: _as_stored(column) for column in _ROW_COLUMNS}


def _sample_row(us: int, values: dict[str, float]) -> SampleRow | None:
    v = {c: _STORED[c](x) for c, x in values.items() if c in _STORED}
    verdict = v.get("verdict")
    if verdict is None:
        return None  # every poll's line has one; a line without is not a poll the table has
    return SampleRow(
        us,
        v.get("lag_s"),
        int(verdict),
        v.get("apply_rate"),
        v.get("source_rate"),
        _int_or_none(v.get("not_received")),
        _int_or_none(v.get("received_not_applied")),
    )


def _int_or_none(value: float | None) -> int | None:
    return None if value is None else int(value)


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


def sample_backlog(row: SampleRow) -> int | None:
    if row.not_received is None or row.received_not_applied is None:
        return None
    return row.not_received + row.received_not_applied


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
    steps = group_events(_events(session, cluster.id, start - reach, end + reach), settings.group_s)
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
