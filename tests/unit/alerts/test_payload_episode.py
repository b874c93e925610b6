"""Every body carries the episode: its main cause with the evidence behind it and a link to its
page, beside the channel's state now. The demo's alert fired while the backlog drained: the
readings named no cause any more, the episode's main cause was the receiver's fsyncs."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from lagscope.alerts import payloads
from lagscope.alerts.payloads import AlertContext, EpisodeFacts, Why
from tests.unit.alerts.test_payloads import EXT, T0, AmPostable, AmWebhook, _texts, ctx

NOT_IDENTIFIED = Why(
    "unexplained",
    "behind, cause not identified",
    "replica1 is 41 s behind; no known cause matched the readings.",
    "",
)
FSYNC = EpisodeFacts(
    id=12,
    started_at=T0 - 150,
    ended_at=None,
    peak_lag_s=64.5,
    cause="relay_log_durability",
    words="fsync per event on the receiver",
    sentence="replica1's IO thread queued events in 44 of 45 polls; sync_relay_log=1.",
    action="Set sync_relay_log=0 and sync_master_info=0 on replica1.",
    evidence={"queueing_polls": 44, "polls": 45, "sync_relay_log": 1},
)
BLOCKED = EpisodeFacts(
    id=13,
    started_at=T0 - 30,
    ended_at=None,
    peak_lag_s=20.0,
    cause="blocked_by_session",
    words="blocked by a session on the replica",
    sentence="replica1's applier has been waiting for a row lock on app.users held by session 9 "
    "(app@10.0.0.5, statement “SELECT * FROM app.users WHERE id <= ? FOR UPDATE”).",
    action="Ask the owner of session 9 (app@10.0.0.5) to commit or roll back.",
    evidence={
        "blocker_thread_id": 9,
        "wait_s": 12.0,
        "blocker_statement": "SELECT * FROM app.users WHERE id <= ? FOR UPDATE",
        "blocker_user": "app",
    },
)
EPISODE_URL = f"{EXT}/clusters/3/episodes/12"


def draining(status: str = "firing") -> AlertContext:
    """The demo's alert: firing while replica1 drained, the readings naming no cause."""
    base = ctx(status, T0 + 120 if status == "resolved" else None)
    return replace(
        base,
        why=(NOT_IDENTIFIED,),
        state="behind, cause not identified",
        episode=FSYNC,
    )


@pytest.mark.parametrize("status", ["firing", "resolved"])
def test_generic_names_the_episodes_main_cause_its_evidence_and_links_its_page(
    status: str,
) -> None:
    body = payloads.body_for("generic", draining(status), EXT, "inbox")
    assert body["state"] == "behind, cause not identified"
    episode = body["episode"]
    assert episode["id"] == 12 and episode["url"] == EPISODE_URL
    assert episode["started_at"] == payloads.iso(T0 - 150) and episode["ended_at"] is None
    assert episode["main_cause"] == {
        "cause": "relay_log_durability",
        "words": "fsync per event on the receiver",
        "sentence": FSYNC.sentence,
        "action": FSYNC.action,
        "evidence": {"queueing_polls": 44, "polls": 45, "sync_relay_log": 1},
    }
    assert body["links"]["episode"] == EPISODE_URL
    assert body["summary"].endswith("default channel — cause: fsync per event on the receiver")


@pytest.mark.parametrize("status", ["firing", "resolved"])
def test_alertmanager_annotations_carry_the_episode_and_the_state(status: str) -> None:
    body = json.loads(json.dumps(payloads.body_for("alertmanager", draining(status), EXT, "ops")))
    annotations = AmWebhook.model_validate(body).alerts[0].annotations
    assert annotations["summary"].endswith("cause: fsync per event on the receiver")
    assert annotations["episode"] == (
        f"Main cause of the episode since {payloads.iso(T0 - 150)}: fsync per event on the "
        f"receiver. {FSYNC.sentence} {FSYNC.action}"
    )
    assert annotations["episode_url"] == EPISODE_URL
    assert annotations["state"] == "behind, cause not identified"
    (postable,) = payloads.body_for("alertmanager_api", draining(status), EXT, "ops")
    assert AmPostable.model_validate(postable).annotations == annotations


def test_slack_leads_with_the_episode_and_links_its_page() -> None:
    body = payloads.body_for("slack", draining(), EXT, "ops")
    assert body["text"].endswith("cause: fsync per event on the receiver")
    first, second = body["blocks"][0], body["blocks"][1]
    assert "fsync per event on the receiver" in first["text"]["text"]
    assert second["text"]["text"].startswith("*Episode:* Main cause of the episode since")
    assert FSYNC.sentence in second["text"]["text"] and FSYNC.action in second["text"]["text"]
    texts = "\n".join(_texts(body))
    assert "*Now:* behind, cause not identified" in texts
    buttons = body["blocks"][-1]["elements"]
    assert [b["url"] for b in buttons] == [EPISODE_URL, payloads.dashboard_url(EXT, draining())]


def test_slack_escapes_the_episodes_text() -> None:
    hostile = replace(FSYNC, sentence="see <!channel> & co", action="<@U1>")
    body = payloads.slack(replace(draining(), episode=hostile), EXT)
    for text in _texts(body):
        assert "<" not in text and ">" not in text, text
    assert "see &lt;!channel&gt; &amp; co" in "\n".join(_texts(body))


@pytest.mark.parametrize("kind", ["generic", "alertmanager", "alertmanager_api", "slack"])
def test_the_episodes_evidence_quotes_no_server_text_unless_the_target_opts_in(kind: str) -> None:
    blocked = replace(draining(), episode=BLOCKED)
    plain = json.dumps(payloads.body_for(kind, blocked, EXT, "ops"), ensure_ascii=False)
    assert "FOR UPDATE" not in plain and "app.users WHERE" not in plain
    assert "session 9" in plain and "statement “…”" in plain
    opted = json.dumps(
        payloads.body_for(kind, blocked, EXT, "ops", include_statements=True), ensure_ascii=False
    )
    assert "SELECT * FROM app.users WHERE id" in opted and "FOR UPDATE" in opted


def test_generic_evidence_keeps_figures_and_drops_texts_unless_opted_in() -> None:
    blocked = replace(draining(), episode=BLOCKED)
    plain = payloads.body_for("generic", blocked, EXT, "ops")["episode"]["main_cause"]
    assert plain["evidence"] == {"blocker_thread_id": 9, "wait_s": 12.0}
    opted = payloads.body_for("generic", blocked, EXT, "ops", include_statements=True)
    assert opted["episode"]["main_cause"]["evidence"] == BLOCKED.evidence


def test_without_an_episode_the_bodies_say_so_and_keep_their_shape() -> None:
    body = payloads.generic(ctx(), EXT)
    assert body["episode"] is None and body["state"] is None
    assert set(body["links"]) == {"dashboard"}
    annotations: dict[str, Any] = payloads.am_alert(ctx(), EXT)["annotations"]
    assert annotations["episode"] == "" and "episode_url" not in annotations
    assert not payloads.summary(ctx()).count("cause:")
    unnamed = replace(FSYNC, cause=None, words="cause not named yet", sentence="", action="")
    assert "cause:" not in payloads.summary(replace(ctx(), episode=unnamed))


def test_the_episode_survives_the_stored_context_and_old_contexts_have_none() -> None:
    stored = payloads.context_to_json(draining())
    back = payloads.context_from_json(json.loads(json.dumps(stored)))
    assert back.episode == FSYNC and back.state == "behind, cause not identified"
    old = payloads.context_to_json(ctx())
    del old["episode"], old["state"]
    assert payloads.context_from_json(old).episode is None
