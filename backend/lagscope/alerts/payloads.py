"""Webhook bodies as pure functions: generic JSON (schema ``lagscope.alert/v1``), Alertmanager v4,
Alertmanager's own API (``POST /api/v2/alerts``), Slack incoming-webhook (``text`` + ``blocks``).

Every body carries the context an operator needs: the lag episode the alert belongs to (its main
cause with the evidence behind it, and a link to its page), the channel's state now, current lag
and its source, the decomposition and verdict, the parameter changes and annotations in the hour
before it fired, and dashboard links. An alert fires while a backlog drains as often as while its
cause holds: the episode's main cause is what made the backlog, the state is what goes on now.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

GENERIC_SCHEMA = "lagscope.alert/v1"
AM_ZERO_TIME = "0001-01-01T00:00:00Z"  # Alertmanager's "no end" value
CONTEXT_WINDOW_S = 3600
# Alertmanager API targets, the way Prometheus feeds Alertmanager: a firing alert is re-sent
# every AM_RESEND_S (Prometheus' --rules.alert.resend-delay default, 1m) with endsAt
# AM_VALID_FOR_S after the evaluation that saw it firing (Prometheus: 4 × the resend delay),
# so three lost re-sends in a row do not resolve it, and a Lagscope that stops evaluating lets
# it resolve within 4 minutes instead of holding it open forever. A resolve sends endsAt = the
# resolve time.
AM_RESEND_S = 60.0
AM_VALID_FOR_S = 4 * AM_RESEND_S
AM_API_PATH = "/api/v2/alerts"


@dataclass(frozen=True, slots=True)
class Change:
    at: float
    name: str
    old: str | None
    new: str | None


@dataclass(frozen=True, slots=True)
class Note:
    at: float
    text: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Why:
    """One cause the channel's newest poll named when the notification was recorded: its label,
    its words, what is happening and what to do (plain text, bounded by the analysis)."""

    cause: str
    words: str
    sentence: str
    action: str


EvidenceValue = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class EpisodeFacts:
    """The lag episode the alert's channel is in (or was in, for a resolved alert): its main
    cause and that cause's latest evidence — sentence, action, and the evidence's figures."""

    id: int
    started_at: float
    ended_at: float | None
    peak_lag_s: float | None
    cause: str | None  # label; None while no cause is named yet
    words: str
    sentence: str = ""
    action: str = ""
    evidence: dict[str, EvidenceValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AlertContext:
    """One notification's facts, gathered by the service from the store."""

    rule_id: int
    rule_name: str
    metric: str
    severity: str
    status: str  # "firing" | "resolved"
    starts_at: float
    ends_at: float | None
    cluster_id: int
    cluster_name: str
    instance: str
    channel: str
    value: float | None
    threshold: float
    lag_s: float | None = None
    lag_source: str | None = None
    not_received: float | None = None
    received_not_applied: float | None = None
    verdict: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    changes: tuple[Change, ...] = ()
    notes: tuple[Note, ...] = ()
    idempotency_key: str = ""
    # Firing only: until when the evaluation that sent it vouches for it (Alertmanager endsAt).
    valid_until: float | None = None
    # Channel-scoped alerts: why the channel is behind, strongest first ([] when no cause named).
    why: tuple[Why, ...] = ()
    # Channel-scoped alerts: the channel's state now in words (its strongest current cause, else
    # its verdict), and the episode it is in.
    state: str | None = None
    episode: EpisodeFacts | None = None


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


def dashboard_url(external_url: str, ctx: AlertContext) -> str:
    """Link to the cluster's explorer from an hour before the start to the end (or now)."""
    to = ctx.ends_at if ctx.ends_at is not None else ctx.starts_at + CONTEXT_WINDOW_S
    frm, till = quote(iso(ctx.starts_at - CONTEXT_WINDOW_S)), quote(iso(to))
    return f"{external_url.rstrip('/')}/clusters/{ctx.cluster_id}?from={frm}&to={till}"


def episode_url(external_url: str, ctx: AlertContext) -> str | None:
    """Link to the alert's episode page (None when the alert belongs to no episode)."""
    if ctx.episode is None:
        return None
    return f"{external_url.rstrip('/')}/clusters/{ctx.cluster_id}/episodes/{ctx.episode.id}"


