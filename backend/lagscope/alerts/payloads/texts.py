"""The texts and links every body shares: times, the dashboard and episode links, the label
set and its fingerprint, the one-line summary, and the episode's and causes' sentences.

One wording for every receiver, so a page forwarded from Alertmanager reads as Slack's does.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from urllib.parse import quote

from lagscope.alerts.payloads.facts import AlertContext

CONTEXT_WINDOW_S = 3600


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


def why_text(ctx: AlertContext) -> str:
    """The causes' sentences, one a line ("" when none was named)."""
    return "\n".join(w.sentence for w in ctx.why if w.sentence)


def changes_text(ctx: AlertContext) -> str:
    lines = [f"{iso(c.at)} {c.name}: {c.old} → {c.new}" for c in ctx.changes]
    lines += [f"{iso(n.at)} note: {n.text}" for n in ctx.notes]
    return "\n".join(lines) if lines else "none"
