"""Log in, and the overview: the lab's cluster with both replicas, live lag, a stopped replica."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.integration.api_stack import ADMIN, ApiServer
from tests.integration.pipeline_stack import Pipeline

from .conftest import shot

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def test_login_wrong_password_throttling_and_success(anonymous_page: Page, api: ApiServer):
    page = anonymous_page
    page.goto("/clusters/1?range=1h")
    expect(page).to_have_url(re.compile(r"/login\?next="))
    expect(page.get_by_role("heading", name="Lagscope")).to_be_visible()

    username = page.get_by_label("Username")
    password = page.get_by_label("Password")
    username.fill("mallory")
    password.fill("not-the-password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("Wrong username or password.")
    shot(page, "login-wrong-password")

    # Two free failures per username (set by the fixture): the next ones are throttled. The
    # first block lasts 1 s and doubles per failure; on a saturated machine one attempt can
    # outlast it, so try until a block outlasts an attempt (at most 8, under the address's 20).
    alert = page.get_by_role("alert")
    for _ in range(8):
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("button", name="Sign in")).to_be_enabled()
        if "Too many failed logins" in (alert.text_content() or ""):
            break
    expect(alert).to_contain_text("Too many failed logins")
    expect(page.get_by_role("alert")).to_contain_text("Try again in")
    shot(page, "login-throttled")

    username.fill(ADMIN[0])
    password.fill(ADMIN[1])
    page.get_by_role("button", name="Sign in").click()
    # Back where the login was asked for.
    expect(page).to_have_url(re.compile(r"/clusters/1\?range=1h$"))
    expect(page.get_by_text(f"{ADMIN[0]} (admin)")).to_be_visible()


def test_overview_shows_the_cluster_live(page: Page, pipeline: Pipeline):
    page.goto("/")
    card = page.get_by_role("article", name="lab")
    expect(card).to_be_visible()
    for replica in ("replica1", "replica2"):
        row = card.locator(f'[data-instance="{replica}"] tr[data-channel="{replica}"]')
        expect(row).to_contain_text("caught up")
        expect(row.get_by_label(f"lag of {replica}")).to_have_text(re.compile(r"\d"))
    expect(card.locator('[data-instance="replica2"]')).to_contain_text("far")
    # Live: the status the card shows is refreshed while the page stays open.
    stamp = card.get_attribute("data-generated-at")
    expect(card).not_to_have_attribute("data-generated-at", stamp or "")
    shot(page, "overview")


def test_settings_adds_an_instance_after_a_connection_test(page: Page, lab, api: ApiServer):
    """The connection test names the missing privileges and the GRANT that adds them."""
    server = lab.server("replica2")
    with lab.connect("replica2") as conn, conn.cursor() as cur:
        # Not in the replica's binlog: a GTID of its own would break replication from the source.
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute("CREATE USER IF NOT EXISTS 'ui_limited'@'%' IDENTIFIED BY 'limited-pw-1'")
        cur.execute("GRANT SLAVE MONITOR ON *.* TO 'ui_limited'@'%'")
    try:
        page.goto("/settings")
        expect(page).to_have_url(re.compile(r"/settings/servers$"))
        cluster = page.get_by_role("region", name="cluster lab")
        cluster.get_by_role("button", name="Add instance to lab").click()
        form = page.get_by_role("form", name="Add instance")
        form.get_by_label("Name").fill("replica2-limited")
        form.get_by_label("Host").fill(server.host)
        form.get_by_label("Port").fill(str(server.port))
        form.get_by_label("Monitoring user").fill("ui_limited")
        form.get_by_label("Password").fill("limited-pw-1")
        form.get_by_label("Region").fill("far")
        form.get_by_role("button", name="Test connection").click()
        report = form.get_by_role("status", name="Connection test")
        expect(report).to_contain_text("privileges are missing")
        privileges = report.get_by_role("list", name="Privileges")
        expect(privileges).to_contain_text("REPLICA MONITOR (found)")
        expect(privileges).to_contain_text("BINLOG MONITOR (missing)")
        expect(report.get_by_label("GRANT to run")).to_have_text(
            "GRANT BINLOG MONITOR, PROCESS ON *.* TO 'ui_limited'@'%';"
        )
        expect(report).to_contain_text("(default channel): IO yes, SQL running")
        shot(page, "settings-connection-test")
        form.get_by_role("button", name="Save instance").click()
        expect(form).to_be_hidden()
        row = cluster.locator('tr[data-instance="replica2-limited"]')
        expect(row).to_contain_text(f"{server.host}:{server.port}")
        expect(row).to_contain_text("ui_limited")
        shot(page, "settings-servers")
        row.get_by_role("button", name="Delete replica2-limited").click()
        row.get_by_role("button", name="Really delete replica2-limited").click()
        expect(row).to_have_count(0)
    finally:
        with lab.connect("replica2") as conn, conn.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute("DROP USER IF EXISTS 'ui_limited'@'%'")


def test_the_health_strip_says_when_the_broker_is_stopped(page: Page, pipeline: Pipeline):
    """Redis stopped: the header's strip names the broker as degraded and says polling and
    recording go on (the owner engine, the default, polls without the broker); it goes away
    once Redis is back. Last in the module: it breaks the pipeline for a while."""
    assert pipeline.redis is not None
    page.goto("/")
    expect(page.get_by_role("article", name="lab")).to_be_visible()
    strip = page.get_by_test_id("health-strip")
    expect(strip).to_have_count(0, timeout=30_000)
    pipeline.redis.stop()
    try:
        broker = strip.locator(".health-strip__item", has_text="broker")
        expect(broker).to_contain_text("The broker is unreachable", timeout=20_000)
        expect(broker).to_contain_text("polling and recording go on")
        expect(strip).to_have_class(re.compile(r"health-strip--warn"))
        expect(strip.locator(".health-strip__item", has_text="No worker has polled")).to_have_count(
            0
        )
        shot(page, "health-strip-redis-stopped")
    finally:
        pipeline.redis.start()
    expect(strip).to_have_count(0, timeout=30_000)
