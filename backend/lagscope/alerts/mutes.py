"""What keeps a notification from going out now: silences in force, and maintenance windows (a
cluster's annotations tagged ``maintenance`` with an end). The first that matches, in id order,
is the one an event names as what suppressed it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import Table, or_, select
from sqlalchemy.orm import Session

from lagscope.alerts.readings import Subject
from lagscope.models import AlertRule, Annotation, Silence

MAINTENANCE_TAG = "maintenance"


@dataclass(frozen=True, slots=True)
class SilenceScope:
    """A silence in force: what it matches (None or empty: anything)."""

    id: int
    rule_id: int | None
    cluster_id: int | None
    instance_id: int | None
    channel_id: int | None
    region: str | None


@dataclass(frozen=True, slots=True)
class MaintenanceWindow:
    """A cluster's maintenance annotation in force: what it covers (None: the whole cluster)."""

    id: int
    cluster_id: int
    instance_id: int | None
    channel_id: int | None


@dataclass(frozen=True, slots=True)
class Mutes:
    """Silences and maintenance windows in force now."""

    silences: Sequence[SilenceScope]
    maintenance: Sequence[MaintenanceWindow]

    def reason(self, rule: AlertRule, subject: Subject) -> str | None:
        instance, channel = subject.instance, subject.channel
        for s in self.silences:
            if (
                (s.rule_id is None or s.rule_id == rule.id)
                and (s.cluster_id is None or s.cluster_id == instance.cluster_id)
                and (s.instance_id is None or s.instance_id == instance.id)
                and (s.channel_id is None or (channel is not None and s.channel_id == channel.id))
                and (not s.region or s.region == instance.region)
            ):
                return f"silence {s.id}"
        for a in self.maintenance:
            if (a.instance_id is None or a.instance_id == instance.id) and (
                a.channel_id is None or (channel is not None and a.channel_id == channel.id)
            ):
                return f"maintenance {a.id}"
        return None


def active_mutes(session: Session, cluster_id: int, now: datetime) -> Mutes:
    return active_mutes_of(session, [cluster_id], now)[cluster_id]


def active_mutes_of(
    session: Session, cluster_ids: Collection[int], now: datetime
) -> dict[int, Mutes]:
    """The mutes of each cluster, in two queries whatever their number. In id order: the first
    that matches is the one an event names. Plain values read as Core rows: matching needs
    their scopes only, and nothing here may autoflush a judgement's pending rows."""
    db = session.connection()
    s, a = _SILENCES.c, _ANNOTATIONS.c
    silences = [
        SilenceScope(*row)
        for row in db.execute(
            select(s.id, s.rule_id, s.cluster_id, s.instance_id, s.channel_id, s.region)
            .where(
                s.starts_at <= now,
                s.ends_at > now,
                or_(s.cluster_id.is_(None), s.cluster_id.in_(cluster_ids)),
            )
            .order_by(s.id)
        )
    ]
    maintenance = [
        MaintenanceWindow(id_, cluster_id, instance_id, channel_id)
        for id_, cluster_id, instance_id, channel_id, tags in db.execute(
            select(a.id, a.cluster_id, a.instance_id, a.channel_id, a.tags)
            .where(
                a.cluster_id.in_(cluster_ids),
                a.starts_at <= now,
                a.ends_at.is_not(None),
                a.ends_at > now,
            )
            .order_by(a.id)
        )
        if MAINTENANCE_TAG in (tags or ())
    ]
    return {
        cid: Mutes(
            [m for m in silences if m.cluster_id in (None, cid)],
            [m for m in maintenance if m.cluster_id == cid],
        )
        for cid in cluster_ids
    }


_SILENCES = cast(Table, Silence.__table__)
_ANNOTATIONS = cast(Table, Annotation.__table__)
