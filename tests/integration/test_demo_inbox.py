"""The demo's alerting (docs/demo.md): a fresh demo store has the lag rule and the webhook
target aimed at the API's own inbox; Lagscope's own delivery code delivers there and the inbox
lists it; outside demo mode the inbox does not exist."""

from __future__ import annotations

import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from sqlalchemy import select

from lagscope.alerts.delivery import build_request, send
from lagscope.api.demo_inbox import INBOX_PATH
from lagscope.demo.alerting import (
    INBOX_TARGET,
    LAG_FOR_S,
    LAG_RULE,
    LAG_THRESHOLD_S,
    inbox_allow,
    inbox_url,
)
from lagscope.demo.cluster import register_demo
from lagscope.models import AlertRule, Delivery, WebhookTarget
from lagscope.security.secret_box import store_box

from .api_stack import ApiServer, api_server, sqlite_url

pytestmark = pytest.mark.integration

LOOPBACK = "127.0.0.1"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[tuple[ApiServer, int]]:
    store = tmp_path_factory.mktemp("demo-inbox")
    url = sqlite_url(store)
    with api_server(url, demo=True, webhook_allowed_hosts=LOOPBACK) as server:
        port = urlsplit(server.url).port
        assert port is not None
        cluster_id = register_demo(
            url,
            server.settings.secret_key,
            {name: (LOOPBACK, 1) for name in ("source", "replica1", "replica2")},
            ("monitor", "pw"),
            ("heartbeat", "pw"),
            inbox_url(LOOPBACK, port),
            inbox_allow(LOOPBACK),
        )
        yield server, cluster_id


def test_a_fresh_demo_store_has_the_lag_rule_sending_to_the_inbox(demo):
    server, cluster_id = demo
    with server.client("") as c:
        rules = c.get("/api/v1/alerts/rules").json()
        targets = c.get("/api/v1/alerts/webhooks").json()
    [target] = [t for t in targets if t["name"] == INBOX_TARGET]
    assert target["kind"] == "generic" and target["enabled"] and target["has_secret"]
    [rule] = [r for r in rules if r["name"] == LAG_RULE]
    assert (rule["metric"], rule["threshold"], rule["for_s"]) == ("lag", LAG_THRESHOLD_S, LAG_FOR_S)
    assert (rule["threshold"], rule["for_s"]) == (30.0, 30.0)
    # Every replica channel of the demo's cluster: no instance, channel or region narrows it.
    assert rule["cluster_id"] == cluster_id
    assert (rule["instance_id"], rule["channel_id"], rule["region"]) == (None, None, None)
    assert rule["target_ids"] == [target["id"]] and rule["enabled"]
    with server.sessions() as session:
        stored = session.scalars(select(WebhookTarget)).one()
        assert urlsplit(stored.url).path == INBOX_PATH
        assert urlsplit(stored.url).hostname == LOOPBACK


def test_the_inbox_lists_a_delivery_from_lagscopes_own_delivery_code(demo):
    server, _ = demo
    with server.sessions() as session:
        target_id = session.scalars(select(WebhookTarget.id)).one()
    with server.client("") as c:
        sent = c.post(f"/api/v1/alerts/webhooks/{target_id}/test")  # the API's own sender
        assert sent.status_code == 200, sent.text
        assert sent.json()["status"] == "delivered", sent.json()
        inbox = c.get("/api/v1/demo/inbox").json()
    assert inbox["capacity"] == 200
    [entry] = inbox["entries"]
    with server.sessions() as session:
        delivery = session.scalars(select(Delivery).where(Delivery.target_id == target_id)).one()
    assert entry["headers"]["Idempotency-Key"] == delivery.idempotency_key
    assert entry["headers"]["X-Lagscope-Signature"].startswith("v1=")
    assert entry["signature"] == "valid"
    assert entry["payload"]["status"] == "firing"
    assert entry["payload"]["idempotency_key"] == delivery.idempotency_key
    assert entry["times_received"] == 1

    # At-least-once: the same delivery sent again (a worker killed mid-send) is counted, not
    # listed twice, as a receiver deduplicating on the key would.
    box = store_box(server.sessions, server.settings.secret_key)
    with server.sessions() as session:
        delivery = session.get(Delivery, delivery.id)
        target = session.get(WebhookTarget, target_id)
        assert delivery is not None and target is not None
        request = build_request(box, server.settings, delivery, target, time.time())
    assert send(request, server.settings).status_code == 202
    with server.client("") as c:
        [again] = c.get("/api/v1/demo/inbox").json()["entries"]
    assert (again["id"], again["times_received"]) == (entry["id"], 2)


def test_the_inbox_takes_json_only(demo):
    server, _ = demo
    with server.client("") as c:
        # A cross-site form can post text/plain without a preflight: refused.
        form = c.post(INBOX_PATH, content=b'{"a": 1}', headers={"Content-Type": "text/plain"})
        assert form.status_code == 415
        big = c.post(INBOX_PATH, json={"a": "x" * 70_000})
        assert big.status_code == 413
        broken = c.post(INBOX_PATH, content=b"{", headers={"Content-Type": "application/json"})
        assert broken.status_code == 422
        forged = c.post(INBOX_PATH, json={"a": 1}, headers={"X-Lagscope-Signature": "v1=00"})
        assert forged.status_code == 202
        entries = c.get(INBOX_PATH).json()["entries"]
    assert entries[0]["payload"] == {"a": 1} and entries[0]["signature"] == "invalid"


def test_there_is_no_inbox_outside_demo_mode(tmp_path):
    with api_server(sqlite_url(tmp_path), webhook_allowed_hosts=LOOPBACK) as server:
        with server.client() as c:  # an admin, with a token
            listed = c.get(INBOX_PATH)
            posted = c.post(INBOX_PATH, json={"status": "firing"})
            assert c.get("/api/v1/auth/me").json()["demo"] is False
        with server.client("") as anonymous:
            assert anonymous.post(INBOX_PATH, json={"status": "firing"}).status_code == 401
    assert (listed.status_code, posted.status_code) == (404, 404)
    assert "demo mode only" in listed.json()["detail"]


def test_demo_mode_says_so(demo):
    server, _ = demo
    with server.client("") as c:
        assert c.get("/api/v1/auth/me").json()["demo"] is True
    with server.sessions() as session:
        assert session.scalars(select(AlertRule.name)).all() == [LAG_RULE]
