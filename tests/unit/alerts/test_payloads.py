"""Webhook bodies: generic v1, Alertmanager v4 (checked against its documented fields), Slack."""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import replace
from datetime import datetime
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, field_validator

from lagscope.alerts import payloads, signing
from lagscope.alerts.payloads import AlertContext, Change, Note

EXT = "https://lagscope.example"
T0 = 1_795_000_000.0


def ctx(status: str = "firing", ends_at: float | None = None) -> AlertContext:
    return AlertContext(
        rule_id=7, rule_name="replica lag", metric="lag", severity="critical", status=status,
        starts_at=T0, ends_at=ends_at, cluster_id=3, cluster_name="prod", instance="r1:3306",
        channel="", value=42.0, threshold=30.0, lag_s=42.0, lag_source="heartbeat",
        not_received=0.5, received_not_applied=41.5, verdict="apply_bound",
        labels={"team": "db"},
        changes=(Change(T0 - 600, "slave_parallel_threads", "4", "0"),),
        notes=(Note(T0 - 300, "deploy 1.2", ("deploy",)),), idempotency_key="n-1",
    )  # fmt: skip


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class AmAlert(_Strict):
    """Fields from https://prometheus.io/docs/alerting/latest/configuration/#webhook_config."""

    status: Literal["firing", "resolved"]
    labels: dict[str, str]
    annotations: dict[str, str]
    startsAt: str
    endsAt: str
    generatorURL: str
    fingerprint: str

    @field_validator("startsAt", "endsAt")
    @classmethod
    def rfc3339(cls, v: str) -> str:
        datetime.fromisoformat(v.replace("Z", "+00:00"))
        return v


class AmWebhook(_Strict):
    version: Literal["4"]
    groupKey: str
    truncatedAlerts: int
    status: Literal["firing", "resolved"]
    receiver: str
    groupLabels: dict[str, str]
    commonLabels: dict[str, str]
    commonAnnotations: dict[str, str]
    externalURL: str
    alerts: list[AmAlert]


def test_alertmanager_body_matches_documented_schema() -> None:
    body = json.loads(json.dumps(payloads.alertmanager(ctx(), EXT, "ops")))
    hook = AmWebhook.model_validate(body)
    assert hook.alerts[0].endsAt == payloads.AM_ZERO_TIME
    assert len(hook.alerts[0].fingerprint) == 16
    assert "slave_parallel_threads: 4 → 0" in hook.alerts[0].annotations["changes_last_hour"]
    resolved = payloads.alertmanager(ctx("resolved", T0 + 120), EXT, "ops")
    assert AmWebhook.model_validate(resolved).alerts[0].endsAt.startswith("2026-")
    assert resolved["alerts"][0]["fingerprint"] == hook.alerts[0].fingerprint


def test_schema_check_can_fail() -> None:
    body = payloads.alertmanager(ctx(), EXT, "ops")
    del body["alerts"][0]["fingerprint"]
    with pytest.raises(ValueError):
        AmWebhook.model_validate(body)


def test_generic_carries_context_and_links() -> None:
    body = payloads.generic(ctx(), EXT)
    assert body["schema"] == "lagscope.alert/v1"
    assert body["context"]["lag_source"] == "heartbeat"
    assert body["context"]["decomposition"] == {"not_received": 0.5, "received_not_applied": 41.5}
    assert body["context"]["param_changes"][0]["name"] == "slave_parallel_threads"
    assert body["context"]["annotations"][0]["text"] == "deploy 1.2"
    assert body["links"]["dashboard"].startswith(f"{EXT}/clusters/3?from=")
    assert body["labels"]["team"] == "db" and body["labels"]["alertname"] == "replica lag"


def test_slack_has_text_and_blocks() -> None:
    body = payloads.slack(ctx(), EXT)
    assert body["text"].startswith("[FIRING] replica lag")
    assert {b["type"] for b in body["blocks"]} >= {"section", "actions"}
    assert any("slave_parallel_threads" in json.dumps(b) for b in body["blocks"])


