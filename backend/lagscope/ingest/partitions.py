"""PostgreSQL's day partitions of the raw per-poll tables: made ahead, dropped whole when expired.

On PostgreSQL the migration ``prt20a000001`` makes ``samples``, ``instance_samples`` and
``applier_worker_samples`` ``PARTITION BY RANGE (ts)`` tables: one partition per UTC day
(``<table>_pYYYYMMDD``, [midnight, next midnight) in epoch µs) and a DEFAULT partition
(``<table>_default``) for rows no day partition covers, so an insert never fails. The retention
job (:func:`lagscope.ingest.rollups.enforce_retention`) calls :func:`maintain` for each, which

- drops every day partition whose whole day is older than the retention cutoff. The day that
  straddles the cutoff is kept until it has wholly expired: no row-by-row DELETE (and its dead
  rows for vacuum) ever runs on a day partition, and raw rows stay at most one day longer than
  ``LAGSCOPE_RETENTION_RAW_DAYS``. The series query never reads raw rows older than the
  retention anyway (it picks a rollup for them);
- deletes the expired rows of the default partition (normally empty: see below);
- makes the partitions of today and the next :data:`DAYS_AHEAD` days if missing, and one for
  every unexpired day that has rows in the default partition, moving those rows into it.

Rows land in the default partition only when their day had no partition when written: the
retention job did not run for more than :data:`DAYS_AHEAD` days, or a poller's clock is off by
days. They are kept and read like any other row, and the next run moves them into their day's
partition (or deletes them once expired). Off PostgreSQL, or on a PostgreSQL store whose table is
not partitioned (made by ``create_all``), :func:`partitioned_tables` says so and retention
deletes rows as before.

Locks: attaching a partition takes SHARE UPDATE EXCLUSIVE on the table (inserts and reads go on)
and ACCESS EXCLUSIVE on the default partition; dropping one takes ACCESS EXCLUSIVE on the table
until the job's transaction commits (its last step: milliseconds). Each step runs in a savepoint
under a short ``lock_timeout``: behind a long query it gives up rather than queueing every poll
behind it, and the next run (hourly) tries again.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

RAW_TABLES = ("samples", "instance_samples", "applier_worker_samples")
DAY_S = 86_400
DAY_US = DAY_S * 1_000_000
# Partitions made ahead: a retention job (hourly) that stops for up to three days loses nothing
# and sends nothing to the default partition.
DAYS_AHEAD = 3
# Long enough for a commit of a poll batch to finish; short enough that a poll queued behind the
# DDL's lock waits at most this long before the DDL gives up.
LOCK_TIMEOUT = "2s"
_LOCK_NOT_AVAILABLE = "55P03"
_BOUNDS = re.compile(r"FOR VALUES FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)")


@dataclass(frozen=True, slots=True)
class Partition:
    name: str
    lo_us: int | None  # None: the default partition
    hi_us: int | None


@dataclass(slots=True)
class Maintenance:
    """What :func:`maintain` did to one table."""

    created: list[str]
    dropped: list[str]
    default_rows_deleted: int = 0
    default_rows_moved: int = 0


def partitioned_tables(session: Session) -> frozenset[str]:
    """Which of :data:`RAW_TABLES` are partitioned here (none off PostgreSQL)."""
    if session.get_bind().dialect.name != "postgresql":
        return frozenset()
    found = session.scalars(
        text(
            "SELECT relname FROM pg_class WHERE relkind = 'p' AND relname = ANY(:names) "
            "AND relnamespace = CAST(current_schema() AS regnamespace)"
        ),
        {"names": list(RAW_TABLES)},
    )
    return frozenset(found)


def partitions(session: Session, table: str) -> list[Partition]:
    """The table's partitions with their bounds, read from the catalog (not from their names)."""
    rows = session.execute(
        text(
            "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
            "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = CAST(:t AS regclass) "
            "ORDER BY c.relname"
        ),
        {"t": table},
    )
    found = []
    for name, bound in rows:
        match = _BOUNDS.search(bound)
        if match:
            found.append(Partition(name, int(match[1]), int(match[2])))
        elif bound == "DEFAULT":
            found.append(Partition(name, None, None))
    return found


