"""``preview``: when a rule would have fired over the stored samples of the last day.

The same state machine as the live evaluation, replayed over each channel's raw samples from a
clean "ok" (silences and maintenance are ignored: the question is what the rule sees).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from lagscope.alerts import state as sm
from lagscope.alerts.readings import (
    CHANNEL_METRICS,
    finite,
    sample_observation,
    spec_for,
    subjects,
)
from lagscope.errors import InvalidInput
from lagscope.models import AlertRule, Channel, Cluster, Instance, Sample

PREVIEW_WINDOW = timedelta(hours=24)
MAX_INCIDENTS = 200
_COLUMNS = (
    Sample.ts,
    Sample.verdict,
    Sample.lag_s,
    Sample.trx_behind,
    Sample.not_received,
    Sample.received_not_applied,
    Sample.io_state,
    Sample.sql_running,
    Sample.disagreement,
    Sample.apply_rate,
    Sample.source_rate,
)


@dataclass(frozen=True, slots=True)
class Incident:
    cluster_id: int
    instance_id: int
    instance: str
    channel_id: int
    channel: str
    fired_at: datetime
    resolved_at: datetime | None
    peak: float | None


def preview(session: Session, rule: AlertRule, now: datetime) -> list[Incident]:
    if rule.metric not in CHANNEL_METRICS:
        raise InvalidInput(
            f"a preview replays stored channel samples; {rule.metric} is read per server "
            f"and is not kept per sample (previewable: {', '.join(CHANNEL_METRICS)})"
        )
    query = select(Cluster).options(selectinload(Cluster.instances).selectinload(Instance.channels))
    if rule.cluster_id is not None:
        query = query.where(Cluster.id == rule.cluster_id)
    found: list[Incident] = []
    for cluster in session.scalars(query):
        for subject in subjects(rule, cluster.instances):
            spec = spec_for(
                rule, subject.instance.id, subject.channel.id if subject.channel else None
            )
            if spec is None or subject.channel is None:
                continue
            found += _replay(
                session, rule, spec, cluster.id, subject.instance, subject.channel, now
            )
    found.sort(key=lambda i: i.fired_at)
    return found[:MAX_INCIDENTS]


def _replay(
    session: Session,
    rule: AlertRule,
    spec: sm.RuleSpec,
    cluster_id: int,
    instance: Instance,
    channel: Channel,
    now: datetime,
) -> list[Incident]:
    rows = session.execute(
        select(*_COLUMNS)
        .where(Sample.channel_id == channel.id, Sample.ts >= now - PREVIEW_WINDOW)
        .order_by(Sample.ts)
    )
    state = sm.AlertState()
    incidents: list[Incident] = []
    fired: datetime | None = None
    peak: float | None = None
    for row in rows:
        # A row of the sample's columns reads like a Sample (attribute access, same types).
        obs = sample_observation(rule.metric, row, channel)
        state, note = sm.step(spec, state, obs)
        value = finite(obs.value)
        if fired is not None and value is not None:
            peak = value if peak is None else max(peak, value)
        if note is None or note.kind == "repeat":
            continue
        if note.kind == "firing":
            fired, peak = row.ts, value
            continue
        incidents.append(
            Incident(
                cluster_id,
                instance.id,
                instance.name,
                channel.id,
                channel.name,
                fired or row.ts,
                row.ts,
                peak,
            )
        )
        fired, peak = None, None
    if fired is not None:
        incidents.append(
            Incident(
                cluster_id, instance.id, instance.name, channel.id, channel.name, fired, None, peak
            )
        )
    return incidents