def test_signature_matches_documented_algorithm() -> None:
    secret, body, ts = b"s3cret", b'{"a":1}', 1_795_000_000
    expected = hmac.new(secret, b"1795000000." + body, hashlib.sha256).hexdigest()
    sig = signing.sign(secret, ts, body)
    assert sig == "v1=" + expected
    assert signing.verify(secret, str(ts), body, sig, now=ts + 10)
    assert not signing.verify(secret, str(ts), body + b" ", sig, now=ts + 10)
    assert not signing.verify(b"other", str(ts), body, sig, now=ts + 10)
    assert not signing.verify(secret, str(ts), body, sig, now=ts + 3600)  # replay too old
    assert not signing.verify(secret, "x", body, sig, now=ts)


def test_empty_labels_are_left_out_as_alertmanager_drops_them():
    context = replace(ctx(), labels={"team": "db", "note": ""})
    labels = payloads.alertmanager(context, EXT, "r")["alerts"][0]["labels"]
    assert "channel" not in labels and "note" not in labels and labels["team"] == "db"
    named = payloads.alert_labels(replace(ctx(), channel="ch1"))
    assert named["channel"] == "ch1"


def test_the_summary_names_the_default_channel_in_words() -> None:
    assert payloads.summary(ctx()).endswith("on prod/r1:3306 default channel")
    assert payloads.summary(replace(ctx(), channel="east")).endswith("channel 'east'")


def _texts(node: object) -> list[str]:
    """Every mrkdwn/plain text and the fallback text of a Slack body (not the button URL)."""
    if isinstance(node, dict):
        found = [v for k, v in node.items() if k == "text" and isinstance(v, str)]
        return found + [t for k, v in node.items() if k != "url" for t in _texts(v)]
    if isinstance(node, list):
        return [t for v in node for t in _texts(v)]
    return []


def test_slack_escapes_every_text_an_editor_or_a_server_wrote() -> None:
    # Seen once: a rule named <!channel> pinged the whole workspace.
    hostile = replace(
        ctx(),
        rule_name="<!channel> lag",
        cluster_name="prod & <@U123>",
        instance="r1>",
        channel="<!here>",
        labels={"team": "<!everyone>"},
        changes=(Change(T0 - 600, "x<y", "<old>", "a&b"),),
        notes=(Note(T0 - 300, "see <https://evil.example|here>", ("<t>",)),),
    )
    body = payloads.slack(hostile, EXT)
    texts = _texts(body)
    assert texts and body["text"] in texts
    for text in texts:
        assert "<" not in text and ">" not in text, text
    joined = "\n".join(texts)
    assert "&lt;!channel&gt; lag" in joined
    assert "prod &amp; &lt;@U123&gt;" in joined
    assert "x&lt;y: &lt;old&gt; → a&amp;b" in joined
    assert "see &lt;https://evil.example|here&gt;" in joined
    (button,) = body["blocks"][-1]["elements"]
    assert button["url"] == payloads.dashboard_url(EXT, hostile)  # the link is not mangled
    # The other kinds are JSON, not mrkdwn: their texts stay as written.
    assert payloads.generic(hostile, EXT)["rule"]["name"] == "<!channel> lag"


class AmPostable(_Strict):
    """postableAlert of Alertmanager's OpenAPI (api/v2/openapi.yaml)."""

    labels: dict[str, str]
    annotations: dict[str, str]
    startsAt: str
    endsAt: str
    generatorURL: str


def test_alertmanager_api_body_is_a_list_of_postable_alerts() -> None:
    firing = replace(ctx(), valid_until=T0 + payloads.AM_VALID_FOR_S)
    (alert,) = payloads.body_for("alertmanager_api", firing, EXT, "unused")
    parsed = AmPostable.model_validate(alert)
    v4 = payloads.am_alert(firing, EXT)
    assert parsed.labels == v4["labels"] and parsed.annotations == v4["annotations"]
    assert parsed.startsAt == payloads.iso(T0)
    assert parsed.endsAt == payloads.iso(T0 + 4 * payloads.AM_RESEND_S)
    (resolved,) = payloads.am_postable(ctx("resolved", T0 + 90), EXT)
    assert resolved["endsAt"] == payloads.iso(T0 + 90)
    (old,) = payloads.am_postable(ctx(), EXT)  # a context stored before valid_until existed
    assert old["endsAt"] == payloads.AM_ZERO_TIME  # Alertmanager's resolve_timeout applies
    assert payloads.am_api_url("http://am:9093/") == "http://am:9093/api/v2/alerts"
    assert payloads.am_api_url("http://h/am/api/v2/alerts") == "http://h/am/api/v2/alerts"


