"""The overview at fleet size: 100 generated clusters, 500 servers (tests/factories/fleet.py)
written straight into the store an API of this module serves (no lab, no pipeline: nothing
polls them). Problems first, each filter and the search (kept in the URL through a reload), a
constant number of requests whatever the fleet, and a refresh that moves no card."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.factories.fleet import (
    BEHIND,
    DISABLED,
    FIRING,
    REGIONS,
    STOPPED,
    UNREACHABLE,
    Fleet,
    advance,
    cluster_name,
    make_fleet,
)
from tests.integration.api_stack import ApiServer, api_server, sqlite_url

from .conftest import DIST, shot

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

COUNT = 100
# What the overview may ask for, whatever the number of clusters.
FLEET_REQUESTS = {"/api/v1/auth/me", "/api/v1/fleet/status", "/api/v1/fleet/sparklines",
                  "/api/v1/alerts/firing"}  # fmt: skip


@pytest.fixture(scope="module")
def fleet_store(tmp_path_factory) -> Iterator[tuple[ApiServer, Fleet]]:
    with api_server(sqlite_url(tmp_path_factory.mktemp("fleet")), ui_dist=str(DIST)) as server:
        yield server, make_fleet(server.sessions, COUNT, datetime.now(UTC))


@pytest.fixture(scope="module")
def api(fleet_store) -> ApiServer:
    """This module's API (the conftest's ``page`` signs in to it): the fleet's, not the lab's."""
    return fleet_store[0]


@pytest.fixture(scope="module")
def fleet(fleet_store) -> Fleet:
    return fleet_store[1]


def card_names(page: Page) -> list[str]:
    return page.locator("article.cluster-card h2").all_inner_texts()


def shown(page: Page) -> Any:
    return page.get_by_role("status", name="Clusters shown")


def open_overview(page: Page, query: str = "") -> None:
    page.goto(f"/{query}")
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(page.locator("article.cluster-card").first).to_be_visible()


def test_problems_first_in_a_constant_number_of_requests(page: Page, fleet: Fleet):
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/api/" in r.url else None)
    open_overview(page)
    expect(shown(page)).to_have_text(f"all {COUNT} clusters")
    expect(page.locator("article.cluster-card")).to_have_count(COUNT)
    unreachable = sorted(cluster_name(i) for i in UNREACHABLE)
    behind = sorted((i for i in BEHIND if i != FIRING), key=lambda i: -BEHIND[i][0])
    first = [cluster_name(FIRING), cluster_name(STOPPED), *unreachable]
    first += [cluster_name(i) for i in behind]
    names = card_names(page)
    assert names[: len(first)] == first
    # Then the caught-up ones by name (their lags share the under-a-second band), disabled last.
    rest = names[len(first) : -1]
    assert rest == sorted(rest) and len(rest) == COUNT - len(first) - 1
    assert names[-1] == cluster_name(DISABLED)
    firing_card = page.get_by_role("article", name=cluster_name(FIRING), exact=True)
    expect(firing_card).to_contain_text("1 alert firing")
    expect(firing_card).to_have_attribute("data-state", "firing")
    blocked = page.get_by_role("article", name=cluster_name(9), exact=True)
    expect(blocked.get_by_test_id("channel-cause")).to_have_text(
        "why: blocked by a session on the replica"
    )
    down = page.get_by_role("article", name=cluster_name(17), exact=True)
    expect(down).to_contain_text("unreachable")
    # A refresh later (the status polls every 5 s, the sparklines every 10 s), still only the
    # fleet's own requests: none per card.
    card = page.locator("article.cluster-card").first
    stamp = card.get_attribute("data-generated-at") or ""
    expect(card).not_to_have_attribute("data-generated-at", stamp)
    with page.expect_request(lambda r: "/api/v1/fleet/sparklines" in r.url):
        pass
    paths = {urlsplit(url).path for url in asked}
    assert paths <= FLEET_REQUESTS, paths
    assert {"/api/v1/fleet/status", "/api/v1/fleet/sparklines"} <= paths
    shot(page, "overview-fleet")


def expected(fleet: Fleet, keep) -> list[str]:
    return [fleet.names[i] for i in range(COUNT) if keep(i)]


def regions_of(index: int) -> set[str]:
    # The source's region, and every third cluster's last replica in the next one.
    own = REGIONS[index % len(REGIONS)]
    return {own, REGIONS[(index + 1) % len(REGIONS)]} if index % 3 == 0 else {own}


def test_each_filter_and_the_search_narrow_the_cards_and_survive_a_reload(page: Page, fleet):
    open_overview(page)
    filters = page.get_by_role("search", name="Filter clusters")

    filters.get_by_label("State").select_option("behind")
    behind = expected(fleet, lambda i: i in BEHIND)
    expect(shown(page)).to_have_text(f"{len(behind)} of {COUNT} clusters")
    assert sorted(card_names(page)) == sorted(behind)
    expect(page).to_have_url(re.compile(r"\?state=behind$"))

    filters.get_by_label("State").select_option("unreachable")
    expect(shown(page)).to_have_text(f"{len(UNREACHABLE)} of {COUNT} clusters")
    assert sorted(card_names(page)) == sorted(cluster_name(i) for i in UNREACHABLE)

    filters.get_by_label("State").select_option("")
    filters.get_by_label("Region").select_option("ningxia")
    in_ningxia = expected(fleet, lambda i: "ningxia" in regions_of(i))
    expect(shown(page)).to_have_text(f"{len(in_ningxia)} of {COUNT} clusters")
    assert sorted(card_names(page)) == sorted(in_ningxia)

    filters.get_by_label("Region").select_option("")
    filters.get_by_label("Cause").select_option("large_transaction")
    big = expected(fleet, lambda i: i in BEHIND and BEHIND[i][2] == "large_transaction")
    expect(shown(page)).to_have_text(f"{len(big)} of {COUNT} clusters")
    assert card_names(page) == [cluster_name(FIRING), cluster_name(26)]  # problems first still

    # Two filters at once, kept in the URL: a reload shows the same cards.
    filters.get_by_label("Region").select_option(REGIONS[26 % len(REGIONS)])
    expect(shown(page)).to_have_text(f"1 of {COUNT} clusters")
    expect(page).to_have_url(re.compile(r"cause=large_transaction"))
    page.reload()
    expect(shown(page)).to_have_text(f"1 of {COUNT} clusters")
    assert card_names(page) == [cluster_name(26)]
    expect(filters.get_by_label("Cause")).to_have_value("large_transaction")

    # The search: a server's name finds its cluster; part of a name finds several.
    page.goto("/")
    search = filters.get_by_label("Search")
    search.fill(f"{cluster_name(71)}-db3")
    expect(shown(page)).to_have_text(f"1 of {COUNT} clusters")
    assert card_names(page) == [cluster_name(71)]
    search.fill("SEARCH-01")
    hits = expected(fleet, lambda i: cluster_name(i).startswith("search-01"))
    expect(shown(page)).to_have_text(f"{len(hits)} of {COUNT} clusters")
    assert sorted(card_names(page)) == sorted(hits)
    expect(page).to_have_url(re.compile(r"\?q=SEARCH-01$"))
    search.fill("no such cluster")
    expect(page.get_by_text("No cluster matches these filters.")).to_be_visible()
    page.get_by_role("button", name="Clear the filters").click()
    expect(shown(page)).to_have_text(f"all {COUNT} clusters")
    shot(page, "overview-fleet-filtered")


def boxes(page: Page) -> dict[str, tuple[float, float, float, float]]:
    """Each card's box in page coordinates, by cluster id."""
    found = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('article.cluster-card')]
             .map(c => { const r = c.getBoundingClientRect();
                         return [c.dataset.clusterId, [r.left + scrollX, r.top + scrollY,
                                                       r.width, r.height]]; }))"""
    )
    return {k: tuple(v) for k, v in found.items()}


def test_a_refresh_moves_no_card(page: Page, api: ApiServer, fleet: Fleet):
    open_overview(page)
    expect(page.locator("article.cluster-card")).to_have_count(COUNT)
    lag = page.get_by_label(f"lag of {cluster_name(9)}-db1", exact=True)
    expect(lag).to_have_text("2 m")  # 120 s
    before, order = boxes(page), card_names(page)
    assert len({h for *_, h in before.values()}) == 1  # every card the same height
    # A poll round moves every lag by 5 %: 120 s → 126 s, 40 s → 42 s, 0.8 s → 0.84 s. None
    # changes its band, so nothing may move.
    advance(api.sessions, fleet, datetime.now(UTC), 1.05)
    expect(lag).to_have_text("2 m 6 s")
    expect(page.get_by_label(f"lag of {cluster_name(26)}-db1", exact=True)).to_have_text("42 s")
    assert card_names(page) == order
    assert boxes(page) == before