def maintain(session: Session, table: str, now_s: float, cutoff_s: float) -> Maintenance:
    """Retention and partitions ahead for one partitioned table (see the module docstring)."""
    done = Maintenance([], [])
    cutoff_us = int(cutoff_s * 1_000_000)
    existing = partitions(session, table)
    default = next((p.name for p in existing if p.lo_us is None), None)
    if default is not None:
        done.default_rows_deleted = _delete(session, default, cutoff_us)
    with _lock_timeout(session):
        for part in existing:
            expired = part.hi_us is not None and part.hi_us <= cutoff_us
            if expired and _step(session, f"DROP TABLE {part.name}", table):
                done.dropped.append(part.name)
        today = int(now_s // DAY_S)
        wanted = set(range(today, today + DAYS_AHEAD + 1))
        if default is not None:
            wanted |= _days_in(session, default, cutoff_us // DAY_US, today + DAYS_AHEAD)
        for day in sorted(d for d in wanted if not _covered(existing, d)):
            moved = _create(session, table, default, day)
            if moved is not None:
                done.created.append(partition_name(table, day))
                done.default_rows_moved += moved
    if done.created or done.dropped or done.default_rows_moved:
        log.info("%s: partitions made %s, dropped %s; default rows moved %s, deleted %s",
                 table, done.created, done.dropped, done.default_rows_moved,
                 done.default_rows_deleted)  # fmt: skip
    return done


def _covered(existing: list[Partition], day: int) -> bool:
    start = day * DAY_US
    return any(
        p.lo_us is not None and p.hi_us is not None and p.lo_us <= start < p.hi_us for p in existing
    )


def partition_name(table: str, day: int) -> str:
    return f"{table}_p{datetime.fromtimestamp(day * DAY_S, UTC):%Y%m%d}"


def _create(session: Session, table: str, default: str | None, day: int) -> int | None:
    """Make the day's partition, moving its rows out of the default partition first (attaching
    fails while the default holds rows of the new range); None if the lock was not granted.

    Made as a plain table and attached, rather than ``CREATE TABLE … PARTITION OF``: attaching
    needs only SHARE UPDATE EXCLUSIVE on the parent, so polls keep inserting meanwhile."""
    name, lo, hi = partition_name(table, day), day * DAY_US, (day + 1) * DAY_US
    statements = [f"CREATE TABLE {name} (LIKE {table} INCLUDING DEFAULTS)"]
    if default is not None:
        statements += [
            # The order ATTACH takes them in: the parent, then the default partition.
            f"LOCK TABLE {table} IN SHARE UPDATE EXCLUSIVE MODE",
            f"LOCK TABLE {default} IN ACCESS EXCLUSIVE MODE",
            _move(default, name, lo, hi),
        ]
    statements.append(
        f"ALTER TABLE {table} ATTACH PARTITION {name} FOR VALUES FROM ({lo}) TO ({hi})"
    )
    try:
        with session.begin_nested():
            moved = 0
            for statement in statements:
                result = session.execute(text(statement))
                if statement.startswith("WITH moved"):
                    moved = int(getattr(result, "rowcount", 0) or 0)
    except OperationalError as exc:
        _not_granted(exc, f"making {name}")
        return None
    return moved


def _move(default: str, into: str, lo: int, hi: int) -> str:
    return (
        f"WITH moved AS (DELETE FROM {default} WHERE ts >= {lo} AND ts < {hi} RETURNING *) "  # noqa: S608 - our names, integers
        f"INSERT INTO {into} SELECT * FROM moved"
    )


def _step(session: Session, statement: str, table: str) -> bool:
    try:
        with session.begin_nested():
            session.execute(text(statement))
    except OperationalError as exc:
        _not_granted(exc, f"{statement} on {table}")
        return False
    return True


def _not_granted(exc: OperationalError, what: str) -> None:
    """A lock not granted within LOCK_TIMEOUT is for the next run; anything else is raised."""
    if getattr(exc.orig, "sqlstate", None) != _LOCK_NOT_AVAILABLE:
        raise exc
    log.warning("%s: lock not granted within %s; the next run tries again", what, LOCK_TIMEOUT)


def _delete(session: Session, default: str, cutoff_us: int) -> int:
    delete = text(f"DELETE FROM {default} WHERE ts < :cutoff")  # noqa: S608 - our names
    result = session.execute(delete, {"cutoff": cutoff_us})
    return int(getattr(result, "rowcount", 0) or 0)


def _days_in(session: Session, default: str, first: int, last: int) -> set[int]:
    """Days from ``first`` to ``last`` with rows in the default partition (usually empty)."""
    days = session.scalars(
        text(f"SELECT DISTINCT ts / {DAY_US} FROM {default}"),  # noqa: S608 - our names
    )
    return {int(d) for d in days if first <= d <= last}


@contextmanager
def _lock_timeout(session: Session) -> Iterator[None]:
    """``lock_timeout`` for the DDL only, then the transaction's own setting again."""
    before = session.scalar(text("SELECT current_setting('lock_timeout')"))
    session.execute(text("SELECT set_config('lock_timeout', :v, true)"), {"v": LOCK_TIMEOUT})
    yield  # on an error the transaction is rolled back, and the setting with it
    session.execute(text("SELECT set_config('lock_timeout', :v, true)"), {"v": before})
