"""One rule × subject advanced one step on its newest reading (:func:`advance`): the state row
moved, the event recorded with its notification's context, and the deliveries queued, or a
firing alert re-sent to Alertmanager's API before its endsAt lapses.

The state machine itself is pure (:mod:`lagscope.alerts.state`); this is where its steps are
written to the store, in the caller's transaction.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from lagscope.alerts import state as sm
from lagscope.alerts.context import build_context
from lagscope.alerts.mutes import Mutes
from lagscope.alerts.payloads import AM_RESEND_S, AM_VALID_FOR_S, context_to_json
from lagscope.alerts.readings import Subject, at_datetime, finite
from lagscope.models import AlertEvent, AlertRule, AlertState, Cluster, Delivery, WebhookTarget
from lagscope.models.loaded import assign


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


def advance(
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
    moved = {
        "phase": new.phase.value,
        "breaching": new.breaching,
        "since": _opt(new.since),
        "last_breach_at": _opt(new.last_breach_at),
        "last_notified_at": _opt(new.last_notified_at),
        "value": finite(obs.value),
        "evaluated_at": at_datetime(obs.at),
    }
    if new.phase is not sm.Phase.FIRING:
        moved.update(notified=False, refreshed_at=None)
    assign(row, moved)
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
