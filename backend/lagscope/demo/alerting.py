"""What the demo sets up so a newcomer sees an alert fire without setting anything up: a
webhook target aimed at the API's own inbox (:mod:`lagscope.api.demo_inbox`, demo
mode only) and one rule, lag over 30 s for 30 s on every replica channel of the demo's cluster,
sending there. Both are ordinary rows: the Alerts page shows, edits or deletes them like any.

The target is signed with a secret made here and kept nowhere else, so the inbox shows the
signature header a receiver checks (the inbox checks it with the stored secret).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from sqlalchemy.orm import Session

from lagscope.alerts.rules import create_rule
from lagscope.alerts.targets import create_target
from lagscope.api.demo_inbox import INBOX_PATH
from lagscope.models import AlertRule, WebhookTarget
from lagscope.security.secret_box import SecretBox

INBOX_TARGET = "demo inbox"
LAG_RULE = "demo: replica lag over 30 s"
LAG_THRESHOLD_S = 30.0
LAG_FOR_S = 30.0
# Resolved a little under the threshold, so a lag hovering at 30 s does not flap.
LAG_RESOLVE_S = 25.0


def base_url(host: str, port: int) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def inbox_url(host: str, port: int) -> str:
    return base_url(host, port) + INBOX_PATH


def inbox_allow(host: str, existing: str = "") -> str:
    """LAGSCOPE_WEBHOOK_ALLOWED_HOSTS for the demo's processes: what the user allowed, and the
    loopback address the inbox is on (a loopback destination must be named: delivery_policy)."""
    allowed = [h.strip() for h in existing.split(",") if h.strip()]
    return ",".join([*allowed, host] if host not in allowed else allowed)


def seed_alerting(
    session: Session,
    box: SecretBox,
    cluster_id: int,
    url: str,
    allow: Sequence[str],
) -> tuple[WebhookTarget, AlertRule]:
    target = create_target(
        session, box, allow, INBOX_TARGET, "generic", url, secrets.token_urlsafe(24)
    )
    rule = create_rule(
        session,
        {
            "name": LAG_RULE,
            "metric": "lag",
            "threshold": LAG_THRESHOLD_S,
            "for_s": LAG_FOR_S,
            "resolve_threshold": LAG_RESOLVE_S,
            "cluster_id": cluster_id,
            "severity": "warning",
            "target_ids": [target.id],
        },
    )
    return target, rule