WHY = (
    payloads.Why(
        "blocked_by_session",
        "blocked by a session on the replica",
        "Blocked for 95 s by session 4711 (report@10.0.3.4, idle in transaction).",
        "Ask who runs session 4711; do not kill it blindly.",
    ),
    payloads.Why(
        "large_transaction",
        "one large transaction",
        "Applying one transaction for 340 s, 2.1 M rows changed so far.",
        "Split such transactions at the source.",
    ),
)


def test_generic_says_why() -> None:
    body = payloads.generic(replace(ctx(), why=WHY), EXT)
    assert body["why"] == [
        {
            "cause": "blocked_by_session",
            "words": "blocked by a session on the replica",
            "sentence": WHY[0].sentence,
            "action": WHY[0].action,
        },
        {
            "cause": "large_transaction",
            "words": "one large transaction",
            "sentence": WHY[1].sentence,
            "action": WHY[1].action,
        },
    ]
    assert payloads.generic(ctx(), EXT)["why"] == []  # no cause named: an empty list


def test_alertmanager_why_annotation_joins_the_sentences() -> None:
    body = json.loads(json.dumps(payloads.alertmanager(replace(ctx(), why=WHY), EXT, "ops")))
    annotations = AmWebhook.model_validate(body).alerts[0].annotations
    assert annotations["why"] == f"{WHY[0].sentence}\n{WHY[1].sentence}"
    (postable,) = payloads.am_postable(replace(ctx(), why=WHY), EXT)
    assert AmPostable.model_validate(postable).annotations["why"] == annotations["why"]
    assert payloads.alertmanager(ctx(), EXT, "ops")["alerts"][0]["annotations"]["why"] == ""


def test_slack_has_a_why_line_escaped() -> None:
    hostile = payloads.Why(
        "ddl", "a schema change (DDL)", "Applying <!channel> ALTER", "Wait & see"
    )
    body = payloads.slack(replace(ctx(), why=(hostile,)), EXT)
    texts = _texts(body)
    (line,) = [t for text in texts for t in text.split("\n") if t.startswith("*Why:*")]
    assert line == "*Why:* Applying &lt;!channel&gt; ALTER Wait &amp; see"
    assert not any("*Why:*" in t for t in _texts(payloads.slack(ctx(), EXT)))


def test_why_survives_the_stored_context_and_old_contexts_have_none() -> None:
    stored = payloads.context_to_json(replace(ctx(), why=WHY))
    assert payloads.context_from_json(json.loads(json.dumps(stored))).why == WHY
    old = payloads.context_to_json(ctx())
    del old["why"]
    assert payloads.context_from_json(old).why == ()


_QUOTING = payloads.Why(
    "blocked_by_session",
    "a session holds a lock",
    "replica1's applier waits for a row lock held by session 9 (app@10.0.0.5, statement "
    "“UPDATE app.users SET email = ? WHERE id = ?”); error “Duplicate entry 'a@b.c'”.",
    "Ask the owner of session 9 to commit.",
)


@pytest.mark.parametrize("kind", ["generic", "alertmanager", "alertmanager_api", "slack"])
def test_bodies_quote_no_server_text_unless_the_target_opts_in(kind: str) -> None:
    with_why = replace(ctx(), why=(_QUOTING,))
    plain = json.dumps(payloads.body_for(kind, with_why, EXT, "ops"), ensure_ascii=False)
    assert "UPDATE" not in plain and "a@b.c" not in plain
    assert "statement “…”" in plain and "session 9" in plain
    opted = json.dumps(payloads.body_for(kind, with_why, EXT, "ops", include_statements=True))
    assert "UPDATE app.users SET email = ? WHERE id = ?" in opted
