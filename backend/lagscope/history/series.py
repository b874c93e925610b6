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

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol, TypedDict

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Float,
    literal,
    null,
    select,
    text,
    type_coerce,
)
from sqlalchemy import func as sql
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import InstrumentedAttribute, Session, aliased
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from lagscope.analysis.buckets import (
    RESOLUTION_US,
    BucketPlan,
    Resolution,
    choose_resolution,
    plan_buckets,
)
from lagscope.config import Retention
from lagscope.errors import InvalidInput, NotFound
from lagscope.metrics_catalog import SERIES, StoredMetric
from lagscope.models import (
    Channel,
    Instance,
    InstanceSample,
    Sample,
    SampleRollup1h,
    SampleRollup1m,
)
from lagscope.models.types import Scaled, to_micros

MAX_POINTS = 2000
MAX_SERIES = 100  # 100 series × 2000 points is already a 20 MB answer
# Several metrics in one request (the explorer's strips, its server panels): at most as many
# points in all as one metric's largest answer, so one request costs no more than before.
MAX_ANSWER_POINTS = MAX_SERIES * MAX_POINTS
MAX_RANGE = timedelta(days=731)  # two years, one of them a leap year
_DAY_US = 86_400_000_000

Column = InstrumentedAttribute[Any]


@dataclass(frozen=True, slots=True)
class Source:
    """Where one metric is kept at one resolution: None for a statistic the table lacks."""

    resolution: Resolution
    key: Column  # channel_id or instance_id
    time: Column
    min: Column | None
    avg: Column
    max: Column | None
    last: Column | None
    weight: Column | None  # rollups: how many samples the row summarises


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    per: Literal["channel", "instance"]
    sources: tuple[Source, ...]  # finest first
    note: str | None = None


def _raw(name: str, model: type[Sample] | type[InstanceSample], key: Column) -> Source:
    column = getattr(model, name)
    return Source("raw", key, model.ts, column, column, column, column, None)


def _rolled(prefix: str, has: str) -> tuple[Source, ...]:
    """The 1m and 1h sources of a rolled-up metric; ``has``: which of min/max/last it keeps."""
    rollups: tuple[tuple[Resolution, type[SampleRollup1m] | type[SampleRollup1h]], ...] = (
        ("1m", SampleRollup1m),
        ("1h", SampleRollup1h),
    )
    sources = []
    for res, model in rollups:
        stats: dict[str, Column | None] = {
            name: getattr(model, f"{prefix}_{name}") if name in has else None
            for name in ("min", "max", "last")
        }
        avg = getattr(model, f"{prefix}_avg")
        sources.append(
            Source(res, model.channel_id, model.bucket, stats["min"], avg, stats["max"],
                   stats["last"], model.samples)
        )  # fmt: skip
    return tuple(sources)


def _channel(name: str, rollup: str | None = None, has: str = "min avg max last") -> Metric:
    raw = _raw(name, Sample, Sample.channel_id)
    if rollup is None:
        note = "kept at poll resolution only (no rollups): points only within raw retention"
        return Metric(name, "channel", (raw,), note)
    missing = "/".join(s for s in ("min", "max", "last") if s not in has)
    partial = f"rollups keep no {missing}: null in rolled-up buckets" if missing else None
    return Metric(name, "channel", (raw, *_rolled(rollup, has)), partial)


def _instance(name: str) -> Metric:
    note = "instance metrics are kept at poll resolution only: points only within raw retention"
    return Metric(name, "instance", (_raw(name, InstanceSample, InstanceSample.instance_id),), note)


def _metric(stored: StoredMetric) -> Metric:
    if stored.per == "instance":
        return _instance(stored.name)
    return _channel(stored.name, stored.rollup, stored.rollup_stats)


_METRICS = tuple(_metric(m) for m in SERIES)
METRICS: dict[str, Metric] = {m.name: m for m in _METRICS}


# --- SQL -----------------------------------------------------------------------------------


class _IntDiv(FunctionElement[int]):
    """Integer quotient of two non-negative integers, the same on every backend."""

    type = BigInteger()
    name = "int_div"
    inherit_cache = True


@compiles(_IntDiv)
def _int_div(element: _IntDiv, compiler: SQLCompiler, **kw: Any) -> str:
    # SQLite and PostgreSQL divide integers by integers as integers.
    a, b = element.clauses
    return f"({compiler.process(a, **kw)}) / ({compiler.process(b, **kw)})"


@compiles(_IntDiv, "mysql", "mariadb")
def _int_div_mysql(element: _IntDiv, compiler: SQLCompiler, **kw: Any) -> str:
    # MySQL's "/" is decimal division rounded to 4 places: FLOOR(599999999/600000000) is 1.
    a, b = element.clauses
    return f"({compiler.process(a, **kw)}) DIV ({compiler.process(b, **kw)})"


class _Real(FunctionElement[float]):
    """An integer as a double, so a sum of products cannot overflow SQLite's 64-bit integers."""

    type = Float()
    name = "as_real"
    inherit_cache = True


@compiles(_Real)
def _real(element: _Real, compiler: SQLCompiler, **kw: Any) -> str:
    return f"CAST({compiler.process(element.clauses, **kw)} AS DOUBLE PRECISION)"


@compiles(_Real, "mysql", "mariadb")
def _real_mysql(element: _Real, compiler: SQLCompiler, **kw: Any) -> str:
    # MySQL < 8.0.17 and MariaDB cannot CAST to a floating type; a double literal converts.
    return f"({compiler.process(element.clauses, **kw)} + 0e0)"


