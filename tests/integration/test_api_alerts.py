"""/api/v1/alerts over real HTTP: rules (with the 24 h preview over stored samples), silences,
webhook targets whose secret never comes back, the allow-list, send-test to a real receiver on
loopback whose signature verifies with docs/alerts.md's own snippet, and the delivery log."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lagscope.alerts.delivery_policy import HIDDEN_NETWORK
from lagscope.models import AlertState, Channel, Sample
from lagscope.security import users

from .api_stack import ApiServer
from .receiver import Receiver, receiver
from .stack import free_port

pytestmark = pytest.mark.integration

ALERTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "alerts.md"


def documented_verify() -> Callable[..., bool]:
    """The signature check exactly as docs/alerts.md documents it (exec'd from its code block)."""
    blocks = re.findall(r"```python\n(.*?)```", ALERTS_DOC.read_text(), re.S)
    (code,) = [b for b in blocks if "def verify(secret" in b]
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    return namespace["verify"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def hook() -> Iterator[Receiver]:
    with receiver() as started:
        yield started


@pytest.fixture(scope="module")
def api_settings() -> dict[str, object]:
    return {"webhook_allowed_hosts": "127.0.0.1", "external_url": "https://lagscope.example"}


@pytest.fixture(scope="module")
def viewer(api: ApiServer) -> str:
    with api.sessions() as session, session.begin():
        user = users.create_user(session, "vera", "a-long-password", "viewer")
        return users.issue_token(session, user, "test")


@pytest.fixture(scope="module")
def editor(api: ApiServer) -> str:
    with api.sessions() as session, session.begin():
        user = users.create_user(session, "eddie", "a-long-password", "editor")
        return users.issue_token(session, user, "test")


@pytest.fixture(scope="module")
def cluster(api: ApiServer) -> dict[str, int]:
    with api.client() as c:
        cid = c.post("/api/v1/clusters", json={"name": "alerts"}).json()["id"]
        r1 = c.post(
            "/api/v1/instances",
            json={
                "cluster_id": cid,
                "name": "r1",
                "host": "127.0.0.1",
                "port": 3307,
                "user": "m",
                "password": "p",
            },
        )
        assert r1.status_code == 201, r1.text
    with api.sessions() as s, s.begin():
        channel = Channel(instance_id=r1.json()["id"], name="", first_seen_at=datetime.now(UTC))
        s.add(channel)
        s.flush()
        return {"cluster": cid, "instance": r1.json()["id"], "channel": channel.id}


def test_webhook_secret_is_write_only_and_the_url_must_be_allowed(api: ApiServer, hook, viewer):
    with api.client() as c:
        refused = c.post(
            "/api/v1/alerts/webhooks", json={"name": "x", "url": "http://10.1.2.3/hook"}
        )
        assert refused.status_code == 422 and "allow-list" in refused.text
        made = c.post(
            "/api/v1/alerts/webhooks",
            json={"name": "ops", "url": hook.url + "/ops", "secret": "s3cr3t-value"},
        )
        assert made.status_code == 201, made.text
        assert made.json()["has_secret"] is True and "s3cr3t" not in made.text
        listed = c.get("/api/v1/alerts/webhooks")
        assert "s3cr3t" not in listed.text and "secret_enc" not in listed.text
        cleared = c.patch(f"/api/v1/alerts/webhooks/{made.json()['id']}", json={"secret": ""})
        assert cleared.json()["has_secret"] is False
    with api.client(viewer) as v:
        assert v.get("/api/v1/alerts/webhooks").status_code == 200
        denied = v.post("/api/v1/alerts/webhooks", json={"name": "v", "url": hook.url})
        assert denied.status_code == 403


def test_a_signed_targets_url_changes_only_with_its_secret(api: ApiServer, hook: Receiver):
    """The signing secret does not follow a new url (its owner would
    collect signatures the old receiver accepts) unless given again in the same request."""
    with api.client() as c:
        made = c.post(
            "/api/v1/alerts/webhooks",
            json={"name": "moved", "url": hook.url + "/a", "secret": "kept-for-a"},
        ).json()
        path = f"/api/v1/alerts/webhooks/{made['id']}"
        moved = c.patch(path, json={"url": hook.url + "/b"})
        assert moved.status_code == 422 and "needs the secret again" in moved.text
        assert c.get(path).json()["url_fingerprint"] == made["url_fingerprint"]
        assert c.patch(path, json={"url": hook.url + "/a", "name": "same"}).status_code == 200
        unsigned = c.patch(path, json={"url": hook.url + "/b", "secret": ""})
        assert unsigned.status_code == 200 and unsigned.json()["has_secret"] is False
        assert c.patch(path, json={"url": hook.url + "/c"}).status_code == 200  # none to keep


SLACKISH = "/services/T000/B000/XOXOsecretTOKEN?api_key=k3y-s3cret"


def test_webhook_url_is_redacted_for_everyone_and_replaced_only_by_a_new_one(
    api: ApiServer, hook: Receiver, viewer: str, editor: str
):
    """Viewers read Slack token paths and ?api_key= from the target list."""
    hook.clear()
    port = hook.url.rsplit(":", 1)[1]
    with api.client() as admin:
        made = admin.post(
            "/api/v1/alerts/webhooks", json={"name": "slackish", "url": hook.url + SLACKISH}
        )
        assert made.status_code == 201, made.text
    target = made.json()
    seen = [made]
    for token in (None, editor, viewer):
        with api.client(token) as c:
            seen += [
                c.get("/api/v1/alerts/webhooks"),
                c.get(f"/api/v1/alerts/webhooks/{target['id']}"),
            ]
    for answer in seen:
        assert answer.status_code == 200 or answer is made
        assert "XOXOsecret" not in answer.text and "k3y-s3cret" not in answer.text
        assert "services" not in answer.text
    assert "url" not in target
    assert target["url_redacted"] == f"http://127.0.0.1:{port}/…"
    assert re.fullmatch("[0-9a-f]{8}", target["url_fingerprint"])
    with api.client(editor) as c:
        renamed = c.patch(f"/api/v1/alerts/webhooks/{target['id']}", json={"name": "slackish2"})
        assert renamed.json()["url_fingerprint"] == target["url_fingerprint"]  # URL kept
        sent = c.post(f"/api/v1/alerts/webhooks/{target['id']}/test").json()
        assert sent["status"] == "delivered"
        (got,) = hook.all()
        assert got.path == SLACKISH  # the stored URL is the whole one
        moved = c.patch(
            f"/api/v1/alerts/webhooks/{target['id']}", json={"url": hook.url + "/elsewhere"}
        )
        assert moved.json()["url_fingerprint"] != target["url_fingerprint"]
        assert moved.json()["url_redacted"] == target["url_redacted"]


def test_delivery_log_detail_is_for_admins(api: ApiServer, viewer: str, editor: str):
    """The log told viewers which ports refused and what a name resolved to."""
    closed = f"http://127.0.0.1:{free_port()}/nobody"
    with api.client(editor) as c:
        target = c.post("/api/v1/alerts/webhooks", json={"name": "closed", "url": closed}).json()
        by_editor = c.post(f"/api/v1/alerts/webhooks/{target['id']}/test").json()
    assert by_editor["status"] == "failed" and by_editor["detail_hidden"] is True
    assert by_editor["last_error"] == HIDDEN_NETWORK
    assert by_editor["log"][0]["error"] == HIDDEN_NETWORK
    assert by_editor["log"][0]["latency_s"] is None
    params = {"target_id": target["id"]}
    for token in (viewer, editor):
        with api.client(token) as c:
            (hidden,) = c.get("/api/v1/alerts/deliveries", params=params).json()
        assert hidden["last_error"] == HIDDEN_NETWORK and hidden["detail_hidden"] is True
        assert [(a["error"], a["latency_s"]) for a in hidden["log"]] == [(HIDDEN_NETWORK, None)]
    with api.client() as admin:
        (full,) = admin.get("/api/v1/alerts/deliveries", params=params).json()
    assert full["detail_hidden"] is False
    assert full["last_error"].startswith("ConnectError") and "refused" in full["last_error"]
    assert full["log"][0]["latency_s"] is not None


def test_send_test_signs_and_logs_the_attempt(api: ApiServer, hook: Receiver):
    hook.clear()
    with api.client() as c:
        target = c.post(
            "/api/v1/alerts/webhooks",
            json={"name": "signed", "url": hook.url + "/signed", "secret": "shared-secret"},
        ).json()
        sent = c.post(f"/api/v1/alerts/webhooks/{target['id']}/test")
        assert sent.status_code == 200, sent.text
        assert sent.json()["status"] == "delivered"
        assert [a["status_code"] for a in sent.json()["log"]] == [200]
        log = c.get("/api/v1/alerts/deliveries", params={"target_id": target["id"]}).json()
    (got,) = hook.all()
    assert documented_verify()(b"shared-secret", got.headers, got.body)
    assert not documented_verify()(b"another-secret", got.headers, got.body)
    assert got.json()["schema"] == "lagscope.alert/v1"
    assert got.headers["Idempotency-Key"] == got.json()["idempotency_key"]
    assert log[0]["kind"] == "test" and log[0]["log"][0]["latency_s"] is not None


def test_send_test_failure_is_logged_not_retried(api: ApiServer, hook: Receiver):
    hook.clear()
    hook.fail_next(503)
    with api.client() as c:
        target = c.post(
            "/api/v1/alerts/webhooks", json={"name": "flaky", "url": hook.url + "/flaky"}
        ).json()
        sent = c.post(f"/api/v1/alerts/webhooks/{target['id']}/test").json()
    assert sent["status"] == "failed" and sent["last_error"] == "HTTP 503"
    assert [(a["status_code"], a["error"]) for a in sent["log"]] == [(503, "HTTP 503")]


def test_rule_crud_scope_checks_and_roles(api: ApiServer, cluster, viewer):
    with api.client() as c:
        bad = c.post(
            "/api/v1/alerts/rules",
            json={"name": "r", "metric": "lag", "threshold": 5, "resolve_threshold": 9},
        )
        assert bad.status_code == 422 and "hysteresis" in bad.text
        wrong = c.post(
            "/api/v1/alerts/rules",
            json={"name": "r", "metric": "lag", "cluster_id": 999, "threshold": 5},
        )
        assert wrong.status_code == 422
        made = c.post(
            "/api/v1/alerts/rules",
            json={
                "name": "replica lag",
                "metric": "lag",
                "threshold": 30,
                "resolve_threshold": 10,
                "for_s": 60,
                "channel_id": cluster["channel"],
                "labels": {"team": "db"},
                "overrides": [{"instance_id": cluster["instance"], "threshold": 120}],
            },
        )
        assert made.status_code == 201, made.text
        rule = made.json()
        # The channel's instance and cluster are filled in from the channel.
        assert (rule["instance_id"], rule["cluster_id"]) == (
            cluster["instance"],
            cluster["cluster"],
        )
        dup = c.post("/api/v1/alerts/rules", json={"name": "replica lag", "metric": "lag"})
        assert dup.status_code == 409
        patched = c.patch(f"/api/v1/alerts/rules/{rule['id']}", json={"severity": "critical"})
        assert patched.json()["severity"] == "critical"
    with api.client(viewer) as v:
        assert v.get(f"/api/v1/alerts/rules/{rule['id']}").status_code == 200
        assert v.delete(f"/api/v1/alerts/rules/{rule['id']}").status_code == 403
    with api.client() as c:
        assert c.delete(f"/api/v1/alerts/rules/{rule['id']}").status_code == 204
        assert c.get(f"/api/v1/alerts/rules/{rule['id']}").status_code == 404


def test_preview_says_when_the_rule_would_have_fired(api: ApiServer, cluster):
    start = datetime.now(UTC) - timedelta(hours=2)
    lags = [1.0] * 30 + [50.0] * 30 + [1.0] * 30 + [50.0] * 5 + [1.0] * 10
    with api.sessions() as s, s.begin():
        for i, lag in enumerate(lags):
            s.add(
                Sample(
                    channel_id=cluster["channel"],
                    ts=start + timedelta(seconds=i),
                    verdict=0,
                    lag_s=lag,
                    sql_running=True,
                )
            )
    rule = {"name": "p", "metric": "lag", "threshold": 30, "for_s": 10, "resolve_threshold": 5}
    with api.client() as c:
        got = c.post("/api/v1/alerts/rules/preview", json=rule)
        assert got.status_code == 200, got.text
        (incident,) = got.json()["incidents"]
        fired = datetime.fromisoformat(incident["fired_at"])
        resolved = datetime.fromisoformat(incident["resolved_at"])
        assert fired == start + timedelta(seconds=40)  # 30 s in, then its 10 s `for`
        assert resolved == start + timedelta(seconds=60)
        assert incident["peak"] == 50.0
        instance_metric = c.post(
            "/api/v1/alerts/rules/preview", json={**rule, "metric": "unreachable"}
        )
        assert instance_metric.status_code == 422


def _second_channel_with_spikes(api: ApiServer, cluster: dict[str, int]) -> tuple[int, datetime]:
    """A channel of its own with 30 s of lag 50, calm, then 5 s of 50 (as in the preview test)."""
    start = datetime.now(UTC) - timedelta(hours=3)
    lags = [1.0] * 30 + [50.0] * 30 + [1.0] * 30 + [50.0] * 5 + [1.0] * 10
    with api.sessions() as s, s.begin():
        channel = Channel(
            instance_id=cluster["instance"], name="edit", first_seen_at=datetime.now(UTC)
        )
        s.add(channel)
        s.flush()
        for i, lag in enumerate(lags):
            s.add(
                Sample(
                    channel_id=channel.id,
                    ts=start + timedelta(seconds=i),
                    verdict=0,
                    lag_s=lag,
                    sql_running=True,
                )
            )
        return channel.id, start


def test_rule_edit_changes_every_field_scope_and_per_channel_overrides(
    api: ApiServer, cluster, hook: Receiver
):
    channel, start = _second_channel_with_spikes(api, cluster)
    with api.client() as c:
        target = c.post(
            "/api/v1/alerts/webhooks",
            json={"name": "edit-target", "kind": "generic", "url": f"{hook.url}/edit"},
        ).json()["id"]
        rule = c.post(
            "/api/v1/alerts/rules",
            json={
                "name": "to edit",
                "metric": "lag",
                "threshold": 30,
                "resolve_threshold": 5,
                "for_s": 10,
                "repeat_s": 600,
                "cluster_id": cluster["cluster"],
            },
        ).json()
        url = f"/api/v1/alerts/rules/{rule['id']}"

        # Before saving: the edit's preview. Saved, it fires on both spells on this channel's
        # first one; a per-channel override raising `for` to 40 s leaves neither.
        saved = c.get(f"{url}/preview").json()["incidents"]
        assert [i["channel_id"] for i in saved if i["channel_id"] == channel] == [channel]
        patch = {"overrides": [{"channel_id": channel, "for_s": 40}]}
        edited = c.post(f"{url}/preview", json=patch)
        assert edited.status_code == 200, edited.text
        assert [i for i in edited.json()["incidents"] if i["channel_id"] == channel] == []
        shorter = c.post(f"{url}/preview", json={"for_s": 2, "channel_id": channel}).json()
        fired = [datetime.fromisoformat(i["fired_at"]) for i in shorter["incidents"]]
        assert fired == [start + timedelta(seconds=32), start + timedelta(seconds=92)]
        assert c.get(url).json()["for_s"] == 10  # a preview saves nothing

        changes: dict[str, Any] = {
            "name": "edited",
            "metric": "param_changed",
            "threshold": 0,
            "for_s": 5,
            "resolve_threshold": None,
            "keep_firing_s": 30,
            "repeat_s": None,
            "cluster_id": cluster["cluster"],
            "instance_id": cluster["instance"],
            "channel_id": None,
            "region": None,
            "severity": "critical",
            "labels": {"team": "db", "tier": "1"},
            "target_ids": [target],
            "null_policy": "keep",
            "params": {"names": ["slave_parallel_threads"], "window_s": 900},
            "overrides": [
                {"instance_id": cluster["instance"], "threshold": 2, "for_s": 1},
                {"channel_id": channel, "threshold": 3, "enabled": False},
            ],
        }
        got = c.patch(url, json=changes)
        assert got.status_code == 200, got.text
        after = got.json()
        for name, value in changes.items():
            if name == "overrides":
                assert [
                    {k: v for k, v in o.items() if v is not None and k != "enabled"}
                    for o in after[name]
                ] == [
                    {"instance_id": cluster["instance"], "threshold": 2, "for_s": 1},
                    {"channel_id": channel, "threshold": 3},
                ]
                assert [o["enabled"] for o in after[name]] == [True, False]
            else:
                assert after[name] == value, name
        assert c.get(url).json() == after

        # Widening the scope back to every cluster, by null.
        wide = c.patch(url, json={"cluster_id": None, "instance_id": None})
        assert wide.status_code == 200 and wide.json()["cluster_id"] is None

        for bad in (
            {"severity": None},  # only the fields that may be empty take null
            {"overrides": [{"threshold": 1}]},  # names no replica
            {"overrides": [{"channel_id": 999999}]},
            {"overrides": [{"channel_id": channel, "instance_id": 999999}]},
            {"channel_id": 999999},
            {"threshold": 1, "resolve_threshold": 2},
        ):
            assert c.patch(url, json=bad).status_code == 422, bad
        assert c.get(url).json()["name"] == "edited"
        assert c.delete(url).status_code == 204
        assert c.delete(f"/api/v1/alerts/webhooks/{target}").status_code == 204


def test_silences_have_an_author_and_end_early(api: ApiServer, cluster):
    until = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    with api.client() as c:
        past = c.post(
            "/api/v1/alerts/silences",
            json={
                "cluster_id": cluster["cluster"],
                "ends_at": "2020-01-01T00:00:00Z",
                "reason": "x",
            },
        )
        assert past.status_code == 422
        made = c.post(
            "/api/v1/alerts/silences",
            json={"cluster_id": cluster["cluster"], "ends_at": until, "reason": "failover drill"},
        )
        assert made.status_code == 201, made.text
        assert made.json()["author"] == "admin"
        assert [s["id"] for s in c.get("/api/v1/alerts/silences").json()] == [made.json()["id"]]
        ended = c.delete(f"/api/v1/alerts/silences/{made.json()['id']}")
        assert datetime.fromisoformat(ended.json()["ends_at"]) <= datetime.now(UTC)
        assert c.get("/api/v1/alerts/silences").json() == []
        kept = c.get("/api/v1/alerts/silences", params={"include_expired": True}).json()
        assert [s["reason"] for s in kept] == ["failover drill"]


def test_firing_lists_pending_and_firing_states(api: ApiServer, cluster):
    with api.client() as c:
        rule = c.post(
            "/api/v1/alerts/rules",
            json={"name": "firing list", "metric": "lag", "threshold": 1, "severity": "critical"},
        ).json()
    with api.sessions() as s, s.begin():
        s.add(
            AlertState(
                rule_id=rule["id"],
                subject=f"c{cluster['channel']}",
                cluster_id=cluster["cluster"],
                instance_id=cluster["instance"],
                channel_id=cluster["channel"],
                phase="firing",
                since=datetime.now(UTC),
                breaching=True,
                notified=True,
                value=12.5,
                version=1,
            )
        )
    with api.client() as c:
        (firing,) = c.get("/api/v1/alerts/firing").json()
        assert (firing["rule_name"], firing["phase"], firing["value"]) == (
            "firing list",
            "firing",
            12.5,
        )
        assert c.get("/api/v1/alerts/firing", params={"cluster_id": 999}).json() == []
        # Switched off: its state is dropped, nothing shows as firing any more.
        c.patch(f"/api/v1/alerts/rules/{rule['id']}", json={"enabled": False})
        assert c.get("/api/v1/alerts/firing").json() == []
