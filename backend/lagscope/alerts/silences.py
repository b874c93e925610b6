"""Silences as the API edits them: a scope (a rule, cluster, instance, channel or region) and a
time range during which matching alerts notify nobody; expiring one ends it now."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.errors import InvalidInput, NotFound
from lagscope.models import AlertRule, Channel, Cluster, Instance, Silence


def _now() -> datetime:
    return datetime.now(UTC)


def list_silences(session: Session, include_expired: bool = False) -> list[Silence]:
    query = select(Silence).order_by(Silence.ends_at.desc(), Silence.id.desc())
    if not include_expired:
        query = query.where(Silence.ends_at > _now())
    return list(session.scalars(query))


def create_silence(session: Session, fields: Mapping[str, Any], author: str) -> Silence:
    now = _now()
    starts_at = fields.get("starts_at") or now
    if fields["ends_at"] <= max(starts_at, now):
        raise InvalidInput("ends_at must be in the future and after starts_at")
    silence = Silence(
        rule_id=fields.get("rule_id"),
        cluster_id=fields.get("cluster_id"),
        instance_id=fields.get("instance_id"),
        channel_id=fields.get("channel_id"),
        region=fields.get("region"),
        starts_at=starts_at,
        ends_at=fields["ends_at"],
        reason=fields["reason"],
        author=author,
        created_at=now,
    )
    for column, model in (
        ("rule_id", AlertRule),
        ("cluster_id", Cluster),
        ("instance_id", Instance),
        ("channel_id", Channel),
    ):
        value = getattr(silence, column)
        if value is not None and session.get(model, value) is None:
            raise InvalidInput(f"{column} {value} does not exist")
    session.add(silence)
    session.flush()
    return silence


def expire_silence(session: Session, silence_id: int) -> Silence:
    """Ending a silence keeps it in the list of past ones (who muted what, and why)."""
    silence = session.get(Silence, silence_id)
    if silence is None:
        raise NotFound(f"silence {silence_id} does not exist")
    silence.ends_at = min(silence.ends_at, _now())
    session.flush()
    return silence
