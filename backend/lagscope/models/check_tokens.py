"""Check tokens: read-only bearer tokens for proxies and throttlers, accepted by the lag check
routes only (``/api/v1/check/…``) and only for the clusters they list. Stored hashed."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros


class CheckToken(Base):
    """Only the token's SHA-256 is stored: a copy of the store holds no usable token."""

    __tablename__ = "check_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(128))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # Who made it, as text (a username, "demo", or "cli"): kept for the list, whoever leaves.
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(EpochMicros)
    # Written at most once a minute per token, as for API tokens.
    last_used_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)

    clusters: Mapped[list[CheckTokenCluster]] = relationship(
        back_populates="token",
        cascade="all, delete-orphan",
        order_by="CheckTokenCluster.cluster_id",
    )


class CheckTokenCluster(Base):
    """One cluster a check token may ask about. By id, with the cluster's row: deleting the
    cluster takes it out of every token, and a new cluster given the same name later is in none."""

    __tablename__ = "check_token_clusters"

    token_id: Mapped[int] = mapped_column(
        ForeignKey("check_tokens.id", ondelete="CASCADE"), primary_key=True
    )
    cluster_id: Mapped[int] = mapped_column(
        ForeignKey("clusters.id", ondelete="CASCADE"), primary_key=True, index=True
    )

    token: Mapped[CheckToken] = relationship(back_populates="clusters")
