"""Webhook bodies as pure functions: generic JSON (schema ``lagscope.alert/v1``), Alertmanager v4,
Alertmanager's own API (``POST /api/v2/alerts``), Slack incoming-webhook (``text`` + ``blocks``).

Every body carries the context an operator needs: the lag episode the alert belongs to (its main
cause with the evidence behind it, and a link to its page), the channel's state now, current lag
and its source, the decomposition and verdict, the parameter changes and annotations in the hour
before it fired, and dashboard links. An alert fires while a backlog drains as often as while its
cause holds: the episode's main cause is what made the backlog, the state is what goes on now.

One module per receiver's shape; the facts, the shared texts and the withholding of server
text are their own modules, and this package's names are those the callers import.
"""

from __future__ import annotations

from typing import Any

from lagscope.alerts.payloads.alertmanager_body import (
    AM_API_PATH,
    AM_RESEND_S,
    AM_VALID_FOR_S,
    AM_ZERO_TIME,
    alertmanager,
    am_alert,
    am_api_url,
    am_postable,
)
from lagscope.alerts.payloads.facts import (
    AlertContext,
    Change,
    EpisodeFacts,
    EvidenceValue,
    Note,
    Why,
    context_from_json,
    context_to_json,
)
from lagscope.alerts.payloads.generic_body import (
    GENERIC_SCHEMA,
    generic,
)
from lagscope.alerts.payloads.server_text import (
    WITHHELD,
    without_server_text,
)
from lagscope.alerts.payloads.slack_body import (
    slack,
    slack_escape,
    slack_safe,
)
from lagscope.alerts.payloads.texts import (
    CONTEXT_WINDOW_S,
    alert_labels,
    dashboard_url,
    episode_text,
    episode_url,
    fingerprint,
    iso,
    summary,
    why_text,
)

__all__ = [
    "AM_API_PATH",
    "AM_RESEND_S",
    "AM_VALID_FOR_S",
    "AM_ZERO_TIME",
    "CONTEXT_WINDOW_S",
    "GENERIC_SCHEMA",
    "WITHHELD",
    "AlertContext",
    "Change",
    "EpisodeFacts",
    "EvidenceValue",
    "Note",
    "Why",
    "alert_labels",
    "alertmanager",
    "am_alert",
    "am_api_url",
    "am_postable",
    "body_for",
    "context_from_json",
    "context_to_json",
    "dashboard_url",
    "episode_text",
    "episode_url",
    "fingerprint",
    "generic",
    "iso",
    "slack",
    "slack_escape",
    "slack_safe",
    "summary",
    "why_text",
    "without_server_text",
]


def body_for(
    kind: str,
    ctx: AlertContext,
    external_url: str,
    receiver: str,
    include_statements: bool = False,
) -> Any:
    """The body a target of ``kind`` (generic | alertmanager | alertmanager_api | slack)
    receives (a JSON object; a list for alertmanager_api). Server text quoted in the causes
    only for a target that opted in (``include_statements``)."""
    if not include_statements:
        ctx = without_server_text(ctx)
    if kind == "alertmanager_api":
        return am_postable(ctx, external_url)
    if kind == "alertmanager":
        return alertmanager(ctx, external_url, receiver)
    if kind == "slack":
        return slack(ctx, external_url)
    return generic(ctx, external_url)
