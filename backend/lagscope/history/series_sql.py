"""The series' buckets in SQL: one query per table bucketing its rows by time in the database.

The bucketing is GROUP BY the integer quotient of the µs time with MIN/SUM/MAX/COUNT, written
with two small functions compiled per dialect so every store (SQLite, PostgreSQL, MySQL,
MariaDB) divides and sums alike; Python only scales what comes back.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import BigInteger, ColumnElement, Float, literal, null, select, type_coerce
from sqlalchemy import func as sql
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session, aliased
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from lagscope.analysis.buckets import BucketPlan
from lagscope.history.series_catalog import Column, Source
from lagscope.history.series_points import Bucket, Point
from lagscope.models.types import Scaled


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
