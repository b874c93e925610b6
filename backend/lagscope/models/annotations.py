"""Human notes on the timeline (API: /api/v1/annotations)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros


class Annotation(Base):
    __tablename__ = "annotations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = mapped_column(
        ForeignKey("clusters.id", ondelete="CASCADE"), index=True
    )
    # Scope: the whole cluster, one instance, or one channel.
    instance_id: Mapped[int | None] = mapped_column(ForeignKey("instances.id", ondelete="CASCADE"))
    channel_id: Mapped[int | None] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    starts_at: Mapped[datetime] = mapped_column(EpochMicros, index=True)
    ends_at: Mapped[datetime | None] = mapped_column(EpochMicros)
    text: Mapped[str] = mapped_column(Text)
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    # The author's name as it was (display text) and their account: who may edit or delete
    # the note goes by the id, so a later user with the same name, in any case, is not them.
    # Null once the account is deleted (or for the demo): then only admins may change it.
    author: Mapped[str] = mapped_column(String(128), default="")
    author_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), index=True, default=None
    )
    created_at: Mapped[datetime] = mapped_column(EpochMicros)
    # The last edit (PATCH): who and when; null until the note is first edited. An admin may
    # edit another's note, so the author alone would misstate who wrote the current text.
    updated_by: Mapped[str | None] = mapped_column(String(128))
    updated_at: Mapped[datetime | None] = mapped_column(EpochMicros)