def _int(column: Column) -> ColumnElement[int]:
    # The stored integers, without the Python-side conversion of EpochMicros / Scaled.
    return type_coerce(column, BigInteger)


def _inline(value: int) -> ColumnElement[int]:
    # Rendered as a literal: GROUP BY must repeat the SELECT's expression text exactly (PostgreSQL).
    return literal(value, BigInteger, literal_execute=True)


def _scale(column: Column | None) -> int:
    kind = column.expression.type if column is not None else None
    return kind.scale if isinstance(kind, Scaled) else 1


class Point(TypedDict):
    """One bucket as the API gives it: a plain dict of numbers, which the garbage collector
    does not track. Thousands of tracked objects per answer (rows, named tuples) survived into
    its oldest generation and set off a full collection of the whole heap every third 30-day
    query: 45–65 ms each on this box, the whole gap between p50 and p95."""

    t: int  # the bucket's start, epoch milliseconds
    min: float | None
    avg: float | None
    max: float | None
    last: float | None  # the newest value in the bucket
    n: int  # samples summarised (for rollups, those of rows where the metric was known)


@dataclass(frozen=True, slots=True)
class Series:
    channel_id: int | None
    instance_id: int
    metric: str
    resolution: Resolution
    bucket_ms: int
    points: list[Point]
    note: str | None


# (key, bucket, the newest row's time in µs): one bucket of one channel's or instance's series.
Bucket = tuple[int, Point, int]


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
        read (journal/steps.py)."""
        ...


def merge_points(a: Point, b: Point) -> Point:
    """One bucket read partly from a table (``a``) and partly from a finer one's newer tail."""
    n = a["n"] + b["n"]
    avg = None
    if a["avg"] is not None and b["avg"] is not None:
        avg = (a["avg"] * a["n"] + b["avg"] * b["n"]) / n
    return {
        "t": a["t"],
        "min": _pick(min, a["min"], b["min"]),
        "avg": avg,
        "max": _pick(max, a["max"], b["max"]),
        "last": a["last"] if b["last"] is None else b["last"],
        "n": n,
    }


def _pick(
    choose: Callable[[float, float], float], a: float | None, b: float | None
) -> float | None:
    # A rollup that keeps no min or max (rates) leaves the tail's.
    return b if a is None else a if b is None else choose(a, b)


def _bucket_query(source: Source, plan: BucketPlan, keys: Sequence[int], lo_us: int) -> Any:
    """Per key and bucket: min, Σ value·weight, max, Σ weight, newest time, newest value."""
    ts, avg = _int(source.time), _int(source.avg)
    k = _IntDiv(ts - _inline(plan.origin_us), _inline(plan.width_us))
    if source.weight is None:
        total: ColumnElement[Any] = sql.sum(avg)
        n: ColumnElement[Any] = sql.count()
    else:
        total = sql.sum(_Real(avg) * _int(source.weight))
        n = sql.sum(_int(source.weight))
    buckets = (
        select(
            source.key.label("key"),
            k.label("k"),
            (sql.min(_int(source.min)) if source.min is not None else null()).label("low"),
            total.label("total"),
            (sql.max(_int(source.max)) if source.max is not None else null()).label("high"),
            n.label("n"),
            sql.max(ts).label("newest"),
        )
        .where(source.key.in_(keys), ts >= lo_us, ts < plan.hi_us, source.avg.is_not(None))
        .group_by(source.key, k)
        .subquery()
    )
    newest_value: ColumnElement[Any] = null()
    if source.last is not None:
        # The newest row of each bucket, found again by its primary key. A correlated scalar
        # subquery rather than a join: PostgreSQL underestimates the groups and would hash-join
        # the whole table (220 ms for 30 days of hourly rows instead of 7 ms of index lookups).
        row = aliased(source.key.class_)
        newest_value = (
            select(_int(getattr(row, source.last.key)))
            .where(
                getattr(row, source.key.key) == buckets.c.key,
                _int(getattr(row, source.time.key)) == buckets.c.newest,
            )
            .scalar_subquery()
        )
    return select(buckets, newest_value).order_by(buckets.c.key, buckets.c.k)


def _sql_buckets(
    session: Session, source: Source, plan: BucketPlan, keys: Sequence[int], lo_us: int
) -> Iterator[Bucket]:
    """One table's buckets in [lo, plan.hi), per key in time order."""
    s_min, s_avg, s_max, s_last = (
        _scale(c) for c in (source.min, source.avg, source.max, source.last)
    )
    origin, width = plan.origin_us, plan.width_us
    # Rows are streamed, not fetched into a list: each is gone before the next arrives, so
    # thousands of them never outlive a young-generation collection.
    for key, k, low, total, high, n, newest, last in session.connection().execute(
        _bucket_query(source, plan, keys, lo_us)
    ):
        point: Point = {
            "t": (origin + k * width) // 1000,
            "min": None if low is None else low / s_min,
            "avg": float(total) / s_avg / float(n),
            "max": None if high is None else high / s_max,
            "last": None if last is None else last / s_last,
            "n": int(n),
        }
        yield key, point, int(newest)


def _merge_buckets(buckets: Iterable[Bucket], into: dict[int, list[Point]]) -> int | None:
    """Append buckets to ``into`` (per key, in time order), merging the one a coarser table
    already began; returns the newest row's time, if any."""
    newest_seen = None
    for key, point, newest in buckets:
        points = into.setdefault(key, [])
        if points and points[-1]["t"] == point["t"]:
            points[-1] = merge_points(points[-1], point)
        else:
            points.append(point)
        if newest_seen is None or newest > newest_seen:
            newest_seen = newest
    return newest_seen


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
