"""Tracked parameters: the current value per instance, and every change as an event."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros


class ParamValue(Base):
    __tablename__ = "param_values"
    __table_args__ = (UniqueConstraint("instance_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(64))
    value: Mapped[str | None] = mapped_column(Text)
    since: Mapped[datetime] = mapped_column(EpochMicros)  # first poll that saw this value


class ParamChange(Base):
    """``old → new`` happened in ``(last_old_at, first_new_at]``; polls that failed in between
    only widen the window, they never lose the event."""

    __tablename__ = "param_changes"
    __table_args__ = (UniqueConstraint("instance_id", "name", "first_new_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instance_id: Mapped[int] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(64))
    old_value: Mapped[str | None] = mapped_column(Text)
    new_value: Mapped[str | None] = mapped_column(Text)
    last_old_at: Mapped[datetime] = mapped_column(EpochMicros)
    first_new_at: Mapped[datetime] = mapped_column(EpochMicros, index=True)
