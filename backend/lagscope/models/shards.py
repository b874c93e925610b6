"""Who polls what: the poll owners alive now and the lease each shard of clusters is held by."""

from __future__ import annotations

from sqlalchemy import BigInteger, Float, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base


class ShardLease(Base):
    """One shard's lease (engine/leases.py). ``token`` grows by one at every change of owner
    and is the fence: a tick's write names the token its owner took the shard with, and a write
    whose token is no longer the row's is refused. ``expires_at`` and ``renewed_at`` are epoch
    seconds by the owner's clock."""

    __tablename__ = "shard_leases"

    shard: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    owner: Mapped[str | None] = mapped_column(String(255), nullable=True)
    token: Mapped[int] = mapped_column(BigInteger, default=0)
    expires_at: Mapped[float] = mapped_column(Float, default=0.0)
    renewed_at: Mapped[float] = mapped_column(Float, default=0.0)


class PollOwner(Base):
    """A poll owner process alive at ``seen_at`` (epoch seconds): the members the shards are
    shared among (analysis/shards.py)."""

    __tablename__ = "poll_owners"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    seen_at: Mapped[float] = mapped_column(Float)
    started_at: Mapped[float] = mapped_column(Float)
