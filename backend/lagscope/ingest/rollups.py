"""Rollups (1 minute from raw, 1 hour from 1 minute) and retention, as periodic jobs.

Retention also keeps PostgreSQL's day partitions of the raw tables: made ahead, dropped whole
(:mod:`lagscope.ingest.partitions`).

Each run recomputes the last few complete buckets and replaces them (delete + insert), so a
run that was skipped, repeated or raced by another worker converges on the same rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from lagscope.analysis.rollup import Bucket, RawPoint, merge, rollup
from lagscope.config import Retention
from lagscope.ingest import rollups_sql
from lagscope.ingest.history_purge import purge_alert_history, purge_episodes
from lagscope.ingest.partitions import maintain, partitioned_tables
from lagscope.metrics_catalog import ROLLED_UP
from lagscope.models import (
    ApplierWorkerSample,
    AuditEvent,
    InstanceSample,
    Sample,
    SampleRollup1h,
    SampleRollup1m,
)
from lagscope.models.types import from_micros, to_micros

MINUTE, HOUR = 60, 3600
# Raw samples can land a little after their timestamp (a tick's write ends within its interval).
GRACE_S = 5
MINUTES_REDONE, HOURS_REDONE = 3, 2


def roll_up(session: Session, now_s: float, in_sql: bool | None = None) -> tuple[int, int]:
    """Refresh the last few complete minute and hour buckets; returns rows written.

    On PostgreSQL the store computes them (ingest/rollups_sql.py); SQLite and MySQL read the
    raw rows into Python (analysis/rollup.py). ``in_sql``: which, whatever the store (the
    bench compares them; only PostgreSQL runs the SQL)."""
    minute_end = int((now_s - GRACE_S) // MINUTE) * MINUTE
    minute_start = minute_end - MINUTES_REDONE * MINUTE
    hour_end = int((now_s - GRACE_S) // HOUR) * HOUR
    hour_start = hour_end - HOURS_REDONE * HOUR
    if in_sql is None:
        in_sql = session.get_bind().dialect.name == "postgresql"
    if in_sql:
        minutes = rollups_sql.refresh(session, "samples_1m", minute_start, minute_end)
        hours = rollups_sql.refresh(session, "samples_1h", hour_start, hour_end)
        return minutes, hours
    minutes = _refresh_minutes(session, minute_start, minute_end)
    hours = _refresh_hours(session, hour_start, hour_end)
    return minutes, hours


# The raw columns the rollups summarise, from the metric catalog (RawPoint's fields by name).
_ROLLED_UP = tuple(getattr(Sample, m.name) for m in ROLLED_UP)


def _refresh_minutes(session: Session, start_s: int, end_s: int) -> int:
    rows = session.execute(
        select(Sample.channel_id, Sample.ts, Sample.verdict, *_ROLLED_UP)
        .where(Sample.ts >= _at(start_s), Sample.ts < _at(end_s))
        .order_by(Sample.channel_id, Sample.ts)
    )
    points: dict[int, list[RawPoint]] = defaultdict(list)
    for row in rows:
        values = {c.key: getattr(row, c.key) for c in _ROLLED_UP}
        points[row.channel_id].append(
            RawPoint(ts_us=to_micros(row.ts), verdict=row.verdict, **values)
        )
    buckets = {cid: rollup(p, MINUTE) for cid, p in points.items()}
    return _replace(session, SampleRollup1m, start_s, end_s, buckets)


def _refresh_hours(session: Session, start_s: int, end_s: int) -> int:
    minutes = session.scalars(
        select(SampleRollup1m)
        .where(SampleRollup1m.bucket >= _at(start_s), SampleRollup1m.bucket < _at(end_s))
        .order_by(SampleRollup1m.channel_id, SampleRollup1m.bucket)
    )
    by_channel: dict[int, list[Bucket]] = defaultdict(list)
    for row in minutes:
        by_channel[row.channel_id].append(_bucket(row))
    buckets = {cid: merge(b, HOUR) for cid, b in by_channel.items()}
    return _replace(session, SampleRollup1h, start_s, end_s, buckets)


def _replace(
    session: Session,
    table: type[SampleRollup1m] | type[SampleRollup1h],
    start_s: int,
    end_s: int,
    buckets: dict[int, list[Bucket]],
) -> int:
    session.execute(delete(table).where(table.bucket >= _at(start_s), table.bucket < _at(end_s)))
    rows = [_row(cid, b) for cid, bs in buckets.items() for b in bs]
    if rows:
        session.execute(insert(table), rows)
    return len(rows)


def _bucket(row: SampleRollup1m) -> Bucket:
    values = {
        name: getattr(row, name) for name in Bucket.__dataclass_fields__ if name != "bucket_us"
    }
    return Bucket(bucket_us=to_micros(row.bucket), **values)


def _row(channel_id: int, bucket: Bucket) -> dict[str, Any]:
    values = asdict(bucket)
    return {"channel_id": channel_id, "bucket": from_micros(values.pop("bucket_us")), **values}


def enforce_retention(session: Session, now_s: float, retention: Retention) -> dict[str, int]:
    """Delete what is older than each table's retention; returns rows deleted per table.

    A raw table partitioned by day (PostgreSQL, see :mod:`lagscope.ingest.partitions`) has its
    expired days dropped whole instead, and the next days' partitions made; its count is then
    the rows deleted from its default partition. Partitions come last: their DDL holds locks
    until the job commits, which is right after."""
    deleted = {}
    partitioned = partitioned_tables(session)
    later = []
    for name, column, days in _retention_targets(retention):
        cutoff_s = now_s - days * 86_400
        if name in partitioned:
            later.append((name, cutoff_s))
            continue
        result = session.execute(delete(column.class_).where(column < _at(cutoff_s)))
        deleted[name] = int(getattr(result, "rowcount", 0) or 0)
    deleted.update(purge_episodes(session, now_s - retention.episode_days * 86_400))
    deleted.update(purge_alert_history(session, now_s - retention.alert_days * 86_400))
    for name, cutoff_s in later:
        deleted[name] = maintain(session, name, now_s, cutoff_s).default_rows_deleted
    return deleted


def _retention_targets(retention: Retention) -> Iterable[tuple[str, Any, float]]:
    yield "samples", Sample.ts, retention.raw_days
    yield "instance_samples", InstanceSample.ts, retention.raw_days
    yield "applier_worker_samples", ApplierWorkerSample.ts, retention.raw_days
    yield "samples_1m", SampleRollup1m.bucket, retention.minute_days
    yield "samples_1h", SampleRollup1h.bucket, retention.hour_days
    yield "audit_events", AuditEvent.at, retention.audit_days


def _at(epoch_s: float) -> datetime:
    return datetime.fromtimestamp(epoch_s, UTC)
