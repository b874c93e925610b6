"""PostgreSQL: raw per-poll tables partitioned by day on ``ts`` (issue 20, the store at fleet size)

On PostgreSQL, ``samples``, ``instance_samples`` and ``applier_worker_samples`` (one row per
channel or instance and poll, kept ``LAGSCOPE_RETENTION_RAW_DAYS``) become ``PARTITION BY RANGE
(ts)`` tables with one partition per UTC day, ``<table>_pYYYYMMDD`` covering
[midnight, next midnight) in epoch microseconds, and a DEFAULT partition ``<table>_default`` so
that no insert ever fails for want of a partition. Retention then drops whole days instead of
deleting rows (lagscope/ingest/partitions.py, run by the retention job, which also keeps the next
days' partitions made ahead).

Existing rows are carried over: the table is renamed aside, the partitioned table is created
under the old name with the same columns and the same named constraints (the primary keys
already hold ``ts``, as PostgreSQL requires of a partitioned table's unique keys), partitions
are made for every day that has rows (days further ahead than the days made ahead go to the
default partition), the rows are copied, and the old table is dropped. The copy runs in the
migration's transaction: stop the workers first, as for every upgrade (docs/operations.md).

SQLite and MySQL/MariaDB: nothing changes. The models declare no partitioning either: on
PostgreSQL it is a property of the store, found in the catalog at run time.

This migration repeats the partition SQL of lagscope/ingest/partitions.py on purpose: a
migration must not change when application code changes later.

Revision ID: prt20a000001
Revises: eps19b000001
Create Date: 2026-11-25 18:30:00
"""

import time
from collections.abc import Sequence
from datetime import UTC, datetime

from alembic import op
from sqlalchemy import text
from sqlalchemy.engine import Connection

revision: str = "prt20a000001"
down_revision: str | None = "eps19b000001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("samples", "instance_samples", "applier_worker_samples")
DAY_US = 86_400_000_000
DAYS_AHEAD = 3  # today and the next three days, as the retention job keeps them


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    today = int(time.time() // 86_400)
    for table in TABLES:
        _partition(conn, table, today)


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    for table in TABLES:
        _unpartition(conn, table)


def _partition(conn: Connection, table: str, today: int) -> None:
    old = f"{table}_unpartitioned"
    constraints = _swap_aside(conn, table, old)
    conn.execute(
        text(f"CREATE TABLE {table} (LIKE {old} INCLUDING DEFAULTS) PARTITION BY RANGE (ts)")
    )
    _add_constraints(conn, table, constraints)
    days = set(conn.scalars(text(f"SELECT DISTINCT ts / {DAY_US} FROM {old}")))  # noqa: S608
    days = {d for d in days if d <= today + DAYS_AHEAD}
    days |= set(range(today, today + DAYS_AHEAD + 1))
    for day in sorted(days):
        lo, hi = day * DAY_US, (day + 1) * DAY_US
        conn.execute(
            text(
                f"CREATE TABLE {table}_p{_stamp(day)} PARTITION OF {table} "
                f"FOR VALUES FROM ({lo}) TO ({hi})"
            )
        )
    conn.execute(text(f"CREATE TABLE {table}_default PARTITION OF {table} DEFAULT"))
    # LIKE keeps the column order, so the rows copy column for column.
    conn.execute(text(f"INSERT INTO {table} SELECT * FROM {old}"))  # noqa: S608 - our names
    conn.execute(text(f"DROP TABLE {old}"))
    conn.execute(text(f"ANALYZE {table}"))


def _unpartition(conn: Connection, table: str) -> None:
    old = f"{table}_partitioned"
    constraints = _swap_aside(conn, table, old)
    conn.execute(text(f"CREATE TABLE {table} (LIKE {old} INCLUDING DEFAULTS)"))
    _add_constraints(conn, table, constraints)
    conn.execute(text(f"INSERT INTO {table} SELECT * FROM {old}"))  # noqa: S608 - our names
    conn.execute(text(f"DROP TABLE {old}"))  # and its partitions


def _swap_aside(conn: Connection, table: str, aside: str) -> list[tuple[str, str]]:
    """Rename ``table`` to ``aside`` and drop its constraints, returning them (name, definition):
    the primary key's index name is unique per schema, so the new table can only take it once
    the old one has let it go."""
    constraints = [
        (name, definition)
        for name, definition in conn.execute(
            text(
                "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE conrelid = CAST(:t AS regclass) AND contype IN ('p', 'u', 'f', 'c') "
                "ORDER BY conname"
            ),
            {"t": table},
        )
    ]
    conn.execute(text(f"ALTER TABLE {table} RENAME TO {aside}"))
    for name, _ in constraints:
        conn.execute(text(f"ALTER TABLE {aside} DROP CONSTRAINT {name}"))
    return constraints


def _add_constraints(conn: Connection, table: str, constraints: list[tuple[str, str]]) -> None:
    for name, definition in constraints:
        conn.execute(text(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}"))


def _stamp(day: int) -> str:
    return datetime.fromtimestamp(day * 86_400, UTC).strftime("%Y%m%d")
