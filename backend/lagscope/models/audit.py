"""The audit trail: one row per change made through the API or the CLI to what an operator
configures (clusters, instances, credentials, alert rules, targets, silences, users, tokens,
annotations), with who, from where and what changed. Written by models/auditing.py in the same
transaction as the change, so a change that rolls back leaves no entry."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros


class AuditEvent(Base):
    """``changes``: {field: [before, after]} for plain fields; a secret field (a password, a
    token's hash, a webhook secret) only as ``"set"``, ``"replaced"`` or ``"cleared"``, never its
    value."""

    __tablename__ = "audit_events"
    __table_args__ = (
        Index("ix_audit_events_at", "at"),
        Index("ix_audit_events_object", "kind", "object_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(EpochMicros)
    # A username, "demo" (the loopback demo) or "cli:<os user>".
    actor: Mapped[str] = mapped_column(String(128))
    # The client's address for the API; "cli@<host>" for the CLI.
    source: Mapped[str] = mapped_column(String(255))
    # "POST /api/v1/instances", or the CLI command ("lagscope user create").
    via: Mapped[str] = mapped_column(String(255))
    action: Mapped[str] = mapped_column(String(16))  # create | update | delete
    kind: Mapped[str] = mapped_column(String(32))
    object_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    object_name: Mapped[str] = mapped_column(String(255), default="")
    changes: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
