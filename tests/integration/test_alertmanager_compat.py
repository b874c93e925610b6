"""The Alertmanager-format body against a real Alertmanager (Debian's prometheus-alertmanager).

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
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from lagscope.alerts.payloads import AlertContext, Change, alertmanager, context_to_json
from lagscope.config import Settings
from lagscope.models import Delivery, WebhookTarget
from lagscope.services import alert_delivery
from lagscope.services.secrets import SecretBox

from .receiver import Receiver, receiver
from .stack import ManagedProcess, free_port
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
