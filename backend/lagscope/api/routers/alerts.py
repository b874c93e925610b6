"""Routes: alert rules (with a 24 h preview), firing alerts and their history, silences, webhook
targets (secret and URL write-only, send-test) and the delivery log (its network detail for
admins). Viewers read; editors write."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query, Response

from lagscope.alerts import activity as alert_activity
from lagscope.alerts import delivery as alert_delivery
from lagscope.alerts import rules as alert_rules
from lagscope.alerts import silences as alert_silences
from lagscope.alerts import targets as alert_targets
from lagscope.alerts.delivery_policy import public_error, redacted_url, url_fingerprint
from lagscope.alerts.payloads import context_from_json, dashboard_url, summary
from lagscope.alerts.preview import PREVIEW_WINDOW, preview
from lagscope.api.deps import BoxDep, EditorDep, PrincipalDep, SessionDep, SettingsDep
from lagscope.api.schemas.alerts import (
    AttemptOut,
    DeliveryOut,
    EventOut,
    FiringOut,
    PreviewIncident,
    PreviewOut,
    RuleIn,
    RuleOut,
    RulePatch,
    SilenceIn,
    SilenceOut,
    WebhookIn,
    WebhookOut,
    WebhookPatch,
)
from lagscope.api.schemas.common import PathId, QueryId
from lagscope.config import Settings
from lagscope.models import AlertEvent, AlertRule, Delivery, DeliveryAttempt, Silence, WebhookTarget

router = APIRouter(prefix="/alerts", tags=["alerts"])
Limit = Annotated[int, Query(ge=1, le=1000)]


@router.get("/rules", response_model=list[RuleOut])
def list_alert_rules(_: PrincipalDep, session: SessionDep) -> list[AlertRule]:
    return alert_rules.list_rules(session)


@router.post("/rules", response_model=RuleOut, status_code=201)
def create_alert_rule(body: RuleIn, _: EditorDep, session: SessionDep) -> AlertRule:
    return alert_rules.create_rule(session, body.model_dump())


@router.post("/rules/preview", response_model=PreviewOut)
def preview_alert_rule(body: RuleIn, _: PrincipalDep, session: SessionDep) -> PreviewOut:
    """When this (unsaved) rule would have fired over the stored samples of the last 24 h."""
    return _preview(session, alert_rules.rule_from(body.model_dump()))


@router.get("/rules/{rule_id}", response_model=RuleOut)
def get_alert_rule(rule_id: PathId, _: PrincipalDep, session: SessionDep) -> AlertRule:
    return alert_rules.get_rule(session, rule_id)


@router.get("/rules/{rule_id}/preview", response_model=PreviewOut)
def preview_saved_alert_rule(rule_id: PathId, _: PrincipalDep, session: SessionDep) -> PreviewOut:
    return _preview(session, alert_rules.get_rule(session, rule_id))


@router.post("/rules/{rule_id}/preview", response_model=PreviewOut)
def preview_edited_alert_rule(
    rule_id: PathId, body: RulePatch, _: PrincipalDep, session: SessionDep
) -> PreviewOut:
    """When the saved rule with these changes (not saved) would have fired over the last 24 h:
    the edit form's "would have fired at …" before saving."""
    rule = alert_rules.get_rule(session, rule_id)
    return _preview(session, alert_rules.edited(rule, body.model_dump(exclude_unset=True)))


@router.patch("/rules/{rule_id}", response_model=RuleOut)
def update_alert_rule(
    rule_id: PathId, body: RulePatch, principal: EditorDep, session: SessionDep
) -> AlertRule:
    """Switching a rule off, or pointing it at something else, sends "resolved" once for what
    it had notified as firing (409 if a worker judged those alerts at the same moment)."""
    rule = alert_rules.get_rule(session, rule_id)
    changes = body.model_dump(exclude_unset=True)
    return alert_rules.update_rule(session, rule, changes, principal.username)


@router.delete("/rules/{rule_id}", status_code=204, response_class=Response)
def delete_alert_rule(rule_id: PathId, principal: EditorDep, session: SessionDep) -> Response:
    """What the rule had notified as firing is sent "resolved" once, then it is gone."""
    rule = alert_rules.get_rule(session, rule_id)
    alert_rules.delete_rule(session, rule, principal.username)
    return Response(status_code=204)


