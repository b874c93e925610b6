"""Alertmanager's bodies: its webhook v4 shape, and its own API (``POST /api/v2/alerts``) that
Lagscope feeds the way Prometheus does.
"""

from __future__ import annotations

from typing import Any

from lagscope.alerts.payloads.facts import AlertContext
from lagscope.alerts.payloads.texts import (
    alert_labels,
    changes_text,
    dashboard_url,
    episode_text,
    episode_url,
    fingerprint,
    iso,
    summary,
    why_text,
)

AM_ZERO_TIME = "0001-01-01T00:00:00Z"  # Alertmanager's "no end" value
# Alertmanager API targets, the way Prometheus feeds Alertmanager: a firing alert is re-sent
# every AM_RESEND_S (Prometheus' --rules.alert.resend-delay default, 1m) with endsAt
# AM_VALID_FOR_S after the evaluation that saw it firing (Prometheus: 4 × the resend delay),
# so three lost re-sends in a row do not resolve it, and a Lagscope that stops evaluating lets
# it resolve within 4 minutes instead of holding it open forever. A resolve sends endsAt = the
# resolve time.
AM_RESEND_S = 60.0
AM_VALID_FOR_S = 4 * AM_RESEND_S
AM_API_PATH = "/api/v2/alerts"


def am_alert(ctx: AlertContext, external_url: str) -> dict[str, Any]:
    """One alert in Alertmanager's shape (also what its POST /api/v2/alerts ingests)."""
    labels = alert_labels(ctx)
    annotations = {
        "summary": summary(ctx),
        "episode": episode_text(ctx),
        "state": ctx.state or "",
        "lag_source": ctx.lag_source or "",
        "verdict": ctx.verdict or "",
        "changes_last_hour": changes_text(ctx),
        "why": why_text(ctx),
        "dashboard": dashboard_url(external_url, ctx),
    }
    episode = episode_url(external_url, ctx)
    if episode is not None:
        annotations["episode_url"] = episode
    return {
        "status": ctx.status,
        "labels": labels,
        "annotations": annotations,
        "startsAt": iso(ctx.starts_at),
        "endsAt": AM_ZERO_TIME if ctx.ends_at is None else iso(ctx.ends_at),
        "generatorURL": dashboard_url(external_url, ctx),
        "fingerprint": fingerprint(labels),
    }


def alertmanager(ctx: AlertContext, external_url: str, receiver: str) -> dict[str, Any]:
    """Alertmanager webhook v4 body carrying one alert (we group per rule × channel)."""
    alert = am_alert(ctx, external_url)
    group = {"alertname": ctx.rule_name}
    return {
        "version": "4",
        "groupKey": f'{{}}:{{alertname="{ctx.rule_name}"}}/{alert["fingerprint"]}',
        "truncatedAlerts": 0,
        "status": ctx.status,
        "receiver": receiver,
        "groupLabels": group,
        "commonLabels": alert["labels"],
        "commonAnnotations": alert["annotations"],
        "externalURL": external_url,
        "alerts": [alert],
    }


def am_postable(ctx: AlertContext, external_url: str) -> list[dict[str, Any]]:
    """The body of Alertmanager's ``POST /api/v2/alerts`` (a list of postableAlert): the same
    labels and annotations as the v4 body, endsAt as :data:`AM_RESEND_S` explains."""
    alert = am_alert(ctx, external_url)
    if ctx.status == "resolved":
        ends = alert["endsAt"]
    else:
        ends = AM_ZERO_TIME if ctx.valid_until is None else iso(ctx.valid_until)
    return [
        {
            "labels": alert["labels"],
            "annotations": alert["annotations"],
            "startsAt": alert["startsAt"],
            "endsAt": ends,
            "generatorURL": alert["generatorURL"],
        }
    ]


def am_api_url(base_url: str) -> str:
    """An Alertmanager target is its base URL (as in Prometheus' and Grafana's settings); the
    alerts go to its v2 API under it. A URL that already ends with the API path is kept."""
    base = base_url.rstrip("/")
    return base if base.endswith(AM_API_PATH) else base + AM_API_PATH
