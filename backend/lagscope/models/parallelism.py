"""Windows of a source's binlog, grouped by group commit: how much could apply at once."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros


class CommitSample(Base):
    """One window of the source's binlog (``groups``: each group commit's transactions, as
    their sizes in bytes), or, with ``groups`` empty, only the position the next window starts
    from. ``next_file``/``next_pos``: the source's binlog position when this row was taken."""

    __tablename__ = "commit_samples"
    __table_args__ = (Index("ix_commit_samples_instance_taken", "instance_id", "taken_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id", ondelete="CASCADE"))
    taken_at: Mapped[datetime] = mapped_column(EpochMicros)
    transactions: Mapped[int] = mapped_column(Integer, default=0)
    groups: Mapped[list[Any]] = mapped_column(JSON, default=list)
    next_file: Mapped[str | None] = mapped_column(String(255), default=None)
    next_pos: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # MySQL sources (read over the replication protocol): each transaction's
    # [last_committed, sequence_number, size]; ``groups`` is then empty.
    parents: Mapped[list[Any] | None] = mapped_column(JSON, default=None)
    # Why no window could be read (e.g. the user lacks REPLICATION SLAVE); NULL when read.
    problem: Mapped[str | None] = mapped_column(Text, default=None)