def _preview(session: SessionDep, rule: AlertRule) -> PreviewOut:
    end = datetime.now(UTC)
    incidents = preview(session, rule, end)
    return PreviewOut(
        start=end - PREVIEW_WINDOW,
        end=end,
        incidents=[PreviewIncident.model_validate(i) for i in incidents],
    )


@router.get("/firing", response_model=list[FiringOut])
def list_firing_alerts(
    _: PrincipalDep, session: SessionDep, cluster_id: QueryId | None = None
) -> list[FiringOut]:
    """Alerts pending or firing now."""
    return [
        FiringOut(
            rule_id=rule.id,
            rule_name=rule.name,
            metric=rule.metric,
            severity=rule.severity,
            cluster_id=state.cluster_id,
            instance_id=state.instance_id,
            channel_id=state.channel_id,
            phase=state.phase,
            since=state.since,
            value=state.value,
            notified=state.notified,
        )
        for state, rule in alert_activity.firing(session, cluster_id)
    ]


@router.get("/events", response_model=list[EventOut])
def list_alert_events(
    _: PrincipalDep,
    session: SessionDep,
    settings: SettingsDep,
    cluster_id: QueryId | None = None,
    rule_id: QueryId | None = None,
    before: datetime | None = None,
    limit: Limit = 100,
) -> list[EventOut]:
    """Fired, repeated and resolved notifications, newest first (``before`` pages back)."""
    events = alert_activity.list_events(session, cluster_id, rule_id, before, limit)
    return [_event(e, settings) for e in events]


def _event(event: AlertEvent, settings: Settings) -> EventOut:
    ctx = context_from_json(event.context)
    return EventOut(
        id=event.id,
        rule_id=event.rule_id,
        cluster_id=event.cluster_id,
        instance_id=event.instance_id,
        channel_id=event.channel_id,
        kind=event.kind,
        at=event.at,
        starts_at=event.starts_at,
        value=event.value,
        suppressed_by=event.suppressed_by,
        idempotency_key=event.idempotency_key,
        summary=summary(ctx),
        explorer_url=dashboard_url(settings.external_url, ctx),
    )


@router.get("/silences", response_model=list[SilenceOut])
def list_silences(
    _: PrincipalDep, session: SessionDep, include_expired: bool = False
) -> list[Silence]:
    return alert_silences.list_silences(session, include_expired)


@router.post("/silences", response_model=SilenceOut, status_code=201)
def create_silence(body: SilenceIn, principal: EditorDep, session: SessionDep) -> Silence:
    return alert_silences.create_silence(session, body.model_dump(), principal.username)


@router.delete("/silences/{silence_id}", response_model=SilenceOut)
def expire_silence(silence_id: PathId, _: EditorDep, session: SessionDep) -> Silence:
    """End a silence now (it stays listed with ``include_expired``)."""
    return alert_silences.expire_silence(session, silence_id)


@router.get("/webhooks", response_model=list[WebhookOut])
def list_webhooks(_: PrincipalDep, session: SessionDep, settings: SettingsDep) -> list[WebhookOut]:
    return [_webhook(t, settings) for t in alert_targets.list_targets(session)]


def _webhook(target: WebhookTarget, settings: Settings) -> WebhookOut:
    return WebhookOut(
        id=target.id,
        name=target.name,
        kind=target.kind,
        url_redacted=redacted_url(target.url),
        url_fingerprint=url_fingerprint(target.url, settings.secret_key),
        has_secret=target.has_secret,
        enabled=target.enabled,
        include_statements=target.include_statements,
        created_at=target.created_at,
    )


