"""Webhook targets and the delivery log. Webhook secrets and URLs go in, never out
(``has_secret``; the URL redacted with a fingerprint): a URL's path or query is often the
receiver's credential.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from lagscope.api.schemas.common import Name, PatchSchema, Schema

# alertmanager: the webhook v4 body (for receivers that take Alertmanager's notifications);
# alertmanager_api: the alerts posted to an Alertmanager's POST /api/v2/alerts (its base URL).
WebhookKind = Literal["generic", "alertmanager", "alertmanager_api", "slack"]
Url = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
Secret = Annotated[str, StringConstraints(max_length=1024)]


class WebhookIn(Schema):
    name: Name
    kind: WebhookKind = "generic"
    url: Url
    secret: Secret | None = None
    enabled: bool = True
    include_statements: bool = Field(
        default=False,
        description="quote the servers' text (statement digests, error messages) in the "
        "bodies' cause sentences; off: each quote is sent as “…”",
    )


class WebhookPatch(PatchSchema):
    """``secret``: a new value replaces it, ``""`` removes it, omitted keeps it."""

    name: Name | None = None
    kind: WebhookKind | None = None
    url: Url | None = None
    secret: Secret | None = None
    enabled: bool | None = None
    include_statements: bool | None = None


class WebhookOut(Schema):
    """The URL is never read back (its path or query often is the credential): scheme, host and
    port, and a fingerprint that changes when the URL does. PATCH ``url`` to replace it."""

    id: int
    name: str
    kind: str
    url_redacted: str
    url_fingerprint: str
    has_secret: bool
    enabled: bool
    include_statements: bool
    created_at: datetime


class AttemptOut(Schema):
    """``error`` and ``latency_s`` of an attempt without an HTTP answer are generic unless the
    caller is an admin (resolved addresses and port states are internal detail)."""

    number: int
    at: datetime
    status_code: int | None
    latency_s: float | None
    error: str | None


class DeliveryOut(Schema):
    id: int
    event_id: int | None
    target_id: int
    kind: str
    idempotency_key: str
    status: str
    attempts: int
    next_attempt_at: datetime
    created_at: datetime
    finished_at: datetime | None
    last_error: str | None
    log: list[AttemptOut]
    # True when errors were replaced by generic outcomes (the caller is not an admin).
    detail_hidden: bool
