"""The demo's alert names the episode's cause: fired while replica1 drains a backlog its
receiver's fsyncs made, when its newest poll names no cause, both the firing and the resolved
payload in the inbox lead with "fsync per event on the receiver" and link the episode's page
(the store seeded as phase B leaves it: demo_alert.py; the rule, target, evaluation, delivery
and inbox are the demo's own)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from lagscope.demo.alerting import inbox_allow, inbox_url
from lagscope.demo.cluster import register_demo

from .api_stack import ApiServer, api_server, sqlite_url
from .demo_alert import FSYNC_SENTENCE, deliver_pending, fire_and_resolve

pytestmark = pytest.mark.integration

LOOPBACK = "127.0.0.1"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[tuple[ApiServer, int]]:
    url = sqlite_url(tmp_path_factory.mktemp("demo-inbox-episode"))
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


def test_the_demos_alert_names_the_episodes_cause_firing_and_resolved(demo):
    server, cluster_id = demo
    alert = fire_and_resolve(server, cluster_id)
    assert deliver_pending(server) == 2
    with server.client("") as c:
        entries = c.get("/api/v1/demo/inbox").json()["entries"]
    payloads = {e["payload"]["status"]: e["payload"] for e in entries}
    assert set(payloads) == {"firing", "resolved"}
    url = f"{server.settings.external_url}/clusters/{cluster_id}/episodes/{alert.episode_id}"
    for payload in payloads.values():
        assert payload["summary"].endswith("— cause: fsync per event on the receiver"), payload
        main = payload["episode"]["main_cause"]
        assert main["words"] == "fsync per event on the receiver"
        assert main["sentence"] == FSYNC_SENTENCE and main["action"].startswith("Set sync_relay")
        assert payload["episode"]["url"] == url and payload["links"]["episode"] == url
        # What the newest poll said stays there, beside the episode: no cause named now.
        assert [w["words"] for w in payload["why"]] == ["behind, cause not identified"]
    assert payloads["firing"]["state"] == "behind, cause not identified"
