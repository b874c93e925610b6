"""The Alertmanager-format body, and Alertmanager's own API as a target, against a real
Alertmanager (Debian's prometheus-alertmanager).

Alertmanager has no endpoint that ingests its own webhook v4 body: its API (POST /api/v2/alerts)
takes a list of alerts. So this test relays: Lagscope's delivery code sends the v4 body to a
loopback relay, the relay posts the body's ``alerts[]`` as they are to Alertmanager's API (which
must accept them), and Alertmanager's own webhook receiver then notifies a second loopback
receiver. The body Alertmanager sends there must have exactly our top-level fields and alert
fields, our labels and annotations, and the firing → resolved status. No lab is needed.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from lagscope.alerts import delivery as alert_delivery
from lagscope.alerts.evaluation import evaluate_cluster
from lagscope.alerts.payloads import (
    AM_RESEND_S,
    AM_VALID_FOR_S,
    AlertContext,
    Change,
    alertmanager,
    am_api_url,
    am_postable,
    context_from_json,
    context_to_json,
)
from lagscope.config import Settings
from lagscope.models import Delivery, WebhookTarget
from lagscope.security.secret_box import SecretBox
from tests.factories import secret_box

from .receiver import Receiver, receiver
from .stack import ManagedProcess, free_port
from .test_alerts_service import T0, Store, make_store
from .waiting import wait_until

pytestmark = pytest.mark.integration

BINARY = shutil.which("prometheus-alertmanager") or "/usr/bin/prometheus-alertmanager"
SETTINGS = Settings(
    secret_key="alertmanager-compat-test-7e2a9c4d1f6b8035",
    webhook_allowed_hosts="127.0.0.1",
    external_url="https://lagscope.example",
)


@pytest.fixture(scope="module")
def am_out() -> Iterator[Receiver]:
    with receiver() as started:
        yield started


@pytest.fixture(scope="module")
def alertmanager_url(tmp_path_factory, am_out: Receiver) -> Iterator[str]:
    if not Path(BINARY).exists():
        pytest.skip("prometheus-alertmanager is not installed")
    workdir = tmp_path_factory.mktemp("alertmanager")
    config = workdir / "alertmanager.yml"
    config.write_text(
        f"""
route:
  receiver: out
  group_by: ['alertname', 'cluster', 'instance', 'channel']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: out
    webhook_configs:
      - url: {am_out.url}/am
        send_resolved: true
"""
    )
    port = free_port()
    process = ManagedProcess(
        "alertmanager",
        [
            BINARY,
            f"--config.file={config}",
            f"--storage.path={workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
        ],
        workdir,
        {},
    )
    url = f"http://127.0.0.1:{port}"
    try:

        def ready() -> bool:
            assert process.alive(), process.log_tail()
            return httpx.get(f"{url}/-/ready", timeout=2).status_code == 200

        wait_until(ready, timeout_s=60, message="alertmanager ready", ignore=(httpx.HTTPError,))
        yield url
    finally:
        process.stop()


def _context(status: str, ends_at: float | None) -> AlertContext:
    return AlertContext(
        rule_id=7,
        rule_name="replica lag",
        metric="lag",
        severity="critical",
        status=status,
        starts_at=STARTS,
        ends_at=ends_at,
        cluster_id=1,
        cluster_name="prod",
        instance="replica1",
        channel="",
        value=42.5,
        threshold=30.0,
        lag_s=42.5,
        lag_source="heartbeat",
        not_received=0.0,
        received_not_applied=1800.0,
        verdict="apply_bound",
        labels={"team": "db"},
        changes=(Change(STARTS - 600, "slave_parallel_threads", "4", "0"),),
        idempotency_key=f"lagscope-7-c1-{status}",
    )


STARTS = time.time() - 5


def _deliver(relay: Receiver, ctx: AlertContext) -> dict:
    """Lagscope's own delivery code, to the relay: returns the body it sent."""
    now = datetime.now(UTC)
    target = WebhookTarget(id=1, name="am-relay", kind="alertmanager", url=relay.url + "/relay")
    target.secret_enc = ""
    delivery = Delivery(
        id=1,
        target_id=1,
        kind=ctx.status,
        idempotency_key=ctx.idempotency_key,
        context=context_to_json(ctx),
        next_attempt_at=now,
        created_at=now,
    )
    request = alert_delivery.build_request(
        SecretBox(SETTINGS.secret_key, b"unused-salt"), SETTINGS, delivery, target, time.time()
    )
    outcome = alert_delivery.send(request, SETTINGS)
    assert outcome.accepted, outcome
    return relay.all()[-1].json()