@router.post("/webhooks", response_model=WebhookOut, status_code=201)
def create_webhook(
    body: WebhookIn, _: EditorDep, session: SessionDep, box: BoxDep, settings: SettingsDep
) -> WebhookOut:
    """The URL's host must be on LAGSCOPE_WEBHOOK_ALLOWED_HOSTS (422 otherwise). The URL is
    not read back: the answer has it redacted, with a fingerprint."""
    target = alert_targets.create_target(
        session,
        box,
        settings.webhook_allow(),
        body.name,
        body.kind,
        body.url,
        body.secret,
        body.enabled,
        body.include_statements,
    )
    return _webhook(target, settings)


@router.get("/webhooks/{target_id}", response_model=WebhookOut)
def get_webhook(
    target_id: PathId, _: PrincipalDep, session: SessionDep, settings: SettingsDep
) -> WebhookOut:
    return _webhook(alert_targets.get_target(session, target_id), settings)


@router.patch("/webhooks/{target_id}", response_model=WebhookOut)
def update_webhook(
    target_id: PathId,
    body: WebhookPatch,
    _: EditorDep,
    session: SessionDep,
    box: BoxDep,
    settings: SettingsDep,
) -> WebhookOut:
    """Omitted fields stay: a URL is changed by sending the whole new one."""
    target = alert_targets.get_target(session, target_id)
    changes = body.model_dump(exclude_unset=True)
    alert_targets.update_target(session, box, settings.webhook_allow(), target, changes)
    return _webhook(target, settings)


@router.delete("/webhooks/{target_id}", status_code=204, response_class=Response)
def delete_webhook(target_id: PathId, _: EditorDep, session: SessionDep) -> Response:
    alert_targets.delete_target(session, alert_targets.get_target(session, target_id))
    return Response(status_code=204)


@router.post("/webhooks/{target_id}/test", response_model=DeliveryOut)
def send_test_webhook(
    target_id: PathId, principal: EditorDep, session: SessionDep, box: BoxDep, settings: SettingsDep
) -> DeliveryOut:
    """Send a made-up firing alert now, once; the attempt is in the delivery log (errors
    without an HTTP answer in detail for admins only)."""
    target = alert_targets.get_target(session, target_id)
    delivery = alert_delivery.send_test(session, box, settings, target, time.time())
    log = alert_activity.delivery_log(session, delivery.id)
    return _delivery(delivery, log, principal.can("admin"))


@router.get("/deliveries", response_model=list[DeliveryOut])
def list_deliveries(
    principal: PrincipalDep,
    session: SessionDep,
    target_id: QueryId | None = None,
    event_id: QueryId | None = None,
    status: Annotated[str | None, Query(pattern="^(pending|delivered|failed)$")] = None,
    limit: Limit = 100,
) -> list[DeliveryOut]:
    """Every delivery with every attempt (status code, latency, error), newest first. An error
    without an HTTP answer (DNS, connect, TLS, policy) is shown in detail to admins only;
    others read a generic outcome (``detail_hidden``)."""
    rows = alert_activity.list_deliveries(session, target_id, event_id, status, limit)
    detail = principal.can("admin")
    return [_delivery(d, attempts, detail) for d, attempts in rows]


def _attempt(attempt: DeliveryAttempt, detail: bool) -> AttemptOut:
    out = AttemptOut.model_validate(attempt)
    if detail:
        return out
    # Without an HTTP answer, the latency tells a refused port from a filtered one: hidden too.
    latency = out.latency_s if out.status_code is not None else None
    return out.model_copy(
        update={"error": public_error(out.error, out.status_code), "latency_s": latency}
    )


def _delivery(delivery: Delivery, attempts: list[DeliveryAttempt], detail: bool) -> DeliveryOut:
    last_error = delivery.last_error
    if not detail and last_error is not None:
        last_status = attempts[-1].status_code if attempts else None
        last_error = public_error(last_error, last_status)
    return DeliveryOut(
        id=delivery.id,
        event_id=delivery.event_id,
        target_id=delivery.target_id,
        kind=delivery.kind,
        idempotency_key=delivery.idempotency_key,
        status=delivery.status,
        attempts=delivery.attempts,
        next_attempt_at=delivery.next_attempt_at,
        created_at=delivery.created_at,
        finished_at=delivery.finished_at,
        last_error=last_error,
        log=[_attempt(a, detail) for a in attempts],
        detail_hidden=not detail,
    )
