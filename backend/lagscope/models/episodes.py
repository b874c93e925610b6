"""Lag episodes and their cause segments (docs/causes.md; analysis/causes/episodes.py).

An episode belongs to one channel: from the poll its lag passed the threshold until it had been
caught up for 30 s (``ended_at`` null while ongoing). A cause segment is one cause seen inside
one episode, with the evidence of its latest, strongest poll (JSON: numbers, flags, and server
text bounded to 500 characters).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Integer, SmallInteger, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros, Scaled


class Episode(Base):
    __tablename__ = "episodes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = mapped_column(
        ForeignKey("clusters.id", ondelete="CASCADE"), index=True
    )
    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), index=True
    )
    started_at: Mapped[datetime] = mapped_column(EpochMicros, index=True)
    ended_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    peak_lag_s: Mapped[float | None] = mapped_column(Scaled(1000, big=True), default=None)
    peak_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    # The cause that held longest (analysis.causes.model.Cause value), kept current as it goes.
    main_cause: Mapped[int | None] = mapped_column(SmallInteger, default=None)
    # How it ended: "by_itself", "after_step" (a journal step / parameter change inside it),
    # "replica_removed", or null while ongoing.
    end_reason: Mapped[str | None] = mapped_column(String(32), default=None)
    # The parameter change that ended it, when one did (param_changes.id).
    ended_by_change_id: Mapped[int | None] = mapped_column(
        ForeignKey("param_changes.id", ondelete="SET NULL"), default=None
    )


class EpisodeCause(Base):
    """One cause segment of an episode."""

    __tablename__ = "episode_causes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    episode_id: Mapped[int] = mapped_column(
        ForeignKey("episodes.id", ondelete="CASCADE"), index=True
    )
    cause: Mapped[int] = mapped_column(SmallInteger)
    started_at: Mapped[datetime] = mapped_column(EpochMicros)
    ended_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    confidence: Mapped[float] = mapped_column(Float, default=0.0)
    sentence: Mapped[str] = mapped_column(Text, default="")
    action: Mapped[str] = mapped_column(Text, default="")
    evidence: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    needs: Mapped[str | None] = mapped_column(String(255), default=None)