def test_alertmanager_accepts_our_alerts_and_sends_the_same_shape(
    alertmanager_url: str, am_out: Receiver
):
    with receiver() as relay:
        ours = _deliver(relay, _context("firing", None))
        assert ours == alertmanager(_context("firing", None), SETTINGS.external_url, "am-relay")
        posted = httpx.post(f"{alertmanager_url}/api/v2/alerts", json=ours["alerts"], timeout=10)
        assert posted.status_code == 200, posted.text
        (theirs,) = wait_until(
            lambda: [r.json() for r in am_out.all() if r.json()["status"] == "firing"],
            timeout_s=60,
            message="Alertmanager's own webhook notification",
        )
        assert set(theirs) == set(ours)
        assert theirs["version"] == ours["version"] == "4"
        (their_alert,) = theirs["alerts"]
        (our_alert,) = ours["alerts"]
        assert set(their_alert) == set(our_alert)
        assert their_alert["labels"] == our_alert["labels"]
        assert their_alert["annotations"] == our_alert["annotations"]
        assert their_alert["generatorURL"] == our_alert["generatorURL"]
        assert _t(their_alert["startsAt"]) == _t(our_alert["startsAt"])
        assert theirs["commonLabels"] == ours["commonLabels"]

        resolved = _deliver(relay, _context("resolved", time.time()))
        posted = httpx.post(
            f"{alertmanager_url}/api/v2/alerts", json=resolved["alerts"], timeout=10
        )
        assert posted.status_code == 200, posted.text
        (done,) = wait_until(
            lambda: [r.json() for r in am_out.all() if r.json()["status"] == "resolved"],
            timeout_s=60,
            message="Alertmanager's resolved notification",
        )
        assert done["alerts"][0]["labels"] == resolved["alerts"][0]["labels"]


def _t(text: str) -> datetime:
    """Alertmanager writes nanoseconds; compare to the microsecond."""
    head, _, frac = text.rstrip("Z").partition(".")
    return datetime.fromisoformat(f"{head}.{(frac + '000000')[:6]}+00:00")


# Alertmanager's own API as a target ----------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with make_store(tmp_path) as made:
        yield made


def _deliver_all(store: Store, ids: list[int]) -> list[alert_delivery.Outcome]:
    """What the worker does with the evaluation's deliveries: claim, send, log."""
    box = secret_box()
    outcomes = []
    for delivery_id in ids:
        now_s = max(time.time(), store.t)
        with store.sessions() as s, s.begin():
            request = alert_delivery.prepare(s, box, SETTINGS, delivery_id, now_s)
        assert request is not None
        outcome = alert_delivery.send(request, SETTINGS)
        with store.sessions() as s, s.begin():
            alert_delivery.record(s, SETTINGS, delivery_id, outcome, now_s)
        outcomes.append(outcome)
    return outcomes


def _active(alertmanager_url: str, alertname: str) -> list[dict]:
    listed = httpx.get(
        f"{alertmanager_url}/api/v2/alerts",
        params={"filter": f'alertname="{alertname}"'},
        timeout=10,
    )
    assert listed.status_code == 200, listed.text
    return listed.json()


def test_alertmanager_api_target_fires_refreshes_and_resolves(
    alertmanager_url: str, am_out: Receiver, store: Store
):
    """Lagscope posts to a real Alertmanager's /api/v2/alerts the way Prometheus does: endsAt
    4 resend intervals after the evaluation while firing, re-sent every interval (not only on
    the rule's repeat), endsAt = the resolve time on resolve. Alertmanager's own API and its own
    webhook notifications show what it made of them."""
    with store.sessions() as s, s.begin():
        target = WebhookTarget(
            name="am-api", kind="alertmanager_api", url=alertmanager_url, created_at=T0
        )
        s.add(target)
        s.flush()
        target_id = target.id
    name = "lag via alertmanager api"
    store.rule(name=name, for_s=0.0, target_ids=[target_id], labels={"team": "db"})
    # Synthetic poll times: started 200 s ago, so a resolve 62 s later is in the past for
    # Alertmanager, and every firing endsAt (evaluation + 240 s) is still ahead of it.
    store.t = float(int(time.time()) - 200)  # whole seconds: stored times are µs
    fired_ids = store.tick(50.0)
    fired_at = store.t
    assert len(fired_ids) == 1
    assert all(o.accepted for o in _deliver_all(store, fired_ids))
    (alert,) = _active(alertmanager_url, name)
    assert alert["labels"]["team"] == "db" and alert["labels"]["severity"] == "warning"
    assert alert["annotations"]["summary"].startswith(f"[FIRING] {name}: lag=50")
    assert alert["status"]["state"] == "active"
    assert _t(alert["startsAt"]).timestamp() == pytest.approx(fired_at, abs=1e-3)
    assert _t(alert["endsAt"]).timestamp() == pytest.approx(fired_at + AM_VALID_FOR_S, abs=1e-3)

    # Within the resend interval nothing is sent; after it, the alert is re-sent (no event).
    assert store.tick(51.0, step_s=AM_RESEND_S - 2) == []
    refreshed_ids = store.tick(52.0, step_s=2.0)
    refreshed_at = store.t
    assert len(refreshed_ids) == 1
    assert store.events() == [("firing", None)]
    assert all(o.accepted for o in _deliver_all(store, refreshed_ids))
    (alert,) = _active(alertmanager_url, name)
    assert _t(alert["startsAt"]).timestamp() == pytest.approx(fired_at, abs=1e-3)
    assert _t(alert["endsAt"]).timestamp() == pytest.approx(refreshed_at + AM_VALID_FOR_S, abs=1e-3)

    resolved_ids = store.tick(0.0)
    resolved_at = store.t
    assert resolved_at < time.time()
    assert all(o.accepted for o in _deliver_all(store, resolved_ids))
    assert _active(alertmanager_url, name) == []  # endsAt is past: no longer active
    done = wait_until(
        lambda: [
            r.json()
            for r in am_out.all()
            if r.json()["status"] == "resolved" and r.json()["groupLabels"].get("alertname") == name
        ],
        timeout_s=60,
        message="Alertmanager's resolved notification",
    )
    (their_alert,) = done[-1]["alerts"]
    assert their_alert["labels"] == alert["labels"]
    assert _t(their_alert["endsAt"]).timestamp() == pytest.approx(resolved_at, abs=1e-3)
    with store.sessions() as s:
        kinds = [d.kind for d in s.scalars(select(Delivery).order_by(Delivery.id))]
    assert kinds == ["firing", "refresh", "resolved"]


