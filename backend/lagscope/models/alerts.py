"""Alerts (docs/alerts.md): rules, their state per rule × subject, events, silences, webhook
targets, deliveries and every delivery attempt.

State lives here, not in a worker's memory: any worker may evaluate the next tick or send the
next retry. Rows that two workers may race on carry a ``version`` column and are written with a
compare-and-set ``UPDATE … WHERE id = :id AND version = :seen`` (works alike on SQLite,
PostgreSQL and MySQL, unlike ``SELECT … FOR UPDATE`` which SQLite lacks).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Double,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros


class AlertRule(Base):
    """What to watch, where, how patiently, and whom to tell.

    Scope: every column left NULL/empty widens it (no cluster = every cluster). ``overrides``
    is a list of ``{"instance_id", "threshold"?, "resolve_threshold"?, "for_s"?, "enabled"?}``:
    one replica may need a different bound (a far region, a reporting replica)."""

    __tablename__ = "alert_rules"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    metric: Mapped[str] = mapped_column(String(32))
    threshold: Mapped[float] = mapped_column(Double, default=0.0)
    for_s: Mapped[float] = mapped_column(Double, default=0.0)
    resolve_threshold: Mapped[float | None] = mapped_column(Double, default=None)
    keep_firing_s: Mapped[float] = mapped_column(Double, default=0.0)
    repeat_s: Mapped[float | None] = mapped_column(Double, default=None)
    cluster_id: Mapped[int | None] = mapped_column(
        ForeignKey("clusters.id", ondelete="CASCADE"), default=None, index=True
    )
    instance_id: Mapped[int | None] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), default=None
    )
    channel_id: Mapped[int | None] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), default=None
    )
    region: Mapped[str | None] = mapped_column(String(64), default=None)
    overrides: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    severity: Mapped[str] = mapped_column(String(16), default="warning")
    labels: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    target_ids: Mapped[list[int]] = mapped_column(JSON, default=list)
    # What a NULL value means (alerts.state.Unknown).
    null_policy: Mapped[str] = mapped_column(String(24), default="firing_if_broken")
    # Metric parameters, e.g. param_changed: {"names": [...], "window_s": 600}.
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(EpochMicros)
    updated_at: Mapped[datetime] = mapped_column(EpochMicros)


class AlertState(Base):
    """One rule's judgement of one subject (a channel, or an instance for instance metrics)."""

    __tablename__ = "alert_states"
    __table_args__ = (UniqueConstraint("rule_id", "subject"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    rule_id: Mapped[int] = mapped_column(ForeignKey("alert_rules.id", ondelete="CASCADE"))
    subject: Mapped[str] = mapped_column(String(32))  # "c<channel id>" | "i<instance id>"
    cluster_id: Mapped[int] = mapped_column(
        ForeignKey("clusters.id", ondelete="CASCADE"), index=True
    )
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id", ondelete="CASCADE"))
    channel_id: Mapped[int | None] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), default=None
    )
    phase: Mapped[str] = mapped_column(String(16), default="ok")
    since: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    last_breach_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    last_notified_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    breaching: Mapped[bool] = mapped_column(Boolean, default=False)
    # Whether the current firing was sent (a silence or maintenance window holds it back; it is
    # sent when they end if still firing, and a resolved is sent only after a sent firing).
    notified: Mapped[bool] = mapped_column(Boolean, default=False)
    value: Mapped[float | None] = mapped_column(Double, default=None)
    evaluated_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    # When the firing alert was last sent to the rule's Alertmanager API targets: Alertmanager
    # resolves an alert whose endsAt lapses, so it is re-sent every AM_RESEND_S while firing.
    refreshed_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    version: Mapped[int] = mapped_column(Integer, default=0)

    # Every ORM update is ``… WHERE id = :id AND version = :seen`` and bumps it; a row changed
    # by another worker since it was read raises StaleDataError instead of being overwritten.
    __mapper_args__ = {"version_id_col": version}  # noqa: RUF012 - SQLAlchemy reads it


