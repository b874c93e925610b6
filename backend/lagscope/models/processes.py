"""Lagscope's own processes as they last reported themselves (the self-watch, health/)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros


class LagscopeProcess(Base):
    """One running API, worker, beat or heartbeat writer: ``name`` is ``host:pid``. Its
    self-watch thread sets ``seen_at`` every few seconds; a process that stops cleanly deletes
    its row, one that dies leaves it to go stale. ``last_dispatch_at``: beat only, when it last
    handed the poll dispatcher to the broker."""

    __tablename__ = "lagscope_processes"
    __table_args__ = (UniqueConstraint("kind", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(128))
    started_at: Mapped[datetime] = mapped_column(EpochMicros)
    seen_at: Mapped[datetime] = mapped_column(EpochMicros)
    last_dispatch_at: Mapped[datetime | None] = mapped_column(EpochMicros, nullable=True)
