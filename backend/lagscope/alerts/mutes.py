"""What keeps a notification from going out now: silences in force, and maintenance windows (a
cluster's annotations tagged ``maintenance`` with an end). The first that matches, in id order,
is the one an event names as what suppressed it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from lagscope.alerts.readings import Subject
from lagscope.models import AlertRule, Annotation, Silence

MAINTENANCE_TAG = "maintenance"


@dataclass(frozen=True, slots=True)
class Mutes:
    """Silences and maintenance windows in force now."""

    silences: Sequence[Silence]
    maintenance: Sequence[Annotation]

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
    that matches is the one an event names."""
    silences = session.scalars(
        select(Silence)
        .where(
            Silence.starts_at <= now,
            Silence.ends_at > now,
            or_(Silence.cluster_id.is_(None), Silence.cluster_id.in_(cluster_ids)),
        )
        .order_by(Silence.id)
    ).all()
    ranges = session.scalars(
        select(Annotation)
        .where(
            Annotation.cluster_id.in_(cluster_ids),
            Annotation.starts_at <= now,
            Annotation.ends_at.is_not(None),
            Annotation.ends_at > now,
        )
        .order_by(Annotation.id)
    ).all()
    maintenance = [a for a in ranges if MAINTENANCE_TAG in (a.tags or ())]
    return {
        cid: Mutes(
            [s for s in silences if s.cluster_id in (None, cid)],
            [a for a in maintenance if a.cluster_id == cid],
        )
        for cid in cluster_ids
    }
