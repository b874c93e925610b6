"""Settings → servers in the browser: a cluster edit sends only what changed (a custom heartbeat
table survives it); an instance edit sends its password only when typed or needed, asks for it
when the instance moves, tests an edited instance with its stored password (instance_id), and
edits TLS (a CA bundle or a pinned public key outside LAGSCOPE_TLS_CA_DIR: the API's problem
shown). Each test makes a cluster of its own, so the lab cluster keeps polling as is. And
Settings → your password: it asks for the current one, says when that is wrong, and signs you
out everywhere when changed."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Locator, Page, Request, expect

from lagscope.security import users
from tests.integration.api_stack import ApiServer

from .conftest import shot

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def patch_body(page: Page, save: Locator) -> Any:
    """Click ``save`` and return the JSON body of the PATCH it sends."""

    def is_patch(request: Request) -> bool:
        return request.method == "PATCH" and "/api/v1/" in request.url

    with page.expect_request(is_patch) as sent:
        save.click()
    return sent.value.post_data_json


def make_cluster(api: ApiServer, body: dict[str, Any]) -> dict[str, Any]:
    with api.client() as c:
        made = c.post("/api/v1/clusters", json=body)
        made.raise_for_status()
        return dict(made.json())


def get_cluster(api: ApiServer, cluster_id: int) -> dict[str, Any]:
    with api.client() as c:
        got = c.get(f"/api/v1/clusters/{cluster_id}")
        got.raise_for_status()
        return dict(got.json())


def make_instance(api: ApiServer, lab, cluster_id: int, name: str) -> dict[str, Any]:
    server = lab.server("replica2")
    user, password = lab.credentials.monitor
    body = {
        "cluster_id": cluster_id,
        "name": name,
        "host": server.host,
        "port": server.port,
        "user": user,
        "password": password,
        "region": "far",
    }
    with api.client() as c:
        made = c.post("/api/v1/instances", json=body)
        made.raise_for_status()
        return dict(made.json())


def test_editing_a_cluster_keeps_its_custom_heartbeat_table(page: Page, api: ApiServer):
    heartbeat = {"mode": "pt-heartbeat", "schema_name": "percona", "table": "hb_custom"}
    cluster_id = make_cluster(api, {"name": "hb-custom", "heartbeat": heartbeat})["id"]
    page.goto("/settings/servers")
    cluster = page.get_by_role("region", name="cluster hb-custom")
    cluster.get_by_role("button", name="Edit", exact=True).click()
    form = page.get_by_role("form", name="Edit cluster hb-custom")
    expect(form.get_by_label("Heartbeat schema")).to_have_value("percona")
    expect(form.get_by_label("Heartbeat table")).to_have_value("hb_custom")
    form.get_by_label("Poll every (s)").fill("2")
    sent = patch_body(page, form.get_by_role("button", name="Save cluster"))
    assert sent == {"poll_interval_s": 2}
    expect(form).to_be_hidden()
    expect(cluster).to_contain_text("polled every 2 s")
    saved = get_cluster(api, cluster_id)["heartbeat"]
    assert (saved["mode"], saved["schema_name"], saved["table"]) == (
        "pt-heartbeat",
        "percona",
        "hb_custom",
    )

    cluster.get_by_role("button", name="Edit", exact=True).click()
    form.get_by_label("Heartbeat table").fill("hb_other")
    shot(page, "settings-cluster-heartbeat")
    sent = patch_body(page, form.get_by_role("button", name="Save cluster"))
    assert sent == {"heartbeat": {"table": "hb_other"}}
    expect(form).to_be_hidden()
    saved = get_cluster(api, cluster_id)["heartbeat"]
    assert (saved["schema_name"], saved["table"]) == ("percona", "hb_other")


def test_moving_an_instance_asks_for_its_password(page: Page, api: ApiServer, lab):
    cluster_id = make_cluster(api, {"name": "moves"})["id"]
    instance = make_instance(api, lab, cluster_id, "mover")
    page.goto("/settings/servers")
    cluster = page.get_by_role("region", name="cluster moves")

    # The address stays: no password is sent, so the stored one stays.
    cluster.get_by_role("button", name="Edit mover").click()
    form = page.get_by_role("form", name="Edit instance mover")
    form.get_by_label("Region").fill("near")
    assert patch_body(page, form.get_by_role("button", name="Save instance")) == {"region": "near"}
    expect(form).to_be_hidden()

    # Another port: the password is asked for, and the form is not sent without it.
    new_port = lab.server("replica1").port
    cluster.get_by_role("button", name="Edit mover").click()
    form.get_by_label("Port").fill(str(new_port))
    password = form.get_by_label("Password", exact=True)
    expect(password).to_have_attribute("required", "")
    expect(form).to_contain_text("the stored password is not sent to a new address")
    shot(page, "settings-instance-moved")
    form.get_by_role("button", name="Save instance").click()
    assert password.evaluate("input => input.validity.valueMissing") is True
    expect(form).to_be_visible()
    (stored,) = get_cluster(api, cluster_id)["instances"]
    assert (stored["port"], stored["has_password"]) == (instance["port"], True)

    password.fill(lab.credentials.monitor[1])
    sent = patch_body(page, form.get_by_role("button", name="Save instance"))
    assert sent == {"port": new_port, "password": lab.credentials.monitor[1]}
    expect(form).to_be_hidden()
    (stored,) = get_cluster(api, cluster_id)["instances"]
    assert (stored["port"], stored["has_password"]) == (new_port, True)


def connection_test_body(page: Page, test: Locator) -> Any:
    """Click ``test`` and return the JSON body of the connection test it sends."""

    def is_test(request: Request) -> bool:
        return request.method == "POST" and request.url.endswith("/api/v1/instances/test")

    with page.expect_request(is_test) as sent:
        test.click()
    return sent.value.post_data_json


def test_testing_an_edited_instance_uses_its_stored_password(page: Page, api: ApiServer, lab):
    """The bug: Edit → Test connection without retyping the password said "access denied"."""
    cluster_id = make_cluster(api, {"name": "retest"})["id"]
    instance = make_instance(api, lab, cluster_id, "retested")
    page.goto("/settings/servers")
    cluster = page.get_by_role("region", name="cluster retest")
    cluster.get_by_role("button", name="Edit retested").click()
    form = page.get_by_role("form", name="Edit instance retested")
    test = form.get_by_role("button", name="Test connection")

    sent = connection_test_body(page, test)
    assert sent["instance_id"] == instance["id"] and "password" not in sent
    report = form.get_by_role("status", name="Connection test")
    expect(report).to_contain_text("mariadb")
    expect(form.get_by_role("list", name="Privileges")).to_contain_text("REPLICA MONITOR")
    expect(form.get_by_role("alert")).to_have_count(0)

    # Another port, password still empty: the API refuses before contacting anything.
    form.get_by_label("Port").fill(str(lab.server("replica1").port))
    sent = connection_test_body(page, test)
    assert sent["instance_id"] == instance["id"] and "password" not in sent
    expect(form.get_by_role("alert")).to_contain_text("retype it")


def test_instance_tls_mode_and_a_ca_bundle_the_api_refuses(page: Page, api: ApiServer, lab):
    cluster_id = make_cluster(api, {"name": "tls"})["id"]
    make_instance(api, lab, cluster_id, "guarded")
    page.goto("/settings/servers")
    cluster = page.get_by_role("region", name="cluster tls")
    cluster.get_by_role("button", name="Edit guarded").click()
    form = page.get_by_role("form", name="Edit instance guarded")
    tls = form.get_by_role("combobox", name="TLS")
    expect(tls).to_have_value("preferred")
    expect(form).to_contain_text("certificate not checked; clear text when it offers none")
    tls.select_option("verify_ca")
    expect(form).to_contain_text("must chain to the CA bundle")
    form.get_by_label("CA bundle path").fill("/tmp/elsewhere/ca.pem")
    # Other trust: the stored password is asked for again.
    expect(form).to_contain_text("CA bundle changed")
    form.get_by_label("Password", exact=True).fill(lab.credentials.monitor[1])
    form.get_by_role("button", name="Save instance").click()
    expect(form.get_by_role("alert")).to_contain_text(
        "tls_ca_path must be inside /etc/lagscope/ca (LAGSCOPE_TLS_CA_DIR)"
    )
    shot(page, "settings-instance-tls-refused")

    # A stronger mode without a CA bundle keeps the stored password: none is sent.
    form.get_by_label("CA bundle path").fill("")
    form.get_by_label("Password", exact=True).fill("")
    tls.select_option("required")
    expect(form.get_by_label("CA bundle path")).to_have_count(0)
    sent = patch_body(page, form.get_by_role("button", name="Save instance"))
    assert sent == {"tls": "required"}
    expect(form).to_be_hidden()
    (stored,) = get_cluster(api, cluster_id)["instances"]
    assert (stored["tls"], stored["tls_ca_path"], stored["has_password"]) == (
        "required",
        None,
        True,
    )


def test_pinning_a_server_public_key(page: Page, api: ApiServer, lab):
    """The pin field sits with the TLS fields under preferred only; pinning a key asks for the
    password again, and a key outside LAGSCOPE_TLS_CA_DIR shows the API's refusal."""
    cluster_id = make_cluster(api, {"name": "pin"})["id"]
    make_instance(api, lab, cluster_id, "pinned")
    page.goto("/settings/servers")
    cluster = page.get_by_role("region", name="cluster pin")
    cluster.get_by_role("button", name="Edit pinned").click()
    form = page.get_by_role("form", name="Edit instance pinned")
    key = form.get_by_label("Server public key path")
    expect(key).to_have_value("")
    expect(form).to_contain_text("never with a key the server sends")
    key.fill("/tmp/elsewhere/db-public.pem")
    expect(form).to_contain_text("public key changed")
    form.get_by_label("Password", exact=True).fill(lab.credentials.monitor[1])
    sent = patch_body(page, form.get_by_role("button", name="Save instance"))
    assert sent == {
        "server_public_key_path": "/tmp/elsewhere/db-public.pem",
        "password": lab.credentials.monitor[1],
    }
    expect(form.get_by_role("alert")).to_contain_text(
        "server_public_key_path must be inside /etc/lagscope/ca (LAGSCOPE_TLS_CA_DIR)"
    )
    shot(page, "settings-instance-pin-refused")
    form.get_by_role("combobox", name="TLS").select_option("verify_identity")
    expect(form.get_by_label("Server public key path")).to_have_count(0)


