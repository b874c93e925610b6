"""The facts a notification carries, gathered from the store when it is recorded: the lag
episode the channel is in and its main cause with that cause's evidence, the channel's state now,
the current lag and its source, the decomposition and verdict, and what changed in the hour before
(parameter changes on the cluster's servers, annotations in scope). Stored with the event, so
every retry sends the same body."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from lagscope.alerts.payloads import (
    CONTEXT_WINDOW_S,
    AlertContext,
    Change,
    EpisodeFacts,
    Note,
    Why,
)
from lagscope.alerts.readings import Subject, at_datetime, finite
from lagscope.alerts.state import Observation
from lagscope.history.cause_views import bounded, cause_of, clean_evidence, current_causes
from lagscope.history.status import lag_source_label, verdict_label
from lagscope.models import AlertRule, Annotation, Channel, Cluster, ParamChange, Sample
from lagscope.models.episodes import Episode, EpisodeCause


def build_context(
    session: Session,
    cluster: Cluster,
    rule: AlertRule,
    subject: Subject,
    status: str,
    obs: Observation,
    starts_at: float,
    key: str,
) -> AlertContext:
    """Of ``cluster`` only its columns and its loaded instances and channels are read, never a
    relationship back up (``instance.cluster``): a poll owner's cluster, detached as its tick
    left it, is used as it is. Merging it into this session would copy the whole graph for one
    event, and its lazy loads would read back what the tick has in memory."""
    instance, channel = subject.instance, subject.channel
    channel = channel or (instance.channels[0] if instance.channels else None)
    sample = (
        session.scalar(
            select(Sample).where(Sample.channel_id == channel.id).order_by(Sample.ts.desc())
        )
        if channel is not None
        else None
    )
    fired_at = at_datetime(starts_at)
    since = fired_at - timedelta(seconds=CONTEXT_WINDOW_S)
    end = max(fired_at, at_datetime(obs.at))
    why = _why(subject)
    return AlertContext(
        rule_id=rule.id,
        rule_name=rule.name,
        metric=rule.metric,
        severity=rule.severity,
        status="resolved" if status == "resolved" else "firing",
        starts_at=starts_at,
        ends_at=obs.at if status == "resolved" else None,
        cluster_id=cluster.id,
        cluster_name=cluster.name,
        instance=instance.name,
        channel=subject.channel.name if subject.channel else "",
        value=finite(obs.value),
        threshold=rule.threshold,
        lag_s=sample.lag_s if sample else None,
        lag_source=lag_source_label(sample.lag_source) if sample else None,
        not_received=_num(sample.not_received) if sample else None,
        received_not_applied=_num(sample.received_not_applied) if sample else None,
        verdict=verdict_label(sample.verdict) if sample else None,
        labels={str(k): str(v) for k, v in (rule.labels or {}).items()},
        changes=_changes(session, cluster, instance.id, since, end),
        notes=_notes(session, cluster.id, instance.id, subject, since, end),
        idempotency_key=key,
        why=why,
        state=_state(subject, why, sample),
        episode=_episode(session, subject.channel, fired_at, end),
    )


def _state(subject: Subject, why: tuple[Why, ...], sample: Sample | None) -> str | None:
    """The channel's state now in words: its strongest current cause, else its verdict."""
    if subject.channel is None:
        return None
    if why:
        return why[0].words
    verdict = verdict_label(sample.verdict) if sample else None
    return verdict.replace("_", " ") if verdict else None


def _episode(
    session: Session, channel: Channel | None, fired_at: datetime, end: datetime
) -> EpisodeFacts | None:
    """The channel's episode around the alert — the newest one that began by ``end`` and had not
    ended before the alert fired (a resolved alert's episode may have ended since) — with the
    evidence of its main cause's newest segment. Two indexed lookups, on notifications only."""
    if channel is None:
        return None
    episode = session.scalar(
        select(Episode)
        .where(
            Episode.channel_id == channel.id,
            Episode.started_at <= end,
            or_(Episode.ended_at.is_(None), Episode.ended_at >= fired_at),
        )
        .order_by(Episode.started_at.desc(), Episode.id.desc())
        .limit(1)
    )
    if episode is None:
        return None
    cause = cause_of(episode.main_cause)
    facts = EpisodeFacts(
        id=episode.id,
        started_at=episode.started_at.timestamp(),
        ended_at=episode.ended_at.timestamp() if episode.ended_at else None,
        peak_lag_s=episode.peak_lag_s,
        cause=cause.label if cause else None,
        words=cause.words if cause else "cause not named yet",
    )
    if cause is None:
        return facts
    segment = session.scalar(
        select(EpisodeCause)
        .where(EpisodeCause.episode_id == episode.id, EpisodeCause.cause == int(cause))
        .order_by(EpisodeCause.started_at.desc(), EpisodeCause.id.desc())
        .limit(1)
    )
    if segment is None:
        return facts
    return replace(
        facts,
        sentence=bounded(segment.sentence or ""),
        action=bounded(segment.action or ""),
        evidence=clean_evidence(segment.evidence),
    )


def _why(subject: Subject) -> tuple[Why, ...]:
    """Why the alert's channel is behind, as its newest poll named it (channel-scoped alerts
    only: an instance-wide alert names no one channel's causes)."""
    if subject.channel is None:
        return ()
    return tuple(
        Why(c.cause, c.words, c.sentence, c.action)
        for c in current_causes(subject.channel.current_causes)
    )


def _num(value: int | None) -> float | None:
    return None if value is None else float(value)


def _changes(
    session: Session, cluster: Cluster, instance_id: int, since: datetime, end: datetime
) -> tuple[Change, ...]:
    """Parameter changes on the cluster's servers; another server's name is prefixed."""
    names = {i.id: i.name for i in cluster.instances}
    rows = session.scalars(
        select(ParamChange)
        .where(
            ParamChange.instance_id.in_(names),
            ParamChange.first_new_at >= since,
            ParamChange.first_new_at <= end,
        )
        .order_by(ParamChange.first_new_at)
    )
    return tuple(
        Change(
            at=r.first_new_at.timestamp(),
            name=r.name if r.instance_id == instance_id else f"{names[r.instance_id]}:{r.name}",
            old=r.old_value,
            new=r.new_value,
        )
        for r in rows
    )


def _notes(
    session: Session,
    cluster_id: int,
    instance_id: int,
    subject: Subject,
    since: datetime,
    end: datetime,
) -> tuple[Note, ...]:
    channel_id = subject.channel.id if subject.channel else None
    rows = session.scalars(
        select(Annotation)
        .where(
            Annotation.cluster_id == cluster_id,
            Annotation.starts_at >= since,
            Annotation.starts_at <= end,
            or_(Annotation.instance_id.is_(None), Annotation.instance_id == instance_id),
            or_(Annotation.channel_id.is_(None), Annotation.channel_id == channel_id),
        )
        .order_by(Annotation.starts_at)
    )
    return tuple(Note(r.starts_at.timestamp(), r.text, tuple(r.tags or ())) for r in rows)
