"""Alerts in the browser: add a webhook target and a rule, send a test and see it in the delivery
log; stop a replica's SQL thread and see the alert firing on the overview (and resolved after)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.integration.api_stack import ApiServer, api_server
from tests.integration.pipeline_stack import Pipeline, start_pipeline
from tests.integration.receiver import Receiver, receiver

from .conftest import DIST, shot

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

ALERT_ENV = {"LAGSCOPE_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1"}


@pytest.fixture(scope="module")
def pipeline(lab, tmp_path_factory) -> Iterator[Pipeline]:
    with start_pipeline(lab, tmp_path_factory.mktemp("e2e-alerts"), extra_env=ALERT_ENV) as p:
        yield p


@pytest.fixture(scope="module")
def api(pipeline: Pipeline) -> Iterator[ApiServer]:
    with api_server(pipeline.url, ui_dist=str(DIST), webhook_allowed_hosts="127.0.0.1") as server:
        yield server


@pytest.fixture(scope="module")
def hook() -> Iterator[Receiver]:
    with receiver() as started:
        yield started


def sql_thread(lab, running: bool) -> None:
    conn = lab.connect("replica1")
    try:
        with conn.cursor() as cur:
            cur.execute("START SLAVE SQL_THREAD" if running else "STOP SLAVE SQL_THREAD")
    finally:
        conn.close()


def test_target_rule_test_send_and_a_firing_alert(
    page: Page, lab, pipeline: Pipeline, hook: Receiver
):
    page.goto("/alerts")
    expect(page.get_by_role("heading", name="Alerts", exact=True)).to_be_visible()

    target_form = page.get_by_role("form", name="New webhook target")
    target_form.get_by_label("Target name").fill("ops-hook")
    target_form.get_by_label("URL").fill(f"{hook.url}/ops")
    target_form.get_by_role("button", name="Add target").click()
    targets = page.get_by_role("list", name="Webhook targets")
    expect(targets).to_contain_text("ops-hook")

    page.get_by_role("button", name="Send test to ops-hook").click()
    expect(page.get_by_role("status").filter(has_text="Test")).to_have_text("Test delivered")
    log = page.get_by_role("table", name="Delivery log")
    expect(log).to_contain_text("ops-hook")
    expect(log).to_contain_text("delivered")
    expect(log).to_contain_text("#1 200")
    assert len(hook.accepted()) == 1
    shot(page, "alerts-test-sent")

    rule_form = page.get_by_role("form", name="New alert rule")
    rule_form.get_by_label("Name").fill("replica SQL thread stopped")
    rule_form.get_by_label("Metric").select_option("sql_stopped")
    rule_form.get_by_label("Threshold (above)").fill("0")
    rule_form.get_by_label("For (s)").fill("2")
    rule_form.get_by_label("Cluster").select_option(label="lab")
    rule_form.get_by_label("ops-hook").check()
    rule_form.get_by_role("button", name="Create rule").click()
    expect(page.get_by_role("table", name="Alert rules")).to_contain_text(
        "replica SQL thread stopped"
    )

    try:
        sql_thread(lab, False)
        page.goto("/")
        banner = page.get_by_role("region", name="Firing alerts")
        expect(banner).to_contain_text("replica SQL thread stopped")
        expect(banner).to_contain_text("1 alert firing")
        shot(page, "overview-alert-firing")
    finally:
        sql_thread(lab, True)
    expect(page.get_by_role("region", name="Firing alerts")).to_have_count(0)
    page.goto("/alerts")
    history = page.get_by_role("table", name="Alert history")
    expect(history).to_contain_text("resolved")
    expect(history).to_contain_text("firing")
    lab.wait_caught_up(timeout_s=120)


def test_a_target_url_is_shown_redacted_and_changed_by_re_entering_it(page: Page, hook: Receiver):
    """The list shows scheme, host, port and a fingerprint, never the
    path (a Slack token); "Change URL" takes the whole new URL, and the Alertmanager API kind."""
    hook.clear()
    port = hook.url.rsplit(":", 1)[1]
    page.goto("/alerts")
    target_form = page.get_by_role("form", name="New webhook target")
    target_form.get_by_label("Target name").fill("slack-like")
    target_form.get_by_label("Format").select_option("slack")
    target_form.get_by_label("URL").fill(f"{hook.url}/services/T0/B0/TOKENsecret")
    target_form.get_by_role("button", name="Add target").click()
    targets = page.get_by_role("list", name="Webhook targets")
    item = targets.get_by_role("listitem").filter(has_text="slack-like")
    expect(item).to_contain_text(f"http://127.0.0.1:{port}/… · #")
    expect(targets).not_to_contain_text("TOKENsecret")
    before = item.locator("code").inner_text()

    item.get_by_role("button", name="Change URL of slack-like").click()
    change = page.get_by_role("form", name="Change URL of slack-like")
    expect(change.get_by_label("Format")).to_have_value("slack")
    change.get_by_label("Format").select_option("alertmanager_api")
    change.get_by_label("New Alertmanager URL").fill(f"{hook.url}/am")
    change.get_by_role("button", name="Save URL").click()
    expect(change).to_have_count(0)
    expect(item).to_contain_text("Alertmanager API")
    expect(item.locator("code")).not_to_have_text(before)
    shot(page, "alerts-target-url-changed")

    item.get_by_role("button", name="Send test to slack-like").click()
    expect(page.get_by_role("status").filter(has_text="Test")).to_have_text("Test delivered")
    (got,) = hook.accepted()
    assert got.path == "/am/api/v2/alerts"
    (alert,) = got.json()
    assert alert["labels"]["test"] == "true" and alert["labels"]["target"] == "slack-like"


def test_edit_a_rule_preview_it_and_see_the_change_listed(page: Page, api: ApiServer):
    from sqlalchemy import select

    from lagscope.alerts import rules as alert_rules
    from lagscope.models import AlertRule

    with api.sessions() as s, s.begin():
        rule_id = alert_rules.create_rule(
            s, {"name": "lag to edit", "metric": "lag", "threshold": 30, "for_s": 60}
        ).id
    page.goto("/alerts")
    rules = page.get_by_role("table", name="Alert rules")
    expect(rules).to_contain_text("lag > 30, for 60 s")
    page.get_by_role("button", name="Edit lag to edit").click()
    form = page.get_by_role("form", name="Edit alert rule lag to edit")
    expect(form.get_by_label("Threshold (above)")).to_have_value("30")
    form.get_by_label("Threshold (above)").fill("45")
    form.get_by_label("For (s)").fill("5")
    form.get_by_label("Resolve at or below (optional)").fill("20")
    form.get_by_label("Keep firing (s)").fill("15")
    form.get_by_label("Severity").select_option("critical")
    form.get_by_label("Labels (key=value, …)").fill("team=db")
    form.get_by_role("button", name="Add override").click()
    override = form.get_by_role("group", name="Override 1")
    override.get_by_label("Replica").select_option(label="replica2")
    override.get_by_label("Its bound").fill("90")
    form.get_by_role("button", name="Preview last 24 h").click()
    expect(form.get_by_label("Preview")).to_contain_text("fired")
    form.get_by_role("button", name="Save rule").click()
    expect(form).to_have_count(0)
    expect(rules).to_contain_text("lag > 45, for 5 s, resolves ≤ 20")
    expect(rules).to_contain_text("critical")
    shot(page, "alerts-rule-edited")
    with api.sessions() as s:
        saved = s.scalars(select(AlertRule).where(AlertRule.id == rule_id)).one()
        assert saved.keep_firing_s == 15 and saved.labels == {"team": "db"}
        (over,) = saved.overrides
        assert over["threshold"] == 90 and over["instance_id"] is not None


def test_a_rule_scoped_to_a_channel_and_a_channel_override(page: Page, api: ApiServer):
    from sqlalchemy import select

    from lagscope.models import AlertRule, Channel, Instance

    page.goto("/alerts")
    form = page.get_by_role("form", name="New alert rule")
    form.get_by_label("Name").fill("replica1 default channel lag")
    form.get_by_label("Cluster").select_option(label="lab")
    form.get_by_label("Instance").select_option(label="replica1")
    # The channels come from the cluster's status (as last polled).
    form.get_by_role("combobox", name="Channel", exact=True).select_option(
        label="(default channel)"
    )
    form.get_by_role("button", name="Create rule").click()
    rules = page.get_by_role("table", name="Alert rules")
    expect(rules).to_contain_text("replica1 default channel lag")

    page.goto("/alerts")  # a fresh form: the last one keeps its scope for the next rule
    form.get_by_label("Name").fill("lab lag, replica2's channel later")
    form.get_by_label("Cluster").select_option(label="lab")
    form.get_by_role("button", name="Add channel override").click()
    override = form.get_by_role("group", name="Override 1")
    override.get_by_role("combobox", name="Channel").select_option(
        label="replica2 · (default channel)"
    )
    override.get_by_label("Its bound").fill("90")
    shot(page, "alerts-channel-override")
    form.get_by_role("button", name="Create rule").click()
    expect(rules).to_contain_text("lab lag, replica2's channel later")

    with api.sessions() as s:

        def channel_of(instance: str) -> int:
            return s.scalars(
                select(Channel.id)
                .join(Instance, Instance.id == Channel.instance_id)
                .where(Instance.name == instance, Channel.name == "")
            ).one()

        scoped = s.scalars(
            select(AlertRule).where(AlertRule.name.startswith("replica1 default"))
        ).one()
        assert scoped.channel_id == channel_of("replica1")
        overridden = s.scalars(select(AlertRule).where(AlertRule.name.startswith("lab lag"))).one()
        (over,) = overridden.overrides
        assert over["channel_id"] == channel_of("replica2") and over["threshold"] == 90