def test_changing_your_password_asks_for_the_current_one(anonymous_page: Page, api: ApiServer):
    """The form sends current_password; a wrong one is named, the right one
    changes the password and signs this browser out (every token of the user is revoked)."""
    with api.sessions() as session, session.begin():
        users.create_user(session, "pwuser", "the-old-password", "viewer")
    page = anonymous_page
    page.goto("/settings/password")
    page.get_by_label("Username").fill("pwuser")
    page.get_by_label("Password").fill("the-old-password")
    page.get_by_role("button", name="Sign in").click()
    form = page.get_by_role("form", name="Change your password")
    form.get_by_label("Current password").fill("not-my-password")
    form.get_by_label("New password (10+ characters)").fill("the-new-password")
    form.get_by_label("New password again").fill("the-new-password")
    sent = patch_body(page, form.get_by_role("button", name="Change password"))
    assert sent == {"password": "the-new-password", "current_password": "not-my-password"}
    expect(page.get_by_role("alert")).to_have_text("That is not your current password.")
    shot(page, "password-wrong-current")
    form.get_by_label("Current password").fill("the-old-password")
    form.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()  # signed out
    page.get_by_label("Username").fill("pwuser")
    page.get_by_label("Password").fill("the-new-password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("form", name="Change your password")).to_be_visible()


def test_the_audit_page_shows_who_changed_what_and_never_a_secret(page: Page, api: ApiServer, lab):
    cluster_id = make_cluster(api, {"name": "audited"})["id"]
    made = make_instance(api, lab, cluster_id, "audited-r")
    page.goto("/settings/servers")
    cluster = page.get_by_role("region", name="cluster audited")
    cluster.get_by_role("button", name="Edit", exact=True).click()
    form = page.get_by_role("form", name="Edit cluster audited")
    form.get_by_label("Poll every (s)").fill("3")
    patch_body(page, form.get_by_role("button", name="Save cluster"))
    expect(form).to_be_hidden()

    page.get_by_role("link", name="Audit").click()
    trail = page.get_by_role("table", name="Audit trail")
    newest = trail.locator("tbody tr").first
    expect(newest).to_contain_text("update cluster audited")
    expect(newest).to_contain_text("poll_interval_s: 1 → 3")
    expect(newest).to_contain_text("admin")
    expect(newest).to_contain_text("127.0.0.1")
    created = trail.locator("tbody tr", has_text="create instance audited-r")
    expect(created).to_contain_text("password set")
    _, password = lab.credentials.monitor
    assert password not in page.content()
    page.get_by_role("form", name="Filter the audit trail").get_by_label("What").select_option(
        "instance"
    )
    expect(trail.locator("tbody tr", has_text="cluster audited")).to_have_count(0)
    expect(trail.locator("tbody tr", has_text="create instance audited-r")).to_have_count(1)
    shot(page, "settings-audit")
    assert made["name"] == "audited-r"
