"""Settings → servers → Discover replicas in the browser: the lab's source proposes its two
replicas (replica2, behind the latency proxy, under its own address); after choosing "same
login as the source" the dialog sends it nowhere until an address is ticked, says where it will
go, and one click adds the ticked replica — which the pipeline then polls with the copied
login."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.integration.api_stack import ApiServer
from tests.integration.lab_accounts import discovery_account
from tests.integration.waiting import wait_until

from .conftest import shot

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def cluster_named(api: ApiServer, name: str) -> dict[str, Any]:
    with api.client() as c:
        return next(x for x in c.get("/api/v1/clusters").json() if x["name"] == name)


def test_discover_proposes_both_replicas_and_one_click_adds_one(page: Page, api: ApiServer, lab):
    user, password = discovery_account(lab)
    source = lab.server("source")
    with api.client() as c:
        cluster = c.post("/api/v1/clusters", json={"name": "discover-e2e"})
        cluster.raise_for_status()
        c.post(
            "/api/v1/instances",
            json={
                "cluster_id": cluster.json()["id"],
                "name": "source",
                "host": source.host,
                "port": source.port,
                "user": user,
                "password": password,
                "role": "source",
            },
        ).raise_for_status()
    near, far = lab.server("replica1"), lab.server("replica2")

    page.goto("/settings/servers")
    section = page.get_by_role("region", name="cluster discover-e2e")
    section.get_by_role("button", name="Discover replicas").click()
    found = section.get_by_role("region", name="Discovered replicas of discover-e2e")
    add_near = found.get_by_role("button", name=f"Add {near.host}:{near.port}")
    expect(add_near).to_be_visible()
    expect(found.get_by_role("button", name=f"Add {far.host}:{far.port}")).to_be_visible()
    expect(found.get_by_role("row")).to_have_count(3)  # the header and the two replicas
    shot(page, "settings-discovered-replicas")

    # No login chosen yet: nothing is sent.
    add_near.click()
    expect(found).to_contain_text("Choose the login to use first.")
    assert len(cluster_named(api, "discover-e2e")["instances"]) == 1

    found.get_by_role("radio", name=f"Same login as the source ({user}").click()
    destinations = found.get_by_role("status", name="Where the source's login goes")
    expect(destinations).to_contain_text("goes to no replica yet")
    # Chosen but not confirmed for this address: still nothing is sent.
    add_near.click()
    expect(found).to_contain_text(
        f"Tick {near.host}:{near.port} first to confirm the source's login may be sent there."
    )
    assert len(cluster_named(api, "discover-e2e")["instances"]) == 1

    found.get_by_role("checkbox", name=f"send to {near.host}:{near.port}").check()
    expect(destinations).to_have_text(
        f"The source's login (user {user} and its stored password) will be sent to: "
        f"{near.host}:{near.port} — and nowhere else."
    )
    expect(found.get_by_role("checkbox", name=f"send to {far.host}:{far.port}")).not_to_be_checked()
    shot(page, "settings-discovered-replicas-confirmed")
    add_near.click()
    expect(found).to_contain_text(f"already monitored as replica-{near.server_id}")
    expect(found.get_by_role("button", name=f"Add {far.host}:{far.port}")).to_be_visible()
    expect(section.locator(f'tr[data-instance="replica-{near.server_id}"]')).to_be_visible()
    shot(page, "settings-discovered-replica-added")

    added = next(
        i for i in cluster_named(api, "discover-e2e")["instances"] if i["role"] == "replica"
    )
    assert (added["host"], added["port"], added["user"], added["has_password"]) == (
        near.host,
        near.port,
        user,
        True,
    )
    # The copied login works on the replica: the pipeline polls it.
    wait_until(
        lambda: next(
            i for i in cluster_named(api, "discover-e2e")["instances"] if i["id"] == added["id"]
        )["last_ok_at"],
        timeout_s=60,
        interval_s=0.5,
        message="the added replica polled with the source's login",
    )
