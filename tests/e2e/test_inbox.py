"""The demo's webhook inbox in Chromium: the nav shows it in demo mode only,
and a delivered alert is listed with its headers and its payload as JSON text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from lagscope.demo.alerting import LAG_RULE, inbox_allow, inbox_url
from lagscope.demo.cluster import register_demo
from tests.integration.api_stack import ApiServer, api_server, sqlite_url
from tests.integration.demo_alert import deliver_pending, fire_and_resolve

from .conftest import DIST, shot

pytestmark = pytest.mark.e2e

LOOPBACK = "127.0.0.1"


@pytest.fixture(scope="module")
def api(tmp_path_factory) -> Iterator[ApiServer]:
    """A demo-mode API over a fresh demo store (no lab: the inbox needs no polling)."""
    url = sqlite_url(tmp_path_factory.mktemp("e2e-inbox"))
    with api_server(url, demo=True, ui_dist=str(DIST), webhook_allowed_hosts=LOOPBACK) as server:
        port = urlsplit(server.url).port
        assert port is not None
        register_demo(
            url,
            server.settings.secret_key,
            {name: (LOOPBACK, 1) for name in ("source", "replica1", "replica2")},
            ("monitor", "pw"),
            ("heartbeat", "pw"),
            inbox_url(LOOPBACK, port),
            inbox_allow(LOOPBACK),
        )
        yield server


def test_the_inbox_lists_a_delivered_alert(anonymous_page: Page, api: ApiServer):
    page = anonymous_page
    page.goto("/inbox")
    expect(page.get_by_role("link", name="Inbox")).to_be_visible()
    expect(page.get_by_text("Nothing received yet")).to_be_visible()
    shot(page, "inbox-empty")

    with api.client("") as c:
        target = next(
            t for t in c.get("/api/v1/alerts/webhooks").json() if t["name"] == "demo inbox"
        )
        sent = c.post(f"/api/v1/alerts/webhooks/{target['id']}/test")
        assert sent.json()["status"] == "delivered", sent.text
        # A body carrying markup: shown as text, never as HTML.
        c.post(
            "/api/v1/demo/inbox",
            json={
                "status": "firing",
                "rule": {"name": LAG_RULE},
                "summary": "<b>replica1</b> lag 41 s",
                "why": [{"sentence": "A session on replica1 holds row locks the applier needs."}],
            },
            headers={"Idempotency-Key": "e2e-1"},
        )

    entries = page.get_by_role("list", name="Received alerts").locator(":scope > li")
    expect(entries).to_have_count(2)
    newest = entries.nth(0)
    expect(newest).to_contain_text("<b>replica1</b> lag 41 s")
    expect(newest.locator("b")).to_have_count(0)
    expect(newest).to_contain_text("Why:")
    expect(newest).to_contain_text("holds row locks the applier needs")
    expect(newest).to_contain_text("e2e-1")
    expect(newest).to_contain_text("unsigned")
    test = entries.nth(1)
    expect(test).to_contain_text("Lagscope test notification")
    expect(test).to_contain_text("signature valid")
    expect(test.get_by_role("row", name=re.compile("Idempotency-Key"))).to_contain_text(
        "lagscope-test-"
    )
    test.get_by_text("Payload (JSON)").click()
    expect(test.locator("pre.inbox-payload")).to_contain_text('"status": "firing"')
    shot(page, "inbox-received")


def test_the_alerts_page_shows_the_demo_rule(anonymous_page: Page):
    anonymous_page.goto("/alerts")
    expect(anonymous_page.get_by_text(LAG_RULE).first).to_be_visible()


def test_the_demos_alert_leads_with_the_episodes_cause_and_links_its_page(
    anonymous_page: Page, api: ApiServer
):
    """Phase B's alert: fired while replica1 drained, its newest poll naming no cause; the
    inbox leads with the episode's main cause and links the episode's page."""
    with api.client("") as c:
        cluster_id = c.get("/api/v1/clusters").json()[0]["id"]
    alert = fire_and_resolve(api, cluster_id)
    assert deliver_pending(api) == 2
    page = anonymous_page
    page.goto("/inbox")
    entries = page.get_by_role("list", name="Received alerts").locator(":scope > li")
    resolved, firing = entries.nth(0), entries.nth(1)
    for entry in (firing, resolved):
        cause = entry.get_by_label("The episode's main cause")
        expect(cause).to_contain_text("Episode's main cause: fsync per event on the receiver")
        expect(cause).to_contain_text("busy writing in 44 of the last 45 polls")
        expect(cause).to_contain_text("What to do: Set sync_relay_log=0")
        link = cause.get_by_role("link", name="open the episode")
        expect(link).to_have_attribute(
            "href", f"/clusters/{cluster_id}/episodes/{alert.episode_id}"
        )
    expect(firing).to_contain_text("Now: behind, cause not identified")
    expect(firing).to_contain_text("— cause: fsync per event on the receiver")
    shot(page, "inbox-episode")
    firing.get_by_role("link", name="open the episode").click()
    expect(page).to_have_url(re.compile(f"/clusters/{cluster_id}/episodes/{alert.episode_id}$"))