def alert_labels(ctx: AlertContext) -> dict[str, str]:
    """Rule labels, then ours. Empty values are left out: for Alertmanager (and Prometheus) an
    empty label is no label, and a real Alertmanager drops it (the default channel is "")."""
    base = {
        "alertname": ctx.rule_name,
        "metric": ctx.metric,
        "severity": ctx.severity,
        "cluster": ctx.cluster_name,
        "instance": ctx.instance,
        "channel": ctx.channel,
    }
    return {k: v for k, v in {**ctx.labels, **base}.items() if v != ""}


def fingerprint(labels: dict[str, str]) -> str:
    """Stable 16-hex id of a label set (Alertmanager's fingerprints are 16 hex digits too)."""
    text = "\x00".join(f"{k}\x01{v}" for k, v in sorted(labels.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def summary(ctx: AlertContext) -> str:
    state = "FIRING" if ctx.status == "firing" else "RESOLVED"
    val = "unknown (NULL)" if ctx.value is None else f"{ctx.value:g}"
    # MariaDB's and MySQL's unnamed channel is '': a bare "channel ''" reads as a bug.
    where = f"channel '{ctx.channel}'" if ctx.channel else "default channel"
    # The cause rides in the one line every receiver shows (Slack's notification, the
    # Alertmanager summary a pager forwards): the paged operator reads it first.
    cause = f" — cause: {ctx.episode.words}" if ctx.episode and ctx.episode.cause else ""
    return (
        f"[{state}] {ctx.rule_name}: {ctx.metric}={val} (threshold {ctx.threshold:g}) "
        f"on {ctx.cluster_name}/{ctx.instance} {where}{cause}"
    )


def episode_text(ctx: AlertContext) -> str:
    """The episode's main cause, then its evidence, then what to do ("" without an episode)."""
    ep = ctx.episode
    if ep is None:
        return ""
    head = f"Main cause of the episode since {iso(ep.started_at)}: {ep.words}."
    return " ".join(part for part in (head, ep.sentence, ep.action) if part)


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


def why_text(ctx: AlertContext) -> str:
    """The causes' sentences, one a line ("" when none was named)."""
    return "\n".join(w.sentence for w in ctx.why if w.sentence)


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


def _changes_text(ctx: AlertContext) -> str:
    lines = [f"{iso(c.at)} {c.name}: {c.old} → {c.new}" for c in ctx.changes]
    lines += [f"{iso(n.at)} note: {n.text}" for n in ctx.notes]
    return "\n".join(lines) if lines else "none"


def am_alert(ctx: AlertContext, external_url: str) -> dict[str, Any]:
    """One alert in Alertmanager's shape (also what its POST /api/v2/alerts ingests)."""
    labels = alert_labels(ctx)
    annotations = {
        "summary": summary(ctx),
        "episode": episode_text(ctx),
        "state": ctx.state or "",
        "lag_source": ctx.lag_source or "",
        "verdict": ctx.verdict or "",
        "changes_last_hour": _changes_text(ctx),
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


def slack_escape(text: str) -> str:
    """Slack's three control characters as entities (api.slack.com "Escaping text"): a rule
    named ``<!channel>`` or a replica's error quoting ``<@U123>`` stays text, not a mention."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _esc(value: str | None) -> str | None:
    return None if value is None else slack_escape(value)


def slack_safe(ctx: AlertContext) -> AlertContext:
    """The context with every text an editor or a monitored server wrote escaped for Slack
    (names, labels, parameter names and values, annotations). Links are built from the
    original context, so they stay valid URLs."""
    return replace(
        ctx,
        rule_name=slack_escape(ctx.rule_name),
        metric=slack_escape(ctx.metric),
        severity=slack_escape(ctx.severity),
        cluster_name=slack_escape(ctx.cluster_name),
        instance=slack_escape(ctx.instance),
        channel=slack_escape(ctx.channel),
        lag_source=_esc(ctx.lag_source),
        verdict=_esc(ctx.verdict),
        labels={slack_escape(k): slack_escape(v) for k, v in ctx.labels.items()},
        changes=tuple(
            Change(c.at, slack_escape(c.name), _esc(c.old), _esc(c.new)) for c in ctx.changes
        ),
        notes=tuple(
            Note(n.at, slack_escape(n.text), tuple(slack_escape(t) for t in n.tags))
            for n in ctx.notes
        ),
        why=tuple(
            Why(w.cause, slack_escape(w.words), slack_escape(w.sentence), slack_escape(w.action))
            for w in ctx.why
        ),
        state=_esc(ctx.state),
        episode=_slack_episode(ctx.episode),
    )


def _slack_episode(ep: EpisodeFacts | None) -> EpisodeFacts | None:
    if ep is None:
        return None
    evidence = {k: slack_escape(v) if isinstance(v, str) else v for k, v in ep.evidence.items()}
    return replace(
        ep,
        words=slack_escape(ep.words),
        sentence=slack_escape(ep.sentence),
        action=slack_escape(ep.action),
        evidence=evidence,
    )


def slack(ctx: AlertContext, external_url: str) -> dict[str, Any]:
    """Slack incoming-webhook body: ``text`` is the fallback, ``blocks`` the rich layout. Every
    text in it is escaped (:func:`slack_safe`); the button's URL is not text."""
    link = dashboard_url(external_url, ctx)
    episode_link = episode_url(external_url, ctx)
    ctx = slack_safe(ctx)
    facts = [
        f"*Lag:* {ctx.lag_s if ctx.lag_s is not None else 'unknown'} s ({ctx.lag_source or '?'})",
        f"*Not received:* {ctx.not_received} · *Received, not applied:* {ctx.received_not_applied}",
        f"*Verdict:* {ctx.verdict or '?'}",
    ]
    if ctx.state:
        facts.append(f"*Now:* {ctx.state}")
    facts += [f"*Why:* {w.sentence} {w.action}".rstrip() for w in ctx.why]
    # The cause first, then the figures, then what changed (as the episode page reads).
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": summary(ctx)}}
    ]
    if ctx.episode is not None:
        text = "*Episode:* " + episode_text(ctx)
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text}})
    blocks += [
        {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(facts)}},
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": "*Last hour:*\n" + _changes_text(ctx)},
        },
    ]
    buttons = [_button("Open in Lagscope", link)]
    if episode_link is not None:
        buttons.insert(0, _button("Open the episode", episode_link))
    blocks.append({"type": "actions", "elements": buttons})
    return {"text": summary(ctx), "blocks": blocks}


