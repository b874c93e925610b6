"""Series for charts: one metric of some channels or instances over a range, in time buckets.

Read the coarsest table that still gives the requested number of points, and return
at most ``points`` buckets per series with min, avg and max, so that a one-poll spike survives as
its bucket's max however wide the bucket. The database does the bucketing (GROUP BY the integer
quotient of the µs time, with MIN/SUM/MAX/COUNT); Python only merges and scales what comes back.

Tables: ``samples`` and ``instance_samples`` at poll resolution ("raw"), and the rollups
``samples_1m`` / ``samples_1h``, whose row ``bucket`` covers [bucket, bucket + resolution).
Buckets are whole multiples of the table's resolution, so no rollup row straddles two buckets.
The rollup job writes complete buckets only and runs behind the clock, so the newest part of a
range that the chosen rollup has not reached yet (the "tail") is read from the next finer table,
bucketed alike, and merged into the same buckets: a 30-day chart still ends at the last poll.

Raw rows may come from elsewhere: past one box they are also written to a raw-series store
(VictoriaMetrics, ``LAGSCOPE_SERIES_URL``), which answers the raw buckets through
:class:`RawSeries` with the same figures as the SQL (docs/operations.md, "Which store").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal, Protocol

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from lagscope.analysis.buckets import (
    RESOLUTION_US,
    BucketPlan,
    Resolution,
    choose_resolution,
    plan_buckets,
)
from lagscope.config import Retention
from lagscope.errors import InvalidInput, NotFound
from lagscope.history.series_catalog import METRICS as METRICS
from lagscope.history.series_catalog import Metric as Metric
from lagscope.history.series_points import Bucket as Bucket
from lagscope.history.series_points import Point as Point
from lagscope.history.series_points import _merge_buckets as _merge_buckets
from lagscope.history.series_points import merge_points as merge_points
from lagscope.history.series_sql import _IntDiv as _IntDiv
from lagscope.history.series_sql import _Real as _Real
from lagscope.history.series_sql import _scale as _scale
from lagscope.history.series_sql import _sql_buckets as _sql_buckets
from lagscope.models import Channel, Instance
from lagscope.models.types import to_micros

MAX_POINTS = 2000
MAX_SERIES = 100  # 100 series × 2000 points is already a 20 MB answer
# Several metrics in one request (the explorer's strips, its server panels): at most as many
# points in all as one metric's largest answer, so one request costs no more than before.
MAX_ANSWER_POINTS = MAX_SERIES * MAX_POINTS
MAX_RANGE = timedelta(days=731)  # two years, one of them a leap year
_DAY_US = 86_400_000_000


@dataclass(frozen=True, slots=True)
class Series:
    channel_id: int | None
    instance_id: int
    metric: str
    resolution: Resolution
    bucket_ms: int
    points: list[Point]
    note: str | None


class RawSeries(Protocol):
    """Where raw (per-poll) series are read from when it is not the store's ``samples`` tables:
    the seam a raw-series store past one box plugs into (series_store/victoria.py), for the
    explorer (``buckets``) and the journal and comparisons (``rows``).

    ``buckets``: the buckets of ``plan`` over the rows in [lo_us, plan.hi_us) of ``metric``
    for ``keys`` (channel ids, or instance ids for a per-instance metric), per key in time
    order, with the figures :func:`_sql_buckets` gives for the same rows; ``scale`` is the one
    the store's column rounds to (a value is kept as ``round(value * scale)``)."""

    def buckets(
        self,
        metric: str,
        per: Literal["channel", "instance"],
        scale: int,
        plan: BucketPlan,
        keys: Sequence[int],
        lo_us: int,
    ) -> Iterable[Bucket]: ...

    def rows(
        self, channel_id: int, columns: Sequence[str], spans_us: Sequence[tuple[int, int]]
    ) -> list[tuple[int, dict[str, float]]]:
        """One channel's polls inside the half-open ``spans_us`` (epoch µs, disjoint, in
        order), in time order: (the poll's time in µs, as its ``samples`` row has it; {column:
        value} for those of ``columns`` the poll had a value of). What the journal's windows
        read (journal/samples.py)."""
        ...


def collect(
    session: Session,
    metric: Metric,
    plan: BucketPlan,
    keys: Sequence[int],
    raw: RawSeries | None = None,
) -> dict[int, list[Point]]:
    """Buckets per key in time order: the planned table, then finer ones for the tail it lacks.

    A tail starts after the newest row of the coarser table, so its buckets come after that
    table's, except the one bucket they may share, which is merged. Raw rows come from ``raw``
    when a raw-series store is configured, else from the store's ``samples`` tables.
    """
    by_key: dict[int, list[Point]] = {}
    chosen = RESOLUTION_US[plan.resolution]
    sources = [s for s in metric.sources if RESOLUTION_US[s.resolution] <= chosen]
    lo = plan.lo_us
    for source in reversed(sources):
        if source.resolution == "raw" and raw is not None:
            buckets = raw.buckets(metric.name, metric.per, _scale(source.avg), plan, keys, lo)
        else:
            buckets = _sql_buckets(session, source, plan, keys, lo)
        newest = _merge_buckets(buckets, by_key)
        if newest is not None:
            lo = max(lo, newest + RESOLUTION_US[source.resolution])
        if lo >= plan.hi_us:
            break
    return by_key


