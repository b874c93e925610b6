"""The rollups computed by PostgreSQL itself: ``INSERT … SELECT … GROUP BY … ON CONFLICT``, no
row through Python.

The Python rollup (analysis/rollup.py) reads every raw row of the redone minutes into the
worker and writes the buckets back: at 10,000 replicas polled every second that is some 1.8 M
raw rows a run. Here the store does the same arithmetic where the rows are:

- a minute: ``count``, ``min``, ``max`` and ``avg`` over the known values (``avg`` skips NULLs,
  as the Python rollup does), ``last`` the newest known value (``array_agg … ORDER BY ts DESC``
  filtered on NOT NULL, its first element), ``caught_up`` the samples whose verdict was
  caught up, ``last_verdict`` the newest sample's;
- an hour from its minutes: ``min`` of the minima, ``max`` of the maxima, the newest known
  ``last``, averages weighted by each minute's sample count over the minutes where the metric
  was known (analysis/rollup.py's ``merge``).

Values are the stored integers (``Scaled`` columns hold ``round(value × 1000)``): an average of
stored milliseconds is the stored average once rounded, to within the one rounding step (half
away from zero here, half to even in Python). The statements are built once from the metric
catalog's rollup columns; no text from a user reaches them.
"""

from __future__ import annotations

from sqlalchemy import TextClause, text
from sqlalchemy.orm import Session

from lagscope.metrics_catalog import ROLLED_UP
from lagscope.models import Sample, SampleRollup1m
from lagscope.models.types import Scaled

MINUTE_US, HOUR_US = 60_000_000, 3_600_000_000


def _scale(column: object) -> int:
    kind = getattr(column, "type", None)
    return kind.scale if isinstance(kind, Scaled) else 1


def _minute_columns() -> list[tuple[str, str]]:
    """(rollup column, its expression over ``samples``) for every rolled-up statistic."""
    raw = Sample.__table__.c
    out = [
        ("samples", "count(*)"),
        ("caught_up", "count(*) FILTER (WHERE verdict = 0)"),
        ("last_verdict", "(array_agg(verdict ORDER BY ts DESC))[1]"),
    ]
    rolled = SampleRollup1m.__table__.c
    for metric in ROLLED_UP:
        source = metric.name
        for stat in metric.rollup_stats.split():
            name = f"{metric.rollup}_{stat}"
            if stat == "avg":
                factor = _scale(rolled[name]) // _scale(raw[source])
                scaled = f"avg({source})" if factor == 1 else f"avg({source}) * {factor}"
                out.append((name, f"round({scaled})"))
            elif stat == "last":
                out.append((name, _newest_known(source, "ts")))
            else:
                out.append((name, f"{stat}({source})"))
    return out


def _newest_known(column: str, time_column: str) -> str:
    return (
        f"(array_agg({column} ORDER BY {time_column} DESC) FILTER (WHERE {column} IS NOT NULL))[1]"
    )


def _hour_columns() -> list[tuple[str, str]]:
    out = [
        ("samples", "sum(samples)"),
        ("caught_up", "sum(caught_up)"),
        ("last_verdict", "(array_agg(last_verdict ORDER BY bucket DESC))[1]"),
    ]
    for metric in ROLLED_UP:
        for stat in metric.rollup_stats.split():
            name = f"{metric.rollup}_{stat}"
            if stat == "avg":
                weighted = (
                    f"round(sum(samples::numeric * {name})"
                    f" / nullif(sum(samples) FILTER (WHERE {name} IS NOT NULL), 0))"
                )
                out.append((name, weighted))
            elif stat == "last":
                out.append((name, _newest_known(name, "bucket")))
            else:
                out.append((name, f"{stat}({name})"))
    return out


def _upsert(
    table: str, source: str, time_column: str, width_us: int, columns: list[tuple[str, str]]
) -> TextClause:
    names = [name for name, _ in columns]
    listed = ", ".join(["channel_id", "bucket", *names])
    selected = ", ".join(expression for _, expression in columns)
    updated = ", ".join(f"{name} = EXCLUDED.{name}" for name in names)
    bucket = f"{time_column} - ({time_column} % {width_us})"
    # Two workers redoing the same minutes at once: the later write wins, with the same rows.
    return text(
        f"INSERT INTO {table} ({listed})"  # noqa: S608 - names from the metric catalog
        f" SELECT channel_id, {bucket}, {selected} FROM {source}"
        f" WHERE {time_column} >= :start_us AND {time_column} < :end_us"
        f" GROUP BY channel_id, {bucket}"
        f" ON CONFLICT (channel_id, bucket) DO UPDATE SET {updated}"
    )


_MINUTES = _upsert("samples_1m", "samples", "ts", MINUTE_US, _minute_columns())
_HOURS = _upsert("samples_1h", "samples_1m", "bucket", HOUR_US, _hour_columns())
_DELETE = {
    table: text(f"DELETE FROM {table} WHERE bucket >= :start_us AND bucket < :end_us")  # noqa: S608 - a fixed table name
    for table in ("samples_1m", "samples_1h")
}


def refresh(session: Session, table: str, start_s: int, end_s: int) -> int:
    """Replace ``table``'s buckets in [start_s, end_s) by those the store computes; returns the
    rows written."""
    bounds = {"start_us": start_s * 1_000_000, "end_us": end_s * 1_000_000}
    # A bucket whose raw rows are gone (a channel's history deleted) goes too, as it did.
    session.execute(_DELETE[table], bounds)
    statement = _MINUTES if table == "samples_1m" else _HOURS
    result = session.execute(statement, bounds)
    return int(getattr(result, "rowcount", 0) or 0)
