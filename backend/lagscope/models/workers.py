"""Applier workers: a compact row per replica channel and poll, and the newest reading in full.

Per poll a row says how many workers there were and which were busy, as bit masks (bit ``i`` =
the ``i``-th worker by worker id): 16 workers cost 2 bytes, where a row per worker and poll
would multiply the raw-sample volume by the worker count. The transaction each worker applied
and its state text are kept only for the newest reading (``applier_workers``), like the GTID
sets of a channel.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, LargeBinary, SmallInteger, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros


class ApplierWorkerSample(Base):
    """One replica channel's workers at one reading (MariaDB's pool is one channel, ``''``)."""

    __tablename__ = "applier_worker_samples"
    __table_args__ = {"sqlite_with_rowid": False}  # noqa: RUF012 - SQLAlchemy reads it

    instance_id: Mapped[int] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), primary_key=True
    )
    ts: Mapped[datetime] = mapped_column(EpochMicros, primary_key=True)
    channel: Mapped[str] = mapped_column(String(64), primary_key=True)
    workers: Mapped[int] = mapped_column(SmallInteger)
    # Holding a transaction at the read; NULL where the server cannot tell (MySQL 5.7).
    busy: Mapped[int | None] = mapped_column(SmallInteger)
    busy_mask: Mapped[bytes | None] = mapped_column(LargeBinary)
    # Busy at the read or did some work since the previous read.
    active: Mapped[int] = mapped_column(SmallInteger)
    active_mask: Mapped[bytes] = mapped_column(LargeBinary)
    errors: Mapped[int] = mapped_column(SmallInteger)
    # Waiting for the relay log at the read (analysis/workers.py RELAY_READ_STATE); NULL in
    # rows written before this column was added.
    relay_waiting: Mapped[int | None] = mapped_column(SmallInteger)


class ApplierWorkerState(Base):
    """The newest worker reading of an instance, or why it could not be read."""

    __tablename__ = "applier_workers"

    instance_id: Mapped[int] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), primary_key=True
    )
    read_at: Mapped[datetime] = mapped_column(EpochMicros)
    # e.g. "monitoring user lacks the privilege to read applier workers: GRANT …"; NULL when read.
    problem: Mapped[str | None] = mapped_column(Text)
    # One dict per worker: channel, worker_id, thread_id, state, busy, idle_s, last_applied_trx,
    # applying_trx, last_error_number, last_error_message.
    workers: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