def _button(text: str, url: str) -> dict[str, Any]:
    return {"type": "button", "text": {"type": "plain_text", "text": text}, "url": url}


def context_to_json(ctx: AlertContext) -> dict[str, Any]:
    """The stored form of a notification's facts: a delivery retried an hour later, by another
    worker, sends the same body as its first attempt."""
    data = asdict(ctx)
    data["changes"] = [asdict(c) for c in ctx.changes]
    data["notes"] = [{**asdict(n), "tags": list(n.tags)} for n in ctx.notes]
    data["why"] = [asdict(w) for w in ctx.why]
    data["episode"] = None if ctx.episode is None else asdict(ctx.episode)
    return data


def context_from_json(data: dict[str, Any]) -> AlertContext:
    fields = dict(data)
    fields["changes"] = tuple(Change(**c) for c in data.get("changes", ()))
    fields["notes"] = tuple(
        Note(n["at"], n["text"], tuple(n.get("tags", ()))) for n in data.get("notes", ())
    )
    fields["labels"] = dict(data.get("labels", {}))
    # Contexts stored before causes were named carry no "why".
    fields["why"] = tuple(Why(**w) for w in data.get("why", ()))
    # ... and contexts stored before alerts carried the episode, none.
    episode = data.get("episode")
    fields["episode"] = None if episode is None else EpisodeFacts(**episode)
    return AlertContext(**fields)


# Server text quoted in a cause's sentence (analysis/causes/words.quote): one “…” span each.
_QUOTED = re.compile("“[^“”]*”")
WITHHELD = "“…”"


def without_server_text(ctx: AlertContext) -> AlertContext:
    """The context with every quote of a server's text in the causes' sentences and actions
    replaced by “…”: a statement's digest still names tables and columns, an error message
    may hold a row's values, and a receiver keeps what it gets (chat history, mail). The
    episode's evidence keeps its figures and flags; its texts (statements, states, errors,
    logins) are left out."""
    return replace(
        ctx,
        why=tuple(
            Why(
                w.cause, w.words, _QUOTED.sub(WITHHELD, w.sentence), _QUOTED.sub(WITHHELD, w.action)
            )
            for w in ctx.why
        ),
        episode=_episode_without_server_text(ctx.episode),
    )


def _episode_without_server_text(ep: EpisodeFacts | None) -> EpisodeFacts | None:
    if ep is None:
        return None
    return replace(
        ep,
        sentence=_QUOTED.sub(WITHHELD, ep.sentence),
        action=_QUOTED.sub(WITHHELD, ep.action),
        evidence={k: v for k, v in ep.evidence.items() if not isinstance(v, str)},
    )


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
