"""Routes: alert rules (with a 24 h preview), firing alerts and their history, silences. Webhook
targets and the delivery log are routers/webhooks.py. Viewers read; editors write."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query, Response

from lagscope.alerts import activity as alert_activity
from lagscope.alerts import rules as alert_rules
from lagscope.alerts import silences as alert_silences
from lagscope.alerts.payloads import context_from_json, dashboard_url, summary
from lagscope.alerts.preview import PREVIEW_WINDOW, preview
from lagscope.api.deps import EditorDep, PrincipalDep, SessionDep, SettingsDep
from lagscope.api.schemas.alerts import (
    EventOut,
    FiringOut,
    PreviewIncident,
    PreviewOut,
    RuleIn,
    RuleOut,
    RulePatch,
    SilenceIn,
    SilenceOut,
)
from lagscope.api.schemas.common import PathId, QueryId
from lagscope.config import Settings
from lagscope.models import AlertEvent, AlertRule, Silence

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
