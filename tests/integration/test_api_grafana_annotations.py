"""Deploy tools that post annotations to Grafana post the same body here: over real
HTTP on Grafana's own path and under /api/v1, and from ``lagscope annotate``."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from .api_stack import ApiServer
from .test_api_journal import Topology, make_topology, token_for

pytestmark = pytest.mark.integration

T = datetime(2031, 3, 4, 5, 6, 7, 890_000, tzinfo=UTC)


def ms(moment: datetime) -> int:
    return round(moment.timestamp() * 1000)


def notes(api: ApiServer, cluster_id: int) -> list[dict]:
    with api.client() as c:
        response = c.get(
            "/api/v1/annotations",
            params={
                "cluster_id": cluster_id,
                "start": (T - timedelta(days=1)).isoformat(),
                "end": (T + timedelta(days=1)).isoformat(),
            },
        )
    assert response.status_code == 200, response.text
    return response.json()


def test_grafanas_body_on_grafanas_path_becomes_a_note(api: ApiServer) -> None:
    shop = make_topology(api, "shop-g")
    body = {
        "dashboardUID": "jcIIG-07z",  # Grafana's own fields mean nothing here: ignored
        "panelId": 2,
        "time": ms(T),
        "timeEnd": ms(T + timedelta(minutes=5)),
        "tags": ["deploy", "cluster:shop-g", "instance:far"],
        "text": "deployed orders-api v2.4",
    }
    with api.client() as c:
        response = c.post("/api/annotations", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["message"] == "Annotation added" and isinstance(answer["id"], int)
    (note,) = notes(api, shop.cluster_id)
    assert note["id"] == answer["id"]
    assert note["text"] == "deployed orders-api v2.4" and note["tags"] == ["deploy"]
    assert note["instance_id"] == shop.instances["far"]
    assert datetime.fromisoformat(note["starts_at"]) == T
    assert datetime.fromisoformat(note["ends_at"]) == T + timedelta(minutes=5)


def test_under_api_v1_with_the_cluster_in_the_query_and_a_point_in_time(api: ApiServer) -> None:
    shop = make_topology(api, "shop-q")
    with api.client() as c:
        response = c.post(
            "/api/v1/annotations/grafana",
            params={"cluster": "shop-q"},
            json={"time": ms(T), "timeEnd": ms(T), "tags": ["release"], "text": "point"},
        )
    assert response.status_code == 200, response.text
    (note,) = notes(api, shop.cluster_id)
    assert note["ends_at"] is None and note["scope"] == "cluster" and note["tags"] == ["release"]


@pytest.fixture(scope="module")
def refusing(api: ApiServer) -> Topology:
    return make_topology(api, "shop-e")


@pytest.mark.parametrize(
    ("params", "body", "status", "says"),
    [
        ({}, {"text": "x"}, 422, "say which cluster"),
        ({"cluster": "nope"}, {"text": "x"}, 404, "'nope' does not exist"),
        ({"cluster": "shop-e"}, {"text": "x", "tags": ["instance:ghost"]}, 422, "no instance"),
        ({"cluster": "shop-e"}, {"text": "x", "tags": ["cluster:other"]}, 422, "a tag says"),
        ({"cluster": "shop-e"}, {"text": " "}, 422, "text"),
        ({"cluster": "shop-e"}, {"text": "x", "time": -1}, 422, "time"),
        ({"cluster": "shop-e"}, {"text": "x", "tags": ["t" * 40]}, 422, "1 to 32 characters"),
        ({"cluster": "shop-e"}, {"text": "x", "time": 2000, "timeEnd": 1000}, 422, "ends_at"),
    ],
)
def test_bad_bodies_are_refused_with_the_reason_and_store_nothing(
    api: ApiServer, refusing: Topology, params: dict, body: dict, status: int, says: str
) -> None:
    with api.client() as c:
        response = c.post("/api/v1/annotations/grafana", params=params, json=body)
    assert response.status_code == status, response.text
    assert says in response.text
    assert notes(api, refusing.cluster_id) == []


def test_only_editors_may_post(api: ApiServer) -> None:
    make_topology(api, "shop-r")
    viewer = token_for(api, "grafana-viewer", "viewer")
    body = {"text": "x", "tags": ["cluster:shop-r"]}
    with api.client(viewer) as c:
        assert c.post("/api/annotations", json=body).status_code == 403
    with api.client("") as c:  # no token at all
        assert c.post("/api/annotations", json=body).status_code == 401


def test_lagscope_annotate_posts_through_the_api(api: ApiServer) -> None:
    shop = make_topology(api, "shop-cli")
    editor = token_for(api, "deploy-bot", "editor")
    run = subprocess.run(
        [
            sys.executable, "-m", "lagscope", "annotate", "schema migration 42",
            "--cluster", "shop-cli", "--instance", "near", "--tag", "deploy",
            "--at", T.isoformat(), "--until", (T + timedelta(seconds=90)).isoformat(),
            "--url", api.url,
        ],
        env={"LAGSCOPE_TOKEN": editor, "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    (note,) = notes(api, shop.cluster_id)
    assert note["id"] == answer["id"] and note["author"] == "deploy-bot"
    assert note["instance_id"] == shop.instances["near"] and note["tags"] == ["deploy"]
    assert datetime.fromisoformat(note["ends_at"]) - datetime.fromisoformat(
        note["starts_at"]
    ) == timedelta(seconds=90)
    refused = subprocess.run(
        [sys.executable, "-m", "lagscope", "annotate", "x", "--cluster", "nope", "--url", api.url],
        env={"LAGSCOPE_TOKEN": editor, "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode != 0 and "'nope' does not exist" in refused.stderr
