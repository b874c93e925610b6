"""Lag episodes and their causes as the API serves them (docs/causes.md, "Lag episodes").

Read-only over what ingest stored: ``episodes`` / ``episode_causes`` rows; a stored cause becomes
its label, words and cleaned evidence in :mod:`lagscope.history.cause_views`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session

from lagscope.analysis.causes.episodes import EPISODE_LAG_S
from lagscope.errors import InvalidInput, NotFound
from lagscope.history.cause_views import CauseRef as CauseRef
from lagscope.history.cause_views import (
    CauseSegment,
    bounded,
    cause_of,
    cause_ref,
    segment,
    segments,
)
from lagscope.history.cause_views import clean_evidence as clean_evidence
from lagscope.history.cause_views import current_causes as current_causes
from lagscope.inventory.instances import get_cluster
from lagscope.models import Channel, Instance, ParamChange, Sample
from lagscope.models.episodes import Episode, EpisodeCause
from lagscope.models.series import SampleRollup1m

# Bounds on one answer: a year-long window of a flapping replica must not become a 50 MB page.
MAX_EPISODES = 1000
MAX_SEGMENTS = 5000
MAX_PARAM_CHANGES = 200


@dataclass(frozen=True, slots=True)
class ParamChangeView:
    change_id: int
    instance: str
    param: str
    old_value: str | None
    new_value: str | None
    at: datetime


@dataclass(frozen=True, slots=True)
class EpisodeSummary:
    id: int
    cluster_id: int
    channel_id: int
    instance_id: int
    replica: str
    region: str
    channel: str
    started_at: datetime
    ended_at: datetime | None
    duration_s: float
    peak_lag_s: float | None
    peak_at: datetime | None
    main_cause: CauseRef | None
    ended_how: str
    ended_by: ParamChangeView | None


@dataclass(frozen=True, slots=True)
class OtherChannel:
    replica: str
    channel: str
    peak_lag_s: float | None
    lagged: bool


@dataclass(frozen=True, slots=True)
class EpisodeDetail(EpisodeSummary):
    causes: list[CauseSegment] = field(default_factory=list)
    others: list[OtherChannel] = field(default_factory=list)
    param_changes: list[ParamChangeView] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ChannelCauses:
    channel_id: int
    instance_id: int
    replica: str
    channel: str
    segments: list[CauseSegment]


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _change_view(change: ParamChange, instance_name: str) -> ParamChangeView:
    return ParamChangeView(
        change.id,
        instance_name,
        change.name,
        None if change.old_value is None else bounded(change.old_value),
        None if change.new_value is None else bounded(change.new_value),
        change.first_new_at,
    )


def _summary_query() -> Any:
    return (
        select(Episode, Channel, Instance, ParamChange, _changed_on().label("changed_on"))
        .join(Channel, Channel.id == Episode.channel_id)
        .join(Instance, Instance.id == Channel.instance_id)
        .outerjoin(ParamChange, ParamChange.id == Episode.ended_by_change_id)
    )


def _changed_on() -> Any:
    # The instance the ending change was made on (a step on the source can end a replica's
    # episode): a correlated lookup, one row per episode at most.
    other = select(Instance.name).where(Instance.id == ParamChange.instance_id)
    return other.correlate(ParamChange).scalar_subquery()


def _summary(row: Any, now: datetime) -> EpisodeSummary:
    episode, channel, instance, change, changed_on = row
    return EpisodeSummary(**_summary_fields(episode, channel, instance, change, changed_on, now))


def _summary_fields(
    episode: Episode,
    channel: Channel,
    instance: Instance,
    change: ParamChange | None,
    changed_on: str | None,
    now: datetime,
) -> dict[str, Any]:
    end = episode.ended_at or now
    if episode.ended_at is None:
        ended_how = "ongoing"
    elif episode.end_reason in ("by_itself", "after_step", "replica_removed"):
        ended_how = episode.end_reason
    else:
        ended_how = "by_itself"
    return {
        "id": episode.id,
        "cluster_id": episode.cluster_id,
        "channel_id": channel.id,
        "instance_id": instance.id,
        "replica": instance.name,
        "region": instance.region,
        "channel": channel.name,
        "started_at": episode.started_at,
        "ended_at": episode.ended_at,
        "duration_s": max(0.0, (_utc(end) - _utc(episode.started_at)).total_seconds()),
        "peak_lag_s": episode.peak_lag_s,
        "peak_at": episode.peak_at,
        "main_cause": cause_ref(cause_of(episode.main_cause)),
        "ended_how": ended_how,
        "ended_by": _change_view(change, changed_on or "") if change is not None else None,
    }


def list_episodes(
    session: Session,
    cluster_id: int,
    start: datetime,
    end: datetime,
    now: datetime,
    channel_id: int | None = None,
    limit: int = 100,
) -> list[EpisodeSummary]:
    """The cluster's episodes that overlap ``[start, end)``, newest first (at most ``limit``)."""
    get_cluster(session, cluster_id)
    if channel_id is not None:
        owner = session.scalar(
            select(Instance.cluster_id)
            .join(Channel, Channel.instance_id == Instance.id)
            .where(Channel.id == channel_id)
        )
        if owner != cluster_id:
            raise InvalidInput(f"channel_id: channel {channel_id} is not in cluster {cluster_id}")
    query = _summary_query().where(
        Episode.cluster_id == cluster_id,
        Episode.started_at < end,
        or_(Episode.ended_at.is_(None), Episode.ended_at >= start),
    )
    if channel_id is not None:
        query = query.where(Episode.channel_id == channel_id)
    query = query.order_by(Episode.started_at.desc(), Episode.id.desc()).limit(
        min(limit, MAX_EPISODES)
    )
    return [_summary(row, now) for row in session.execute(query)]


