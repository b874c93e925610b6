"""Demo mode (every caller an admin) takes changes only from its own pages, over real HTTP.

A page on any site the user visits can make the browser send a request to the demo on
127.0.0.1; the browser marks it with ``Sec-Fetch-Site`` and ``Origin``, which is what the demo
judges (api/same_origin.py). Outside demo mode such a request carries no credential at all."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import select

from lagscope.models import Instance

from .api_stack import ApiServer, api_server, sqlite_url

pytestmark = pytest.mark.integration

# What a browser sends along with a request a page of that origin makes.
CROSS_SITE = [
    {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
    {"Origin": "http://evil.example"},  # a browser without Fetch Metadata
    {"Origin": "null"},  # a sandboxed frame, a data: URL
    {"Sec-Fetch-Site": "same-site"},  # another port of 127.0.0.1 is the same *site*
    {"Sec-Fetch-Site": "cross-site"},
]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[ApiServer]:
    store = tmp_path_factory.mktemp("demo-origin")
    with api_server(sqlite_url(store), demo=True, ui_dist=str(store / "no-ui")) as server:
        yield server


def given_up_instance(demo: ApiServer, name: str) -> int:
    """An instance whose polling gave up on refused logins: retry-login would revive it."""
    with httpx.Client(base_url=demo.url) as c:
        cluster = c.post("/api/v1/clusters", json={"name": name})
        cluster.raise_for_status()
        made = c.post(
            "/api/v1/instances",
            json={
                "cluster_id": cluster.json()["id"],
                "name": "db",
                "host": "127.0.0.1",
                "port": 3306,
                "user": "u",
                "password": "p",
                "role": "source",
            },
        )
        made.raise_for_status()
    with demo.sessions() as session, session.begin():
        instance = session.get(Instance, made.json()["id"])
        assert instance is not None
        instance.login_state, instance.login_failures = "access_denied", 10
    return int(made.json()["id"])


def login_state(demo: ApiServer, instance_id: int) -> str | None:
    with demo.sessions() as session:
        return session.scalar(select(Instance.login_state).where(Instance.id == instance_id))


@pytest.mark.parametrize(
    "headers", CROSS_SITE, ids=lambda h: ",".join(f"{k}={v}" for k, v in h.items())
)
def test_a_cross_site_request_changes_nothing(demo: ApiServer, headers: dict[str, str]):
    instance_id = given_up_instance(demo, f"cross-{len(headers)}-{abs(hash(str(headers)))}")
    with httpx.Client(base_url=demo.url, headers=headers) as c:
        for path in (
            f"/api/v1/instances/{instance_id}/retry-login",
            "/api/v1/clusters/1/discover",
            "/api/v1/webhooks/1/test",
        ):
            refused = c.post(path)
            assert refused.status_code == 403, (path, refused.text)
            assert refused.headers["content-type"].startswith("application/problem+json")
            assert "from another site" in refused.json()["detail"]
        assert c.delete(f"/api/v1/instances/{instance_id}").status_code == 403
        assert c.patch(f"/api/v1/instances/{instance_id}", json={"port": 3307}).status_code == 403
        # Reads change nothing, and a page cannot read the answer without a CORS grant.
        assert c.get("/api/v1/clusters").status_code == 200
    assert login_state(demo, instance_id) == "access_denied"


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "same-origin", "Origin": "{url}"},
        {"Sec-Fetch-Site": "same-origin"},
        {"Origin": "{url}"},  # a browser without Fetch Metadata, on the demo's own page
        {"Sec-Fetch-Site": "none"},  # typed or bookmarked by the user: no page asked
        {},  # curl, lagscope annotate, a webhook delivery: no browser at all
    ],
    ids=["same-origin", "fetch-metadata-only", "origin-only", "user-initiated", "no-browser"],
)
def test_the_demo_own_pages_and_non_browsers_go_on(demo: ApiServer, headers: dict[str, str]):
    instance_id = given_up_instance(demo, f"own-{abs(hash(str(headers)))}")
    sent = {k: v.format(url=demo.url) for k, v in headers.items()}
    with httpx.Client(base_url=demo.url, headers=sent) as c:
        revived = c.post(f"/api/v1/instances/{instance_id}/retry-login")
        assert revived.status_code == 200, revived.text
        assert c.post("/api/v1/webhooks/999999/test").status_code == 404  # reached the route
    assert login_state(demo, instance_id) is None


def test_origins_are_compared_by_scheme_host_and_port():
    from lagscope.api.same_origin import cross_site_reason

    def reason(origin: str, host: str = "127.0.0.1:8000") -> str | None:
        return cross_site_reason("POST", "http", host, origin, None)

    assert reason("http://127.0.0.1:8000") is None
    assert reason("HTTP://127.0.0.1:8000/") is None
    assert reason("http://localhost", "localhost:80") is None
    assert reason("http://[::1]:8000", "[::1]:8000") is None
    for other in (
        "http://127.0.0.1:8001",
        "https://127.0.0.1:8000",
        "http://localhost:8000",
        "http://127.0.0.1:8000.evil.example",
        "http://127.0.0.1:8000@evil.example",
        "null",
        "",
        "http://127.0.0.1:99999",
    ):
        assert reason(other) is not None, other
    assert cross_site_reason("GET", "http", "127.0.0.1:8000", "http://evil.example", None) is None
    assert (
        cross_site_reason("PUT", "http", "h", None, "cross-site") == "Sec-Fetch-Site: 'cross-site'"
    )


def test_outside_demo_mode_a_cross_site_request_has_no_credential(tmp_path):
    """The UI's token lives in localStorage and goes in an Authorization header its own script
    adds: a page elsewhere can neither read it nor make the browser attach it (no cookie, no
    CORS grant), so its request is anonymous and refused — the same protection, by another
    means."""
    with api_server(sqlite_url(tmp_path)) as api:
        with api.client() as c:
            cluster = c.post("/api/v1/clusters", json={"name": "real"}).json()["id"]
        with httpx.Client(
            base_url=api.url,
            headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
        ) as c:
            for path in (f"/api/v1/clusters/{cluster}/discover", "/api/v1/instances/1/retry-login"):
                refused = c.post(path)
                assert refused.status_code == 401, refused.text
            preflight = c.options(
                "/api/v1/clusters",
                headers={
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "authorization",
                },
            )
            assert "access-control-allow-origin" not in preflight.headers
