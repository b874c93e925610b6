"""A real Prometheus scrapes /metrics with a bearer token: Lagscope's labels survive as they are.

Prometheus owns the `instance` label (the scrape target) and renames a clashing one to
`exported_instance`; Lagscope names servers with `server` so nothing is renamed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .api_stack import ApiServer, api_server, sqlite_url
from .prometheus_server import prometheus_server, query
from .waiting import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def api(tmp_path) -> Iterator[ApiServer]:
    with api_server(sqlite_url(tmp_path)) as server:
        yield server


@pytest.fixture
def prometheus(tmp_path: Path, api: ApiServer) -> Iterator[str]:
    target = api.url.removeprefix("http://")
    config = (
        "global:\n  scrape_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: lagscope\n"
        "    scrape_interval: 1s\n"
        "    metrics_path: /metrics\n"
        "    authorization:\n"
        f"      credentials: {api.admin_token}\n"
        "    static_configs:\n"
        f"      - targets: ['{target}']\n"
    )
    with prometheus_server(tmp_path, config) as url:
        yield url


def test_a_real_scrape_keeps_the_server_label(api: ApiServer, prometheus: str):
    with api.client() as c:
        cluster = c.post("/api/v1/clusters", json={"name": "orders"}).json()["id"]
        for name, region in (("db1", "beijing"), ("db2", "ningxia")):
            created = c.post(
                "/api/v1/instances",
                json={
                    "cluster_id": cluster,
                    "name": name,
                    "host": "127.0.0.1",
                    "port": 9,
                    "user": "mon",
                    "password": "not-used-here",
                    "region": region,
                },
            )
            assert created.status_code == 201, created.text
    # `up` is Prometheus's own: 1 once the bearer-authenticated scrape succeeded.
    wait_until(
        lambda: [r for r in query(prometheus, 'up{job="lagscope"}') if r["value"][1] == "1"],
        timeout_s=60,
        interval_s=0.5,
        message="Prometheus to scrape the API successfully",
    )
    series = wait_until(
        lambda: query(prometheus, "lagscope_up"), timeout_s=30, message="lagscope_up series"
    )
    servers = {s["metric"]["server"]: s["metric"] for s in series}
    assert set(servers) == {"db1", "db2"}
    for name, labels in servers.items():
        assert not [k for k in labels if k.startswith("exported_")], labels
        assert labels["cluster"] == "orders"
        assert labels["instance"] == api.url.removeprefix("http://")  # the scrape target's
        assert labels["region"] == {"db1": "beijing", "db2": "ningxia"}[name]
