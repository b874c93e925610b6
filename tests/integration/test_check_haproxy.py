"""HAProxy in front of the lab's replicas, each replica health-checked through Lagscope's lag
check (docs/proxies.md's configuration): a replica made to lag stops receiving reads within two
polls, and gets them back once caught up.

The lag is real: a session on replica1 holds a table's metadata lock and the source alters that
table, so replica1's applier waits behind it (its SQL thread still running) while the heartbeat
written on the source every 0.25 s piles up behind the ALTER: the heartbeat lag grows a second a
second. Ending the session lets it catch up."""

from __future__ import annotations

from typing import Any

import pymysql
import pytest

from lagscope.lab.incidents import metadata_lock

from .api_stack import ApiServer
from .haproxy_server import HAProxy, haproxy_path, start_haproxy
from .pipeline_stack import Pipeline, now
from .waiting import wait_until

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(haproxy_path() is None, reason="haproxy is not installed"),
]

MAX_LAG_S = 2.0
REPLICAS = ("replica1", "replica2")


@pytest.fixture(scope="module")
def api_store(pipeline: Pipeline) -> str:
    return pipeline.url


@pytest.fixture(scope="module")
def haproxy(lab, api: ApiServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    with api.client() as admin:
        made = admin.post("/api/v1/check-tokens", json={"name": "haproxy", "clusters": ["lab"]})
        assert made.status_code == 201, made.text
    host, port = api.url.removeprefix("http://").rsplit(":", 1)
    with start_haproxy(
        tmp_path_factory.mktemp("haproxy"),
        api=(host, int(port)),
        cluster="lab",
        replicas={name: (lab.server(name).host, lab.server(name).port) for name in REPLICAS},
        token=made.json()["token"],
        max_lag_s=MAX_LAG_S,
    ) as proxy:
        yield proxy


def answering_ports(lab, proxy: HAProxy, connections: int = 6) -> list[int]:
    """``SELECT @@port`` over ``connections`` new connections through HAProxy (round robin)."""
    user, password = lab.credentials.monitor
    ports = []
    for _ in range(connections):
        conn = pymysql.connect(
            host="127.0.0.1", port=proxy.reads_port, user=user, password=password,
            connect_timeout=5, read_timeout=10,
        )  # fmt: skip
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT @@port")
                ports.append(int(cur.fetchone()[0]))
        finally:
            conn.close()
    return ports


def up(proxy: HAProxy, name: str) -> bool:
    return proxy.status("reads", name).startswith("UP")


def test_a_lagging_replica_stops_getting_reads_and_gets_them_back(
    lab, pipeline: Pipeline, api: ApiServer, haproxy: HAProxy
) -> None:
    port = {name: lab.server(name).port for name in REPLICAS}
    wait_until(
        lambda: all(up(haproxy, name) for name in REPLICAS),
        timeout_s=30,
        message="both replicas UP in HAProxy",
    )
    assert set(answering_ports(lab, haproxy)) == set(port.values())

    started = now()
    with metadata_lock(lab, replica="replica1"):

        def over() -> list[Any]:
            return [r for r in pipeline.samples("replica1", started) if (r.lag_s or 0) > MAX_LAG_S]

        wait_until(
            lambda: not up(haproxy, "replica1"),
            timeout_s=60,
            message="HAProxy to take replica1 out",
        )
        # Counted in polls (a busy box spaces them out): by the time HAProxy has taken it out,
        # at most two polls had shown replica1 over max_lag.
        seen = over()
        assert 1 <= len(seen) <= 2, [(r.ts, r.lag_s) for r in seen]
        assert seen[0].sql_running is True  # lagging, not stopped
        assert up(haproxy, "replica2")
        assert set(answering_ports(lab, haproxy)) == {port["replica2"]}
        stats = haproxy.stat()[("check_replica1", "replica1")]
        assert (stats["check_status"], stats["check_code"]) == ("L7STS", "429"), stats
    # The session ended: replica1 catches up and comes back.
    wait_until(lambda: up(haproxy, "replica1"), timeout_s=60, message="replica1 back in HAProxy")
    latest = pipeline.latest("replica1")
    assert latest is not None and (latest.lag_s or 0) <= MAX_LAG_S * 0.8
    wait_until(
        lambda: set(answering_ports(lab, haproxy)) == set(port.values()),
        timeout_s=10,
        message="reads reaching both replicas again",
    )
    assert haproxy.proc.poll() is None, haproxy.log_tail()
    pipeline.assert_alive()
