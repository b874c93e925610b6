"""Sending a delivery: claim it, POST it once, log the attempt, schedule the next one.

A delivery is claimed with one conditional ``UPDATE`` (pending, due, and not leased by another
worker): whoever changes the row sends it. The HTTP request runs outside any transaction. The
attempt is then logged, and the delivery is accepted (2xx), retried on the back-off schedule
(connection errors, timeouts, 408, 429, 5xx), or failed (another answer, an URL no longer
allowed, or the schedule exhausted). A worker killed mid-request leaves the lease to expire;
another sends again with the same ``Idempotency-Key``: delivery is at least once.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from lagscope import __version__
from lagscope.alerts.delivery_policy import (
    WebhookUrlError,
    backoff_schedule,
    jittered,
    same_host,
    validate_webhook_url,
)
from lagscope.alerts.payloads import (
    AM_RESEND_S,
    AlertContext,
    am_api_url,
    body_for,
    context_from_json,
    context_to_json,
)
from lagscope.alerts.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from lagscope.alerts.webhook_transport import PinnedTransport, Resolver, pin, system_resolver
from lagscope.config import Settings
from lagscope.errors import LagscopeError
from lagscope.models import Delivery, DeliveryAttempt, WebhookTarget
from lagscope.security.secret_box import SecretBox

MAX_REDIRECTS = 3
RETRY_STATUSES = frozenset({408, 425, 429})


@dataclass(frozen=True, slots=True)
class Request:
    delivery_id: int
    url: str
    body: bytes
    headers: dict[str, str]
    allow: tuple[str, ...]
    # Why it cannot be sent at all (e.g. a secret that no longer decrypts): logged, not retried.
    refused: str | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    status_code: int | None
    latency_s: float | None
    error: str | None

    @property
    def accepted(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def retryable(self) -> bool:
        if self.status_code is None:
            return self.error is None or not self.error.startswith("refused:")
        return self.status_code in RETRY_STATUSES or self.status_code >= 500


def lease_s(settings: Settings) -> float:
    per_try = settings.webhook_connect_timeout_s + settings.webhook_read_timeout_s
    return per_try * (MAX_REDIRECTS + 1) + settings.webhook_lease_margin_s


def claim(session: Session, delivery_id: int, now: datetime, lease: float) -> bool:
    """Take the delivery for this worker if it is pending, due, and nobody holds it."""
    result = session.execute(
        update(Delivery)
        .where(
            Delivery.id == delivery_id,
            Delivery.status == "pending",
            Delivery.next_attempt_at <= now,
            or_(Delivery.claimed_until.is_(None), Delivery.claimed_until < now),
        )
        .values(claimed_until=now + timedelta(seconds=lease), version=Delivery.version + 1)
        .execution_options(synchronize_session=False)
    )
    return bool(getattr(result, "rowcount", 0) == 1)


def prepare(
    session: Session, box: SecretBox, settings: Settings, delivery_id: int, now_s: float
) -> Request | None:
    """Claim the delivery and build its signed request; None when another worker has it."""
    if not claim(session, delivery_id, datetime.fromtimestamp(now_s, UTC), lease_s(settings)):
        return None
    delivery = session.get(Delivery, delivery_id)
    target = session.get(WebhookTarget, delivery.target_id) if delivery else None
    if delivery is None or target is None:
        return None
    try:
        return build_request(box, settings, delivery, target, now_s)
    except LagscopeError as exc:
        return Request(delivery_id, target.url, b"", {}, (), refused=str(exc))


def build_request(
    box: SecretBox, settings: Settings, delivery: Delivery, target: WebhookTarget, now_s: float
) -> Request:
    ctx = context_from_json(delivery.context)
    payload = body_for(
        target.kind, ctx, settings.external_url, target.name, target.include_statements
    )
    url = am_api_url(target.url) if target.kind == "alertmanager_api" else target.url
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    timestamp = int(now_s)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": f"lagscope/{__version__}",
        "Idempotency-Key": delivery.idempotency_key,
        TIMESTAMP_HEADER: str(timestamp),
    }
    if delivery.id is not None:
        headers["X-Lagscope-Delivery"] = str(delivery.id)
    if target.secret_enc:
        headers[SIGNATURE_HEADER] = sign(box.decrypt(target.secret_enc).encode(), timestamp, body)
    return Request(delivery.id, url, body, headers, tuple(settings.webhook_allow()))


def send(
    request: Request,
    settings: Settings,
    transport: httpx.BaseTransport | None = None,
    resolve: Resolver = system_resolver,
) -> Outcome:
    """POST once (following redirects only to the same scheme, host and port).

    The host is resolved once per attempt; that address is checked against the allow-list and
    is the one connected to (redirects stay on the same host, so on the same address).
    ``transport`` (tests) replaces the network entirely."""
    url = request.url
    timeout = httpx.Timeout(
        settings.webhook_read_timeout_s, connect=settings.webhook_connect_timeout_s
    )
    if request.refused is not None:
        return Outcome(None, None, f"refused: {request.refused}")
    started = time.monotonic()
    try:
        validate_webhook_url(url, request.allow)
        if transport is None:
            transport = PinnedTransport(*pin(url, request.allow, resolve))
        # trust_env=False: no proxy from the environment (it would resolve the name itself).
        with httpx.Client(
            timeout=timeout, follow_redirects=False, transport=transport, trust_env=False
        ) as client:
            for _ in range(MAX_REDIRECTS + 1):
                response = client.post(url, content=request.body, headers=request.headers)
                location = response.headers.get("location")
                if not response.is_redirect or not location:
                    return Outcome(response.status_code, time.monotonic() - started, None)
                target = str(response.url.join(location))
                if not same_host(url, target):
                    return Outcome(
                        response.status_code,
                        time.monotonic() - started,
                        f"refused: redirect to another host ({target})",
                    )
                url = target
            return Outcome(None, time.monotonic() - started, "refused: too many redirects")
    except WebhookUrlError as exc:
        return Outcome(None, None, f"refused: {exc}")
    except httpx.HTTPError as exc:
        return Outcome(None, time.monotonic() - started, f"{type(exc).__name__}: {exc}")


def record(
    session: Session,
    settings: Settings,
    delivery_id: int,
    outcome: Outcome,
    now_s: float,
    rng: random.Random | None = None,
) -> float | None:
    """Log the attempt and settle the delivery; returns the delay before the next try, if any."""
    delivery = session.get(Delivery, delivery_id)
    if delivery is None:
        return None
    now = datetime.fromtimestamp(now_s, UTC)
    delivery.attempts += 1
    session.add(
        DeliveryAttempt(
            delivery_id=delivery.id,
            number=delivery.attempts,
            at=now,
            status_code=outcome.status_code,
            latency_s=outcome.latency_s,
            error=outcome.error or (None if outcome.accepted else _http_error(outcome)),
        )
    )
    delivery.claimed_until = None
    delivery.version += 1
    if outcome.accepted:
        delivery.status, delivery.finished_at, delivery.last_error = "delivered", now, None
        return None
    delivery.last_error = outcome.error or _http_error(outcome)
    schedule = backoff_schedule(
        settings.webhook_backoff_base_s,
        settings.webhook_backoff_cap_s,
        settings.webhook_retry_horizon_s,
    )
    # A refresh is not retried: the next one (AM_RESEND_S later, while firing) carries the same.
    once = delivery.kind in ("test", "refresh")
    if once or not outcome.retryable or delivery.attempts > len(schedule):
        delivery.status, delivery.finished_at = "failed", now
        return None
    delay = jittered(schedule[delivery.attempts - 1], rng or random.Random())
    delivery.next_attempt_at = now + timedelta(seconds=delay)
    return delay


def _http_error(outcome: Outcome) -> str:
    return f"HTTP {outcome.status_code}"


def due(session: Session, now_s: float, limit: int = 500) -> list[int]:
    """Pending deliveries whose time has come and that nobody holds (the sweeper's list: a
    delivery whose queued task was lost with a killed worker or a flushed broker is sent)."""
    now = datetime.fromtimestamp(now_s, UTC)
    return list(
        session.scalars(
            select(Delivery.id)
            .where(
                Delivery.status == "pending",
                Delivery.next_attempt_at <= now,
                or_(Delivery.claimed_until.is_(None), Delivery.claimed_until < now),
            )
            .order_by(Delivery.next_attempt_at)
            .limit(limit)
        )
    )


def test_context(target: WebhookTarget, now_s: float, key: str) -> AlertContext:
    """A made-up firing alert, marked as a test in its name and labels; in an Alertmanager it
    ends by itself a minute later (it is never re-sent)."""
    return AlertContext(
        rule_id=0,
        rule_name="Lagscope test notification",
        metric="lag",
        severity="info",
        status="firing",
        starts_at=now_s,
        ends_at=None,
        cluster_id=0,
        cluster_name="test",
        instance="test-replica",
        channel="",
        value=42.0,
        threshold=30.0,
        lag_s=42.0,
        lag_source="heartbeat",
        not_received=0.0,
        received_not_applied=1200.0,
        verdict="apply_bound",
        labels={"test": "true", "target": target.name},
        idempotency_key=key,
        valid_until=now_s + AM_RESEND_S,
    )


def send_test(
    session: Session,
    box: SecretBox,
    settings: Settings,
    target: WebhookTarget,
    now_s: float,
    transport: httpx.BaseTransport | None = None,
) -> Delivery:
    """One attempt, now, logged like any delivery (no retries). Nothing is written before the
    request: no store lock is held while a slow receiver answers."""
    key = f"lagscope-test-{target.id}-{round(now_s * 1e6)}"
    now = datetime.fromtimestamp(now_s, UTC)
    delivery = Delivery(
        target_id=target.id,
        kind="test",
        idempotency_key=key,
        context=context_to_json(test_context(target, now_s, key)),
        status="pending",
        attempts=0,
        next_attempt_at=now,
        created_at=now,
        version=0,
    )
    outcome = send(build_request(box, settings, delivery, target, now_s), settings, transport)
    session.add(delivery)
    session.flush()
    record(session, settings, delivery.id, outcome, time.time())
    session.flush()
    return delivery