def get_episode(
    session: Session, episode_id: int, now: datetime, full_text: bool = False
) -> EpisodeDetail:
    """``full_text``: statements' full text where stored (editors); else digests only."""
    row = session.execute(_summary_query().where(Episode.id == episode_id)).first()
    if row is None:
        raise NotFound(f"episode {episode_id} does not exist")
    episode, channel, instance, change, changed_on = row
    fields = _summary_fields(episode, channel, instance, change, changed_on, now)
    end = episode.ended_at or now
    causes = session.scalars(
        select(EpisodeCause)
        .where(EpisodeCause.episode_id == episode.id)
        .order_by(EpisodeCause.started_at, EpisodeCause.id)
        .limit(MAX_SEGMENTS)
    )
    changes = session.execute(
        select(ParamChange, Instance.name)
        .join(Instance, Instance.id == ParamChange.instance_id)
        .where(
            Instance.cluster_id == episode.cluster_id,
            ParamChange.first_new_at >= episode.started_at,
            ParamChange.first_new_at <= end,
        )
        .order_by(ParamChange.first_new_at, ParamChange.id)
        .limit(MAX_PARAM_CHANGES)
    )
    return EpisodeDetail(
        **fields,
        causes=segments(causes, full_text),
        others=_others(session, episode, end),
        param_changes=[_change_view(c, name) for c, name in changes],
    )


def _others(session: Session, episode: Episode, end: datetime) -> list[OtherChannel]:
    """The cluster's other replica channels and their peak lag during the episode: raw samples
    where kept, else the 1-minute rollups' maxima (one grouped query each)."""
    others = session.execute(
        select(Channel.id, Channel.name, Instance.name)
        .join(Instance, Instance.id == Channel.instance_id)
        .where(
            Instance.cluster_id == episode.cluster_id,
            Channel.id != episode.channel_id,
            or_(Channel.gone_at.is_(None), Channel.gone_at >= episode.started_at),
        )
        .order_by(Instance.name, Channel.name)
    ).all()
    ids = [cid for cid, _, _ in others]
    peaks: dict[int, float | None] = {}
    if ids:
        raw = session.execute(
            select(Sample.channel_id, func.max(Sample.lag_s))
            .where(Sample.channel_id.in_(ids), Sample.ts >= episode.started_at, Sample.ts <= end)
            .group_by(Sample.channel_id)
        )
        peaks = {cid: peak for cid, peak in raw}
        missing = [cid for cid in ids if peaks.get(cid) is None]
        if missing:
            rolled = session.execute(
                select(SampleRollup1m.channel_id, func.max(SampleRollup1m.lag_max))
                .where(
                    SampleRollup1m.channel_id.in_(missing),
                    and_(SampleRollup1m.bucket >= episode.started_at, SampleRollup1m.bucket <= end),
                )
                .group_by(SampleRollup1m.channel_id)
            )
            peaks.update({cid: peak for cid, peak in rolled})
    result = []
    for cid, channel, replica in others:
        peak = peaks.get(cid)
        peak = float(peak) if peak is not None else None
        lagged = peak is not None and peak >= EPISODE_LAG_S
        result.append(OtherChannel(replica, channel, peak, lagged))
    return result


def cluster_causes(
    session: Session, cluster_id: int, start: datetime, end: datetime, full_text: bool = False
) -> list[ChannelCauses]:
    """Per channel, the cause segments overlapping ``[start, end)`` in time order (the why
    strip). At most :data:`MAX_SEGMENTS`, the newest kept when there are more."""
    get_cluster(session, cluster_id)
    rows = session.execute(
        select(EpisodeCause, Channel.id, Channel.name, Instance.id, Instance.name)
        .join(Episode, Episode.id == EpisodeCause.episode_id)
        .join(Channel, Channel.id == Episode.channel_id)
        .join(Instance, Instance.id == Channel.instance_id)
        .where(
            Episode.cluster_id == cluster_id,
            EpisodeCause.started_at < end,
            or_(EpisodeCause.ended_at.is_(None), EpisodeCause.ended_at >= start),
        )
        .order_by(EpisodeCause.started_at.desc(), EpisodeCause.id.desc())
        .limit(MAX_SEGMENTS)
    ).all()
    channels: dict[int, ChannelCauses] = {}
    for cause_row, channel_id, channel, instance_id, replica in reversed(rows):
        found = segment(cause_row, full_text)
        if found is None:
            continue
        entry = channels.setdefault(
            channel_id, ChannelCauses(channel_id, instance_id, replica, channel, [])
        )
        entry.segments.append(found)
    return sorted(channels.values(), key=lambda c: (c.replica, c.channel))
