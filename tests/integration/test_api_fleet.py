"""``GET /api/v1/fleet/status`` and ``/fleet/sparklines`` over real HTTP, on a SQLite store
holding a generated fleet (tests/factories/fleet.py): every cluster in one answer, as each
cluster's own status says it, in a number of queries that does not grow with the fleet."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event

from lagscope.api.schemas.status import FleetStatusOut
from lagscope.api.schemas.status_history import SparklinesOut
from tests.factories.fleet import BEHIND, FIRING, Fleet, cluster_name, make_fleet

from .api_stack import ApiServer, api_server, sqlite_url

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def fleet_api(tmp_path_factory) -> Iterator[tuple[ApiServer, Fleet]]:
    with api_server(sqlite_url(tmp_path_factory.mktemp("api-fleet"))) as api:
        yield api, make_fleet(api.sessions, 20, datetime.now(UTC))


def get(api: ApiServer, path: str, **params: Any) -> Any:
    with api.client() as client:
        response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_every_cluster_as_its_own_status_says(fleet_api):
    api, fleet = fleet_api
    body = get(api, "/api/v1/fleet/status")
    FleetStatusOut.model_validate(body)
    assert [c["id"] for c in body["clusters"]] == fleet.ids
    for position in (0, FIRING, 9, 17):
        entry = body["clusters"][position]
        alone = get(api, f"/api/v1/clusters/{entry['id']}/status")
        assert entry["name"] == alone["name"] == cluster_name(position)
        assert entry["instances"] == alone["instances"]
        # The newest sample and everything read from it; only the staleness clock differs.
        assert entry["channels"] == alone["channels"]
        topology = get(api, f"/api/v1/clusters/{entry['id']}/topology")
        assert entry["edges"] == [
            {k: e[k] for k in ("channel_id", "source_id", "replica_id")} for e in topology["edges"]
        ]
    behind = body["clusters"][9]["channels"][0]
    assert (behind["lag_s"], behind["verdict"]) == (BEHIND[9][0], "apply_bound")
    assert [c["cause"] for c in behind["causes"]] == ["blocked_by_session"]
    unreachable = body["clusters"][17]["instances"][1]
    assert (unreachable["name"], unreachable["reachable"]) == ("search-017-db1", False)
    assert {i["reachable"] for c in body["clusters"][:17] for i in c["instances"]} == {True}


def test_the_queries_do_not_grow_with_the_fleet(fleet_api, tmp_path):
    api, _ = fleet_api
    engine = api.sessions.kw["bind"]
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    event.listen(engine, "before_cursor_execute", count)
    try:
        get(api, "/api/v1/fleet/status")
        small = len(statements)
        make_fleet(api.sessions, 20, datetime.now(UTC), first=100)  # 40 clusters now
        statements.clear()
        body = get(api, "/api/v1/fleet/status")
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert len(body["clusters"]) == 40
    # The principal's token check and the status itself: the same count for twice the clusters.
    assert len(statements) == small, statements


def test_sparklines_give_every_channel_on_one_grid(fleet_api):
    api, fleet = fleet_api
    body = get(api, "/api/v1/fleet/sparklines", minutes=15, points=60)
    SparklinesOut.model_validate(body)
    assert body["end"] - body["start"] == 15 * 60_000
    assert body["origin"] <= body["start"] < body["origin"] + body["bucket_ms"]
    lines = {line["channel_id"]: line["values"] for line in body["lines"]}
    for channel_id, lag in fleet.lags.items():
        values = lines[channel_id]
        assert len(values) == len(next(iter(lines.values())))
        known = [v for v in values if v is not None]
        if lag is None:  # stopped or unreachable: its line is all gap
            assert known == []
        else:  # a sample every 15 s in ~15 s buckets: nearly every bucket, each the lag
            assert len(known) >= 50 and set(known) == {lag}


def test_bad_parameters_are_422(fleet_api):
    api, _ = fleet_api
    with api.client() as client:
        assert client.get("/api/v1/fleet/sparklines", params={"points": 1}).status_code == 422
        assert client.get("/api/v1/fleet/sparklines", params={"minutes": 0}).status_code == 422
    with api.client("") as anonymous:
        assert anonymous.get("/api/v1/fleet/status").status_code == 401
