"""Routes under /alerts for where alerts go: webhook targets (secret and URL write-only,
send-test) and the delivery log (its network detail for admins). Viewers read; editors write.

Registered right after routers/alerts.py, under the same prefix and tag, so the API's paths keep
their order.
"""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Query, Response

from lagscope.alerts import activity as alert_activity
from lagscope.alerts import delivery as alert_delivery
from lagscope.alerts import targets as alert_targets
from lagscope.alerts.delivery_policy import public_error, redacted_url, url_fingerprint
from lagscope.api.deps import BoxDep, EditorDep, PrincipalDep, SessionDep, SettingsDep
from lagscope.api.schemas.common import PathId, QueryId
from lagscope.api.schemas.webhooks import (
    AttemptOut,
    DeliveryOut,
    WebhookIn,
    WebhookOut,
    WebhookPatch,
)
from lagscope.config import Settings
from lagscope.models import Delivery, DeliveryAttempt, WebhookTarget

router = APIRouter(prefix="/alerts", tags=["alerts"])
Limit = Annotated[int, Query(ge=1, le=1000)]


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
