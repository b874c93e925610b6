"""Ticks that did not happen: a hole in a cluster's polling, recorded with why."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros


class PollGap(Base):
    """No tick of the cluster between ``started_at`` (the last recorded one) and ``ended_at``
    (the tick that noticed). ``reason`` is a code from :mod:`lagscope.analysis.poll_gaps`."""

    __tablename__ = "poll_gaps"
    __table_args__ = (Index("ix_poll_gaps_cluster_ended", "cluster_id", "ended_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = mapped_column(ForeignKey("clusters.id", ondelete="CASCADE"))
    started_at: Mapped[datetime] = mapped_column(EpochMicros)
    ended_at: Mapped[datetime] = mapped_column(EpochMicros)
    missed: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(32))
    detail: Mapped[str] = mapped_column(Text)
