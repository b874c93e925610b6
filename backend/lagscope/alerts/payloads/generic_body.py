"""The generic JSON body (schema ``lagscope.alert/v1``): every fact of the notification, for a
receiver written against Lagscope itself.
"""

from __future__ import annotations

from typing import Any

from lagscope.alerts.payloads.facts import AlertContext
from lagscope.alerts.payloads.texts import (
    alert_labels,
    dashboard_url,
    episode_url,
    iso,
    summary,
)

GENERIC_SCHEMA = "lagscope.alert/v1"


def generic(ctx: AlertContext, external_url: str) -> dict[str, Any]:
    return {
        "schema": GENERIC_SCHEMA,
        "idempotency_key": ctx.idempotency_key,
        "status": ctx.status,
        "rule": {"id": ctx.rule_id, "name": ctx.rule_name, "metric": ctx.metric},
        "severity": ctx.severity,
        "labels": alert_labels(ctx),
        "scope": {"cluster_id": ctx.cluster_id, "instance": ctx.instance, "channel": ctx.channel},
        "value": ctx.value,
        "threshold": ctx.threshold,
        "starts_at": iso(ctx.starts_at),
        "ends_at": None if ctx.ends_at is None else iso(ctx.ends_at),
        "summary": summary(ctx),
        "context": _context_json(ctx),
        "why": _why_json(ctx),
        "state": ctx.state,
        "episode": _episode_json(ctx, external_url),
        "links": _links(ctx, external_url),
    }


def _links(ctx: AlertContext, external_url: str) -> dict[str, str]:
    links = {"dashboard": dashboard_url(external_url, ctx)}
    episode = episode_url(external_url, ctx)
    return links if episode is None else {**links, "episode": episode}


def _episode_json(ctx: AlertContext, external_url: str) -> dict[str, Any] | None:
    ep = ctx.episode
    if ep is None:
        return None
    return {
        "id": ep.id,
        "started_at": iso(ep.started_at),
        "ended_at": None if ep.ended_at is None else iso(ep.ended_at),
        "peak_lag_s": ep.peak_lag_s,
        "main_cause": {
            "cause": ep.cause,
            "words": ep.words,
            "sentence": ep.sentence,
            "action": ep.action,
            "evidence": dict(ep.evidence),
        },
        "url": episode_url(external_url, ctx),
    }


def _context_json(ctx: AlertContext) -> dict[str, Any]:
    return {
        "lag_s": ctx.lag_s,
        "lag_source": ctx.lag_source,
        "decomposition": {
            "not_received": ctx.not_received,
            "received_not_applied": ctx.received_not_applied,
        },
        "verdict": ctx.verdict,
        "param_changes": [
            {"at": iso(c.at), "name": c.name, "old": c.old, "new": c.new} for c in ctx.changes
        ],
        "annotations": [{"at": iso(n.at), "text": n.text, "tags": list(n.tags)} for n in ctx.notes],
    }


def _why_json(ctx: AlertContext) -> list[dict[str, str]]:
    return [
        {"cause": w.cause, "words": w.words, "sentence": w.sentence, "action": w.action}
        for w in ctx.why
    ]