def series_keys(
    session: Session, metric: Metric, channel_ids: Sequence[int], instance_ids: Sequence[int]
) -> list[tuple[int | None, int]]:
    """(channel_id, instance_id) per series; an instance given for a channel metric stands for
    all of its channels. Unknown ids are a NotFound naming them."""
    instances = set(session.scalars(select(Instance.id).where(Instance.id.in_(instance_ids))))
    if missing := [i for i in instance_ids if i not in instances]:
        raise NotFound(f"instance_id: no instance {', '.join(map(str, missing))}")
    if metric.per == "instance":
        if channel_ids:
            raise InvalidInput(f"channel_id: {metric.name} is per instance; give instance_id")
        return [(None, i) for i in dict.fromkeys(instance_ids)]
    rows = session.execute(
        select(Channel.id, Channel.instance_id).where(
            Channel.id.in_(channel_ids) | Channel.instance_id.in_(instance_ids)
        )
    ).all()
    owner = {cid: iid for cid, iid in rows}
    if missing := [c for c in channel_ids if c not in owner]:
        raise NotFound(f"channel_id: no channel {', '.join(map(str, missing))}")
    expanded = sorted(cid for cid, iid in rows if iid in instances)
    return [(c, owner[c]) for c in dict.fromkeys([*channel_ids, *expanded])]


def _oldest_kept(retention: Retention | None, now_us: int) -> dict[Resolution, int]:
    if retention is None:
        return {}
    days: dict[Resolution, float] = {
        "raw": retention.raw_days,
        "1m": retention.minute_days,
        "1h": retention.hour_days,
    }
    return {res: now_us - int(d * _DAY_US) for res, d in days.items()}


def query_series(
    session: Session,
    metric_name: str,
    start: datetime,
    end: datetime,
    *,
    channel_ids: Sequence[int] = (),
    instance_ids: Sequence[int] = (),
    points: int = 500,
    retention: Retention | None = None,
    now: datetime | None = None,
    raw: RawSeries | None = None,
) -> list[Series]:
    """One series per channel (or instance) of ``metric_name`` over [start, end)."""
    metric = METRICS.get(metric_name)
    if metric is None:
        raise InvalidInput(f"metric: unknown metric {metric_name!r}")
    if not 1 <= points <= MAX_POINTS:
        raise InvalidInput(f"points: must be between 1 and {MAX_POINTS}")
    if not start < end:
        raise InvalidInput("end: must be after start")
    if end - start > MAX_RANGE:
        raise InvalidInput("end: the range may span two years at most")
    if not channel_ids and not instance_ids:
        raise InvalidInput("channel_id: give channel_id or instance_id")
    keys = series_keys(session, metric, channel_ids, instance_ids)
    if len(keys) > MAX_SERIES:
        raise InvalidInput(f"channel_id: at most {MAX_SERIES} series per request")
    if not keys:  # only instances without channels
        return []
    if session.get_bind().dialect.name == "postgresql":
        # The per-bucket lookups of the newest value lift the estimated cost over PostgreSQL's
        # jit_above_cost, and compiling the plan then takes ~200 ms: several times the query.
        session.execute(text("SET LOCAL jit = off"))
    start_us, end_us = to_micros(start), to_micros(end)
    if raw is not None:
        # The raw-series store keeps milliseconds: a range cut inside one would count a
        # sample there differently from the SQL (the API's ranges are whole milliseconds).
        start_us, end_us = start_us // 1000 * 1000, max(end_us // 1000, start_us // 1000 + 1) * 1000
    oldest = _oldest_kept(retention, to_micros(now or datetime.now(UTC)))
    available = [s.resolution for s in metric.sources]
    resolution = choose_resolution(start_us, end_us, points, available, oldest)
    plan = plan_buckets(start_us, end_us, points, resolution)
    key_ids = [iid if cid is None else cid for cid, iid in keys]
    by_key = collect(session, metric, plan, key_ids, raw)
    # A raw-only metric's note always holds; a partial rollup's only when rolled-up rows are read.
    note = metric.note if len(metric.sources) == 1 or resolution != "raw" else None
    return [
        Series(cid, iid, metric.name, resolution, plan.width_us // 1000,
               by_key.get(iid if cid is None else cid, []), note)
        for cid, iid in keys
    ]  # fmt: skip


def query_metrics(
    session: Session,
    metric_names: Sequence[str],
    start: datetime,
    end: datetime,
    *,
    channel_ids: Sequence[int] = (),
    instance_ids: Sequence[int] = (),
    points: int = 500,
    retention: Retention | None = None,
    now: datetime | None = None,
    raw: RawSeries | None = None,
) -> list[Series]:
    """Several metrics of the same channels or instances over [start, end): each metric's
    series in the order the metrics were asked (a repeated one once), as :func:`query_series`
    gives them. At most :data:`MAX_ANSWER_POINTS` points in all, so a request asking for many
    metrics is refused as soon as its series outgrow that, not after reading them all."""
    if not metric_names:
        raise InvalidInput("metric: give at least one metric")
    found: list[Series] = []
    for name in dict.fromkeys(metric_names):
        found += query_series(
            session, name, start, end, channel_ids=channel_ids, instance_ids=instance_ids,
            points=points, retention=retention, now=now, raw=raw,
        )  # fmt: skip
        if len(found) * points > MAX_ANSWER_POINTS:
            raise InvalidInput(
                f"metric: at most {MAX_ANSWER_POINTS} points per request (series × points)"
            )
    return found
