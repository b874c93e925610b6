"""Time series: raw samples per channel and poll, their rollups, and per-instance rates.

``samples`` is keyed ``(channel_id, ts)`` and, on SQLite, stored WITHOUT ROWID so the key is
the table (no second index): a unique key also makes a redelivered poll task harmless.
Enumerations are small integers (see :mod:`lagscope.analysis.codes`).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Integer, SmallInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros, Scaled


class Sample(Base):
    """One channel at one poll. Seconds as milliseconds, rates as milli-trx/s (see types).

    Lags are BIGINT milliseconds: a replica restored from a month-old backup is > 2^31 ms behind,
    and one such value must not make a whole tick's insert fail."""

    __tablename__ = "samples"
    __table_args__ = {"sqlite_with_rowid": False}  # noqa: RUF012 - SQLAlchemy reads it

    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    ts: Mapped[datetime] = mapped_column(EpochMicros, primary_key=True)
    verdict: Mapped[int] = mapped_column(SmallInteger)
    lag_s: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    lag_source: Mapped[int | None] = mapped_column(SmallInteger)
    seconds_behind_source: Mapped[int | None] = mapped_column(Integer)
    heartbeat_lag_s: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    applier_lag_s: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    # Source-timeline lag (analysis/timeline.py) and how wide the source polls bracketing it were.
    timeline_lag_s: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    timeline_resolution_s: Mapped[float | None] = mapped_column(Scaled(1000))
    trx_behind: Mapped[int | None] = mapped_column(BigInteger)
    not_received: Mapped[int | None] = mapped_column(BigInteger)
    received_not_applied: Mapped[int | None] = mapped_column(BigInteger)
    apply_rate: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    source_rate: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    io_state: Mapped[int | None] = mapped_column(SmallInteger)
    sql_running: Mapped[bool | None] = mapped_column(Boolean)
    relay_log_space: Mapped[int | None] = mapped_column(BigInteger)
    disagreement: Mapped[bool] = mapped_column(Boolean, default=False)
    # Transactions executed here that the source never wrote (analysis/errant.py); the set
    # itself is on the channel row, where it is overwritten, not repeated per poll.
    errant_trx: Mapped[int | None] = mapped_column(BigInteger)


class _RollupColumns:
    """min/avg/max/last per metric over a bucket, plus how many samples it summarises."""

    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    bucket: Mapped[datetime] = mapped_column(EpochMicros, primary_key=True)
    samples: Mapped[int] = mapped_column(Integer)
    caught_up: Mapped[int] = mapped_column(Integer)  # samples whose verdict was caught_up
    last_verdict: Mapped[int] = mapped_column(SmallInteger)
    lag_min: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    lag_avg: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    lag_max: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    lag_last: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    trx_behind_min: Mapped[int | None] = mapped_column(BigInteger)
    trx_behind_avg: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    trx_behind_max: Mapped[int | None] = mapped_column(BigInteger)
    trx_behind_last: Mapped[int | None] = mapped_column(BigInteger)
    not_received_avg: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    not_received_max: Mapped[int | None] = mapped_column(BigInteger)
    received_not_applied_avg: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    received_not_applied_max: Mapped[int | None] = mapped_column(BigInteger)
    apply_rate_avg: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    source_rate_avg: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    timeline_lag_avg: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    timeline_lag_max: Mapped[float | None] = mapped_column(Scaled(1000, big=True))


class SampleRollup1m(_RollupColumns, Base):
    __tablename__ = "samples_1m"


class SampleRollup1h(_RollupColumns, Base):
    __tablename__ = "samples_1h"


class SourceProgress(Base):
    """A source's progress per stream at each poll (analysis/timeline.py), kept for
    ``LAGSCOPE_TIMELINE_RETENTION_S``: when the source reached a position, for any worker.

    ``stream`` is ``gtid`` (MySQL executed-set size), a MariaDB domain id, or ``binlog``
    (``file_seq << 40 | position``); ``value`` never decreases within a stream (a source going
    backwards has its stream's history deleted first)."""

    __tablename__ = "source_progress"
    __table_args__ = {"sqlite_with_rowid": False}  # noqa: RUF012 - SQLAlchemy reads it

    instance_id: Mapped[int] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), primary_key=True
    )
    stream: Mapped[str] = mapped_column(String(16), primary_key=True)
    ts: Mapped[datetime] = mapped_column(EpochMicros, primary_key=True)
    value: Mapped[int] = mapped_column(BigInteger)


class InstanceSample(Base):
    """One instance at one poll: reachability, clock, and counter rates (per second)."""

    __tablename__ = "instance_samples"
    __table_args__ = {"sqlite_with_rowid": False}  # noqa: RUF012 - SQLAlchemy reads it

    instance_id: Mapped[int] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), primary_key=True
    )
    ts: Mapped[datetime] = mapped_column(EpochMicros, primary_key=True)
    reachable: Mapped[bool] = mapped_column(Boolean)
    round_trip_s: Mapped[float | None] = mapped_column(Scaled(1_000_000))
    clock_offset_s: Mapped[float | None] = mapped_column(Scaled(1_000_000))
    commits_per_s: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    binlog_commits_per_s: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    binlog_group_commits_per_s: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    log_fsyncs_per_s: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    data_fsyncs_per_s: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    data_written_per_s: Mapped[float | None] = mapped_column(Scaled(1, big=True))
    log_written_per_s: Mapped[float | None] = mapped_column(Scaled(1, big=True))
    dblwr_pages_per_s: Mapped[float | None] = mapped_column(Scaled(1000, big=True))
    # Seconds in fsync per second by file class and the mean fsync time (performance_schema's
    # file summary; NULL where it is off): the durability prediction's fsync cost.
    binlog_fsync_s_per_s: Mapped[float | None] = mapped_column(Scaled(1_000_000))
    relay_log_fsync_s_per_s: Mapped[float | None] = mapped_column(Scaled(1_000_000))
    redo_fsync_s_per_s: Mapped[float | None] = mapped_column(Scaled(1_000_000))
    fsync_latency_s: Mapped[float | None] = mapped_column(Scaled(1_000_000_000, big=True))
    semi_sync_on: Mapped[bool | None] = mapped_column(Boolean)
    semi_sync_avg_wait_s: Mapped[float | None] = mapped_column(Scaled(1_000_000))
    redo_log_enabled: Mapped[bool | None] = mapped_column(Boolean)