def test_a_refresh_keeps_only_the_newest_finished_one_in_the_log(store: Store):
    """No Alertmanager here: the refreshes fail (nothing listens), are not retried, and the
    log keeps the newest finished refresh per alert and target, not one per minute forever."""
    with store.sessions() as s, s.begin():
        target = WebhookTarget(
            name="am-api-down",
            kind="alertmanager_api",
            url=f"http://127.0.0.1:{free_port()}",
            created_at=T0,
        )
        s.add(target)
        s.flush()
        target_id = target.id
    store.rule(name="lag am down", for_s=0.0, target_ids=[target_id])
    store.t = float(int(time.time()) - 1000)  # whole seconds: stored times are µs
    _deliver_all(store, store.tick(50.0))
    for _ in range(3):
        ids = store.tick(50.0, step_s=AM_RESEND_S)
        assert len(ids) == 1
        (outcome,) = _deliver_all(store, ids)
        assert not outcome.accepted
    with store.sessions() as s:
        rows = s.scalars(select(Delivery).order_by(Delivery.id)).all()
        assert [(d.kind, d.status, d.attempts) for d in rows] == [
            ("firing", "pending", 1),  # retried on its back-off schedule
            ("refresh", "failed", 1),  # the newest; the older two are gone
        ]
        assert rows[1].idempotency_key.endswith(str(round(store.t * 1e6)))


def test_the_alertmanager_api_url_and_body(alertmanager_url: str):
    """Alertmanager accepts exactly our postable body (its API validates it)."""
    ctx = _context("firing", None)
    body = am_postable(replace(ctx, valid_until=time.time() + 60), SETTINGS.external_url)
    assert am_api_url(alertmanager_url) == f"{alertmanager_url}/api/v2/alerts"
    assert am_api_url(f"{alertmanager_url}/api/v2/alerts/") == f"{alertmanager_url}/api/v2/alerts"
    posted = httpx.post(am_api_url(alertmanager_url), json=body, timeout=10)
    assert posted.status_code == 200, posted.text
    broken = [{**body[0], "labels": {}}]
    assert httpx.post(am_api_url(alertmanager_url), json=broken, timeout=10).status_code == 400


def test_a_firing_alert_is_refreshed_without_new_readings(store: Store):
    """A replica that cannot be polled writes no new reading: its lag alert stays firing in
    Lagscope, so it is re-sent to Alertmanager on the evaluation's clock, not the reading's."""
    with store.sessions() as s, s.begin():
        target = WebhookTarget(
            name="am-api-quiet",
            kind="alertmanager_api",
            url=f"http://127.0.0.1:{free_port()}",
            created_at=T0,
        )
        s.add(target)
        s.flush()
        target_id = target.id
    store.rule(name="lag no readings", for_s=0.0, target_ids=[target_id])
    store.t = float(int(time.time()) - 1000)  # whole seconds: stored times are µs
    assert len(store.tick(50.0)) == 1
    fired_at = store.t
    with store.sessions() as s, s.begin():
        assert evaluate_cluster(s, store.cluster_id, fired_at + AM_RESEND_S - 1) == []
    with store.sessions() as s, s.begin():
        (refresh_id,) = evaluate_cluster(s, store.cluster_id, fired_at + AM_RESEND_S)
        refresh = s.get(Delivery, refresh_id)
        assert refresh is not None and refresh.kind == "refresh"
        ctx = context_from_json(refresh.context)
    assert ctx.status == "firing" and ctx.starts_at == pytest.approx(fired_at)
    assert ctx.valid_until == pytest.approx(fired_at + AM_RESEND_S + AM_VALID_FOR_S)
    assert store.events() == [("firing", None)]