class AlertEvent(Base):
    """A notification as it happened: fired, repeated, resolved (the history)."""

    __tablename__ = "alert_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    rule_id: Mapped[int] = mapped_column(
        ForeignKey("alert_rules.id", ondelete="CASCADE"), index=True
    )
    cluster_id: Mapped[int] = mapped_column(
        ForeignKey("clusters.id", ondelete="CASCADE"), index=True
    )
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id", ondelete="CASCADE"))
    channel_id: Mapped[int | None] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), default=None
    )
    kind: Mapped[str] = mapped_column(String(16))  # firing | repeat | resolved
    at: Mapped[datetime] = mapped_column(EpochMicros, index=True)
    starts_at: Mapped[datetime] = mapped_column(EpochMicros)
    value: Mapped[float | None] = mapped_column(Double, default=None)
    # Why nothing was sent: "silence <id>" or "maintenance <annotation id>"; NULL when sent.
    suppressed_by: Mapped[str | None] = mapped_column(String(64), default=None)
    idempotency_key: Mapped[str] = mapped_column(String(96), unique=True)
    context: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class Silence(Base):
    """Mute notifications in a scope until a time (state is still evaluated and kept)."""

    __tablename__ = "alert_silences"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    rule_id: Mapped[int | None] = mapped_column(
        ForeignKey("alert_rules.id", ondelete="CASCADE"), default=None
    )
    cluster_id: Mapped[int | None] = mapped_column(
        ForeignKey("clusters.id", ondelete="CASCADE"), default=None
    )
    instance_id: Mapped[int | None] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), default=None
    )
    channel_id: Mapped[int | None] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), default=None
    )
    region: Mapped[str | None] = mapped_column(String(64), default=None)
    starts_at: Mapped[datetime] = mapped_column(EpochMicros)
    ends_at: Mapped[datetime] = mapped_column(EpochMicros, index=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    author: Mapped[str] = mapped_column(String(128), default="")
    created_at: Mapped[datetime] = mapped_column(EpochMicros)


class WebhookTarget(Base):
    """Where notifications go. The secret is encrypted like instance passwords, never returned."""

    __tablename__ = "webhook_targets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    # generic | alertmanager (webhook v4 body) | alertmanager_api (POST /api/v2/alerts) | slack
    kind: Mapped[str] = mapped_column(String(16))
    url: Mapped[str] = mapped_column(Text)
    secret_enc: Mapped[str] = mapped_column(Text, default="")
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(EpochMicros)
    # Whether the bodies quote the servers' text (statement digests, error messages) in the
    # causes' sentences; off (the default): each quote is sent as “…”.
    include_statements: Mapped[bool] = mapped_column(Boolean, default=False)

    @property
    def has_secret(self) -> bool:
        return bool(self.secret_enc)


class Delivery(Base):
    """One notification to one target, until accepted or given up.

    ``claimed_until`` is a lease taken with a conditional UPDATE: the worker that gets the row
    sends; a worker killed mid-send lets the lease expire and another sends again with the same
    idempotency key (at least once; receivers dedupe on the key)."""

    __tablename__ = "alert_deliveries"
    __table_args__ = (UniqueConstraint("event_id", "target_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int | None] = mapped_column(
        ForeignKey("alert_events.id", ondelete="CASCADE"), default=None
    )
    target_id: Mapped[int] = mapped_column(
        ForeignKey("webhook_targets.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(16))  # firing | repeat | refresh | resolved | test
    idempotency_key: Mapped[str] = mapped_column(String(96))
    context: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    status: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(EpochMicros)
    claimed_until: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    created_at: Mapped[datetime] = mapped_column(EpochMicros)
    finished_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    version: Mapped[int] = mapped_column(Integer, default=0)


class DeliveryAttempt(Base):
    __tablename__ = "alert_delivery_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    delivery_id: Mapped[int] = mapped_column(
        ForeignKey("alert_deliveries.id", ondelete="CASCADE"), index=True
    )
    number: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(EpochMicros)
    status_code: Mapped[int | None] = mapped_column(Integer, default=None)
    latency_s: Mapped[float | None] = mapped_column(Double, default=None)
    error: Mapped[str | None] = mapped_column(Text, default=None)
