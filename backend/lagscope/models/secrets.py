"""The store's secret-key salt: one row, made by migration 7a2e0c5e0006 (or on first use)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros


class SecretKeySalt(Base):
    """The random salt the credential key is derived with, and how (``kdf`` names the function
    and its cost, so a later change of parameters still reads what was written before).

    Not secret, but it belongs to the store: without it no stored credential can be read.
    """

    __tablename__ = "secret_key_salt"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)  # always 1: one row
    kdf: Mapped[str] = mapped_column(String(64))
    salt: Mapped[str] = mapped_column(String(64))  # URL-safe base64
    created_at: Mapped[datetime] = mapped_column(EpochMicros)
