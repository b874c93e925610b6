"""The mark ``lagscope demo`` leaves in a store it made: one row (migration app17de0001).

Demo mode lets every caller in as an admin, so the API runs it only on a store that carries
this mark: never on a deployment's store, where an anonymous admin could make accounts that
outlive the demo.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros


class DemoStore(Base):
    __tablename__ = "demo_store"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)  # always 1: one row
    created_at: Mapped[datetime] = mapped_column(EpochMicros)
