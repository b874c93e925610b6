"""After a tick, advance every rule × subject of a cluster one step (:func:`judge`).

Two ways in: :func:`evaluate_cluster` reads the cluster and its newest samples back from the
store (the Celery path); :func:`~lagscope.alerts.tick_figures.evaluate_ticks` judges a batch of
ticks on the figures they just computed (the poll owner's). Both judge alike.

The state, the event and its deliveries are written in the caller's one transaction, and the
state row is updated compare-and-set on its ``version`` (SQLAlchemy's version counter issues
``UPDATE … WHERE id = :id AND version = :seen``): two workers judging the same subject at once
cannot both notify, and a worker killed before commit leaves nothing half-sent. A lost race is
:class:`~lagscope.errors.Conflict`; the caller judges again in a fresh transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from sqlalchemy import Select, delete, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, joinedload
from sqlalchemy.orm.exc import StaleDataError

from lagscope.alerts import state as sm
from lagscope.alerts.context import build_context
from lagscope.alerts.payloads import AM_RESEND_S, AM_VALID_FOR_S, context_to_json
from lagscope.alerts.readings import (
    CHANNEL_METRICS,
    WATCHDOG_METRICS,
    SampleFields,
    Subject,
    at_datetime,
    finite,
    instance_observation,
    sample_observation,
    spec_for,
    subjects,
)
from lagscope.alerts.state_writes import LoadedStates
from lagscope.errors import Conflict
from lagscope.history.status import latest_instance_samples, latest_samples
from lagscope.models import (
    AlertEvent,
    AlertRule,
    AlertState,
    Annotation,
    Cluster,
    Delivery,
    Instance,
    Silence,
    WebhookTarget,
)

MAINTENANCE_TAG = "maintenance"
StateKey = tuple[int, int, str]  # cluster id, rule id, subject


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


@dataclass(frozen=True, slots=True)
class Newest:
    """A cluster with its newest readings, as its rules look at them: the samples by channel id,
    and by instance id whether the newest instance sample found the server reachable."""

    cluster: Cluster
    samples: Mapping[int, SampleFields]
    reachable: Mapping[int, bool]


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


def tick_rules_query(cluster_ids: Collection[int] | None = None) -> Select[AlertRule]:
    """The enabled rules judged after a tick (those of every cluster, or that may apply to
    these), by id."""
    query = select(AlertRule).where(
        AlertRule.enabled.is_(True),
        AlertRule.metric.not_in(WATCHDOG_METRICS),  # judged without a tick
    )
    if cluster_ids is not None:
        query = query.where(
            or_(AlertRule.cluster_id.is_(None), AlertRule.cluster_id.in_(cluster_ids))
        )
    return query.order_by(AlertRule.id)


def judged_after_tick(rules: Sequence[AlertRule]) -> list[AlertRule]:
    """Of rules a caller kept, those :func:`tick_rules_query` would give, in its order."""
    kept = [r for r in rules if r.enabled and r.metric not in WATCHDOG_METRICS]
    return sorted(kept, key=lambda r: r.id)


def evaluate_cluster(session: Session, cluster_id: int, now_s: float) -> list[int]:
    """Judge the cluster's newest readings, read back from the store; returns the ids of the
    deliveries to send."""
    rules = session.scalars(tick_rules_query([cluster_id])).all()
    if not rules:
        return []
    cluster = (
        session.execute(
            select(Cluster)
            .where(Cluster.id == cluster_id)
            .options(joinedload(Cluster.instances).joinedload(Instance.channels))
        )
        .unique()
        .scalar_one_or_none()
    )
    if cluster is None:
        return []
    samples = latest_samples(
        session,
        [c.id for i in cluster.instances for c in i.channels if c.gone_at is None],
    )
    polled = latest_instance_samples(session, [i.id for i in cluster.instances])
    reachable = {iid: row.reachable for iid, row in polled.items()}
    return judge(session, [Newest(cluster, samples, reachable)], rules, now_s)


def judge(
    session: Session, clusters: Sequence[Newest], rules: Sequence[AlertRule], now_s: float
) -> list[int]:
    """Advance every rule × subject of each cluster one step on its newest readings, the
    states in one query and the mutes in two; returns the ids of the deliveries to send.
    ``rules``: enabled, tick-judged, in id order (a rule of another cluster is passed over)."""
    cluster_ids = [c.cluster.id for c in clusters]
    rows = session.scalars(select(AlertState).where(AlertState.cluster_id.in_(cluster_ids))).all()
    states: dict[StateKey, AlertState] = {(s.cluster_id, s.rule_id, s.subject): s for s in rows}
    loaded = LoadedStates(session, rows)  # written below, not flushed
    mutes = active_mutes_of(session, cluster_ids, at_datetime(now_s))
    deliveries: list[Delivery] = []
    try:
        for newest in clusters:
            cluster = newest.cluster
            for rule in rules:
                if rule.cluster_id not in (None, cluster.id):
                    continue
                for subject in subjects(rule, cluster.instances):
                    spec = spec_for(
                        rule, subject.instance.id, subject.channel.id if subject.channel else None
                    )
                    obs = _observe(session, rule, subject, newest) if spec else None
                    if spec is None or obs is None:
                        continue
                    row = states.get((cluster.id, rule.id, subject.key))
                    deliveries += _advance(
                        session, cluster, rule, spec, subject, obs, row, mutes[cluster.id], now_s
                    )
        session.flush()
        loaded.write(session)
    except (StaleDataError, IntegrityError) as exc:
        raise Conflict("another worker judged the same alerts at the same time") from exc
    return [d.id for d in deliveries]


def _observe(
    session: Session, rule: AlertRule, subject: Subject, newest: Newest
) -> sm.Observation | None:
    if rule.metric in CHANNEL_METRICS:
        assert subject.channel is not None
        sample = newest.samples.get(subject.channel.id)
        if sample is None:
            return None
        return sample_observation(rule.metric, sample, subject.channel)
    reachable = newest.reachable.get(subject.instance.id)
    return instance_observation(session, rule, newest.cluster, subject.instance, reachable)


def _dc(row: AlertState | None) -> sm.AlertState:
    if row is None:
        return sm.AlertState()
    return sm.AlertState(
        phase=sm.Phase(row.phase),
        since=row.since.timestamp() if row.since else None,
        last_breach_at=row.last_breach_at.timestamp() if row.last_breach_at else None,
        last_notified_at=row.last_notified_at.timestamp() if row.last_notified_at else None,
        breaching=row.breaching,
    )


def _opt(ts: float | None) -> datetime | None:
    return at_datetime(ts) if ts is not None else None


def _advance(
    session: Session,
    cluster: Cluster,
    rule: AlertRule,
    spec: sm.RuleSpec,
    subject: Subject,
    obs: sm.Observation,
    row: AlertState | None,
    mutes: Mutes,
    now_s: float | None = None,
) -> list[Delivery]:
    """``now_s``: the evaluation's clock (default: the reading's time), for Alertmanager
    refreshes, which go on while the alert fires even when no new reading comes (a replica
    that cannot be polled keeps its firing lag alert firing, in Lagscope and in Alertmanager)."""
    now = obs.at if now_s is None else max(now_s, obs.at)
    if row is not None and row.evaluated_at is not None and obs.at <= row.evaluated_at.timestamp():
        # This reading was judged already (a redelivered or overlapping tick, or no new one).
        if row.phase == sm.Phase.FIRING.value and row.notified:
            return _refresh(session, cluster, rule, subject, obs, row, now)
        return []
    new, note = sm.step(spec, _dc(row), obs)
    if row is None:
        row = AlertState(
            rule_id=rule.id,
            subject=subject.key,
            cluster_id=cluster.id,
            instance_id=subject.instance.id,
            channel_id=subject.channel.id if subject.channel else None,
            notified=False,
            version=0,
        )
        session.add(row)
    was_notified = row.notified
    muted = mutes.reason(rule, subject)
    kind = _kind(note, new, was_notified, muted)
    row.phase, row.breaching = new.phase.value, new.breaching
    row.since, row.last_breach_at = _opt(new.since), _opt(new.last_breach_at)
    row.last_notified_at = _opt(new.last_notified_at)
    row.value, row.evaluated_at = finite(obs.value), at_datetime(obs.at)
    if new.phase is not sm.Phase.FIRING:
        row.notified = False
        row.refreshed_at = None
    if kind is None:
        if new.phase is sm.Phase.FIRING and row.notified:
            return _refresh(session, cluster, rule, subject, obs, row, now)
        return []
    if kind in ("firing", "repeat") and muted is None:
        row.notified = True
        row.refreshed_at = at_datetime(obs.at)
    starts_at = note.starts_at if note else (new.since or obs.at)
    return _record(session, cluster, rule, subject, kind, obs, starts_at, muted, was_notified)


def _kind(
    note: sm.Notification | None, new: sm.AlertState, notified: bool, muted: str | None
) -> str | None:
    """What to record: a firing held back by a silence is sent when the silence ends (if still
    firing); a resolved goes out only after a firing did (nobody waits for its end otherwise)."""
    if note is None:
        return "firing" if new.phase is sm.Phase.FIRING and not notified and not muted else None
    if note.kind == "repeat":
        return "repeat" if notified else "firing"
    if note.kind == "resolved":
        return "resolved" if notified else None
    return "firing"


def _record(
    session: Session,
    cluster: Cluster,
    rule: AlertRule,
    subject: Subject,
    kind: str,
    obs: sm.Observation,
    starts_at: float,
    muted: str | None,
    was_notified: bool,
) -> list[Delivery]:
    at = at_datetime(obs.at)
    key = f"lagscope-{rule.id}-{subject.key}-{kind}-{round(obs.at * 1e6)}"
    ctx = build_context(session, cluster, rule, subject, kind, obs, starts_at, key)
    if kind != "resolved":
        ctx = replace(ctx, valid_until=obs.at + AM_VALID_FOR_S)
    suppressed = muted if kind != "resolved" else None
    event = AlertEvent(
        rule_id=rule.id,
        cluster_id=cluster.id,
        instance_id=subject.instance.id,
        channel_id=subject.channel.id if subject.channel else None,
        kind=kind,
        at=at,
        starts_at=at_datetime(starts_at),
        value=finite(obs.value),
        suppressed_by=suppressed,
        idempotency_key=key,
        context=context_to_json(ctx),
    )
    session.add(event)
    session.flush()  # the event's id for its deliveries (and the state's compare-and-set)
    if suppressed is not None or (kind == "resolved" and not was_notified):
        return []
    targets = session.scalars(
        select(WebhookTarget).where(
            WebhookTarget.id.in_(rule.target_ids or []), WebhookTarget.enabled.is_(True)
        )
    ).all()
    deliveries = [
        Delivery(
            event_id=event.id,
            target_id=t.id,
            kind=kind,
            idempotency_key=key,
            context=event.context,
            status="pending",
            attempts=0,
            next_attempt_at=at_datetime(obs.at),
            created_at=datetime.now(UTC),
            version=0,
        )
        for t in targets
    ]
    session.add_all(deliveries)
    return deliveries


def _refresh(
    session: Session,
    cluster: Cluster,
    rule: AlertRule,
    subject: Subject,
    obs: sm.Observation,
    row: AlertState,
    now_s: float,
) -> list[Delivery]:
    """Re-send a notified firing alert to the rule's Alertmanager API targets every
    ``AM_RESEND_S`` (Alertmanager resolves an alert whose endsAt lapses). No event is recorded:
    nothing happened. Refreshes are not retried, and only the newest finished one per alert
    and target is kept in the delivery log."""
    last = row.refreshed_at or row.since
    if last is not None and now_s - last.timestamp() < AM_RESEND_S:
        return []
    targets = session.scalars(
        select(WebhookTarget).where(
            WebhookTarget.id.in_(rule.target_ids or []),
            WebhookTarget.enabled.is_(True),
            WebhookTarget.kind == "alertmanager_api",
        )
    ).all()
    if not targets:
        return []
    row.refreshed_at = at_datetime(now_s)
    starts = row.since.timestamp() if row.since else obs.at
    prefix = f"lagscope-{rule.id}-{subject.key}-refresh-"
    key = f"{prefix}{round(now_s * 1e6)}"
    ctx = build_context(session, cluster, rule, subject, "firing", obs, starts, key)
    context = context_to_json(replace(ctx, valid_until=now_s + AM_VALID_FOR_S))
    session.execute(
        delete(Delivery)
        .where(
            Delivery.kind == "refresh",
            Delivery.status != "pending",
            Delivery.target_id.in_([t.id for t in targets]),
            Delivery.idempotency_key.startswith(prefix, autoescape=True),
        )
        .execution_options(synchronize_session=False)
    )
    deliveries = [
        Delivery(
            event_id=None,
            target_id=t.id,
            kind="refresh",
            idempotency_key=key,
            context=context,
            status="pending",
            attempts=0,
            next_attempt_at=at_datetime(now_s),
            created_at=datetime.now(UTC),
            version=0,
        )
        for t in targets
    ]
    session.add_all(deliveries)
    return deliveries
