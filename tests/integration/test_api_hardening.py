"""The API's edges as an attacker or a careless client meets them:
dates at the ends of the calendar, oversized and malformed bodies, control characters in names,
problem types, security headers, and API docs that work without a network."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from .api_stack import ApiServer

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api_settings(tmp_path_factory) -> dict[str, object]:
    # No UI build here, whatever frontend/dist holds: GET / then redirects to the docs.
    return {"ui_dist": str(tmp_path_factory.mktemp("api-hardening") / "no-ui-build")}


@pytest.fixture(scope="module")
def cluster_id(api: ApiServer) -> int:
    with api.client() as c:
        created = c.post("/api/v1/clusters", json={"name": "edges"})
        assert created.status_code == 201, created.text
        return int(created.json()["id"])


EDGE_DATES = ("0001-01-01T00:30:00Z", "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00")


@pytest.mark.parametrize("edge", EDGE_DATES)
def test_dates_at_the_ends_of_the_calendar_are_422_not_500(api: ApiServer, cluster_id, edge):
    paths = [
        f"/api/v1/series?metric=lag&end={edge}",
        f"/api/v1/series?metric=lag&start={edge}",
        f"/api/v1/clusters/{cluster_id}/param-changes?end={edge}",
        f"/api/v1/clusters/{cluster_id}/param-changes?start={edge}",
        f"/api/v1/clusters/{cluster_id}/journal?end={edge}",
        f"/api/v1/annotations?cluster_id={cluster_id}&end={edge}",
        f"/api/v1/annotations?cluster_id={cluster_id}&start={edge}",
        f"/api/v1/compare?channel_id=1&start={edge}",
        f"/api/v1/compare?channel_id=1&a_start={edge}",
    ]
    with api.client() as c:
        for path in paths:
            response = c.get(path.replace("+", "%2B"))
            assert response.status_code == 422, (path, response.status_code, response.text)
        created = c.post(
            "/api/v1/annotations",
            json={"cluster_id": cluster_id, "starts_at": edge, "text": "edge"},
        )
        assert created.status_code == 422, created.text


def test_problem_types_are_spelled_as_words(api: ApiServer):
    with api.client() as c:
        missing = c.get("/api/v1/no-such-route")
        assert missing.status_code == 404
        assert missing.json()["type"] == "/problems/not-found"
        wrong_method = c.delete("/api/v1/clusters")
        assert wrong_method.json()["type"] == "/problems/method-not-allowed"
    with api.client("") as anonymous:
        assert anonymous.get("/api/v1/clusters").json()["type"] == "/problems/not-authenticated"
    for kind in (missing.json()["type"], wrong_method.json()["type"]):
        assert re.fullmatch(r"/problems/[a-z]+(-[a-z]+)*", kind), kind


def test_malformed_json_gets_a_readable_detail(api: ApiServer):
    with api.client() as c:
        response = c.post(
            "/api/v1/clusters",
            content=b'{"name": "x",',
            headers={"content-type": "application/json"},
        )
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert "not valid JSON" in detail and "position" in detail, detail


def test_request_bodies_over_the_limit_are_refused(api: ApiServer):
    limit = api.settings.max_body_bytes
    with api.client() as c:
        huge = c.post(
            "/api/v1/clusters",
            content=b'{"name": "' + b"x" * limit + b'"}',
            headers={"content-type": "application/json"},
        )
        assert huge.status_code == 413, huge.text
        assert huge.json()["type"] == "/problems/content-too-large"

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
            yield b'{"name": "'
            for _ in range(limit // 65536 + 2):
                yield b"y" * 65536
            yield b'"}'

        streamed = c.post(
            "/api/v1/clusters", content=chunks(), headers={"content-type": "application/json"}
        )
        assert streamed.status_code == 413, streamed.text
        assert c.get("/api/v1/clusters").status_code == 200


@pytest.mark.parametrize("name", ["bad\x00name", "tab\tname", "bell\x07", "line\nbreak", "\x7f"])
def test_control_characters_are_refused_in_names(api: ApiServer, name):
    with api.client() as c:
        cluster = c.post("/api/v1/clusters", json={"name": name})
        assert cluster.status_code == 422, cluster.text
        assert cluster.json()["errors"][0]["field"] == "name"
        user = c.post(
            "/api/v1/users",
            json={"username": name, "password": "a-long-password-1", "role": "viewer"},
        )
        assert user.status_code == 422, user.text


BAD_TEXTS = [
    "bad\x00host",
    "tab\there",
    "line\nbreak",
    "\x7f",
    "evil\u202egpj.exe",
    "iso\u2066late",
]


@pytest.mark.parametrize("text", BAD_TEXTS)
def test_control_and_bidi_characters_are_refused_in_host_and_region(
    api: ApiServer, cluster_id, text
):
    """Host and region are shown and logged like names."""
    good = {"cluster_id": cluster_id, "name": "ctl", "host": "db1", "user": "u", "region": "eu"}
    with api.client() as c:
        for field in ("host", "region"):
            created = c.post("/api/v1/instances", json={**good, field: text})
            assert created.status_code == 422, (field, created.text)
            assert created.json()["errors"][0]["field"] == field
        tested = c.post("/api/v1/instances/test", json={"host": text, "user": "u"})
        assert tested.status_code == 422, tested.text
        made = c.post("/api/v1/instances", json={**good, "name": f"ctl-{len(text)}"})
        assert made.status_code == 201, made.text
        iid = made.json()["id"]
        for field in ("host", "region"):
            patched = c.patch(f"/api/v1/instances/{iid}", json={field: text})
            assert patched.status_code == 422, (field, patched.text)
        assert c.delete(f"/api/v1/instances/{iid}").status_code == 204


def test_security_headers(api: ApiServer):
    with api.client() as c:
        for response in (c.get("/healthz"), c.get("/api/v1/clusters"), c.get("/api/v1/nope")):
            assert response.headers["x-content-type-options"] == "nosniff"
            assert "server" not in response.headers, response.headers.get("server")
        me = c.get("/api/v1/auth/me")
        assert me.headers["cache-control"] == "no-store"
    with api.client("") as anonymous:
        login = anonymous.post(
            "/api/v1/auth/login", json={"username": "nobody", "password": "whatever-long"}
        )
        assert login.headers["cache-control"] == "no-store"


def test_root_redirects_to_the_docs_and_the_docs_work_offline(api: ApiServer):
    with api.client("") as anonymous:
        root = anonymous.get("/", follow_redirects=False)
        assert root.status_code in (302, 307), root.status_code
        assert root.headers["location"] == "/api/v1/docs"
        docs = anonymous.get("/api/v1/docs")
        assert docs.status_code == 200
        html = docs.text
        assert "cdn." not in html and "//unpkg" not in html, html
        assets = re.findall(r'(?:src|href)="(/[^"]+)"', html)
        assert any(a.endswith(".js") for a in assets) and any(a.endswith(".css") for a in assets)
        for asset in assets:
            loaded = anonymous.get(asset)
            assert loaded.status_code == 200, asset
            assert len(loaded.content) > 100, asset
