"""Slack's incoming-webhook body (``text`` + ``blocks``), every text in it escaped: names,
labels and server text are written by editors and monitored servers, and Slack would read
their ``<``, ``>`` and ``&`` as mentions and links.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lagscope.alerts.payloads.facts import AlertContext, Change, EpisodeFacts, Note, Why
from lagscope.alerts.payloads.texts import (
    changes_text,
    dashboard_url,
    episode_text,
    episode_url,
    summary,
)


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
            "text": {"type": "mrkdwn", "text": "*Last hour:*\n" + changes_text(ctx)},
        },
    ]
    buttons = [_button("Open in Lagscope", link)]
    if episode_link is not None:
        buttons.insert(0, _button("Open the episode", episode_link))
    blocks.append({"type": "actions", "elements": buttons})
    return {"text": summary(ctx), "blocks": blocks}


def _button(text: str, url: str) -> dict[str, Any]:
    return {"type": "button", "text": {"type": "plain_text", "text": text}, "url": url}
