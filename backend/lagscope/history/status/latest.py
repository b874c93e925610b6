"""The newest readings every live view starts from: each current channel with its newest sample,
each instance's newest poll, and when a reading is stale (:data:`STALE_POLLS` intervals old: the
worker or beat is not polling).

The newest sample is found with ``ts = (SELECT max(ts) … WHERE channel_id = channel.id)``: one
query for all channels, each max a seek on the ``(channel_id, ts)`` key. ``Channel.last_sample_at``
is not used for that: the recorder keeps it at the last *reachable* poll (it anchors the apply
rate across a gap), so during an outage it lags the newest sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session, aliased
from sqlalchemy.sql.selectable import ScalarSelect

from lagscope.models import Channel, Cluster, Instance, InstanceSample, Sample

# A reading older than this many poll intervals is stale: the worker or beat is not polling.
# Three, not one: a tick may expire under load and the next one still arrives in time.
STALE_POLLS = 3


@dataclass(frozen=True, slots=True)
class ChannelRow:
    """A current channel, its instance and cluster, and its newest sample (None before any)."""

    cluster: Cluster
    instance: Instance
    channel: Channel
    sample: Sample | None


def latest_channel_rows(session: Session, cluster_ids: Sequence[int]) -> list[ChannelRow]:
    """Every channel not gone, of the given clusters, with its newest sample: one query."""
    latest_ts = _newest_sample_ts()
    rows = session.execute(
        select(Cluster, Instance, Channel, Sample)
        .join(Instance, Instance.cluster_id == Cluster.id)
        .join(Channel, Channel.instance_id == Instance.id)
        .outerjoin(Sample, and_(Sample.channel_id == Channel.id, Sample.ts == latest_ts))
        .where(Cluster.id.in_(cluster_ids), Channel.gone_at.is_(None))
        .order_by(Cluster.id, Instance.id, Channel.name)
    )
    return [ChannelRow(*row) for row in rows]


def _newest_sample_ts() -> ScalarSelect[datetime]:
    """The newest sample time of the enclosing query's channel (a correlated subquery)."""
    newest = aliased(Sample)
    return (
        select(func.max(newest.ts))
        .where(newest.channel_id == Channel.id)
        .correlate(Channel)
        .scalar_subquery()
    )


def latest_samples(session: Session, channel_ids: Sequence[int]) -> dict[int, Sample]:
    """The newest sample of each channel (the alert evaluation has the channels already)."""
    newest = aliased(Sample)
    latest_ts = (
        select(func.max(newest.ts)).where(newest.channel_id == Sample.channel_id).scalar_subquery()
    )
    rows = session.scalars(
        select(Sample).where(Sample.channel_id.in_(channel_ids), Sample.ts == latest_ts)
    )
    return {row.channel_id: row for row in rows}


def latest_instance_samples(
    session: Session, instance_ids: Sequence[int]
) -> dict[int, InstanceSample]:
    """The newest per-instance reading (reachability, round trip) of each instance."""
    newest = aliased(InstanceSample)
    latest_ts = (
        select(func.max(newest.ts))
        .where(newest.instance_id == InstanceSample.instance_id)
        .scalar_subquery()
    )
    rows = session.scalars(
        select(InstanceSample).where(
            InstanceSample.instance_id.in_(instance_ids), InstanceSample.ts == latest_ts
        )
    )
    return {row.instance_id: row for row in rows}


def is_stale(at: datetime | None, poll_interval_s: float, now: datetime) -> bool:
    return at is None or now - at > timedelta(seconds=STALE_POLLS * poll_interval_s)
