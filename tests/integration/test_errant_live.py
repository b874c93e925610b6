"""Errant transactions on the live lab: a write on replica1 itself, binlogged, is counted and
named in the store, the status, /metrics and an alert, and goes once it is removed.

The write goes to a GTID domain of its own (77): MariaDB's ``gtid_strict_mode`` (on in the lab)
would stop replica1's SQL thread at the source's next transaction had it taken the source's
domain, and a domain the source never uses can be dropped from replica1's binlog state
afterwards (purge the logs holding it, then ``FLUSH BINARY LOGS DELETE_DOMAIN_ID``), which leaves
the lab as it was for the other modules.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pymysql
import pytest
from prometheus_client.parser import text_string_to_metric_families

from lagscope.lab import Lab
from lagscope.models import Channel

from .api_stack import ApiServer
from .pipeline_stack import Pipeline
from .waiting import wait_until

pytestmark = pytest.mark.integration

DOMAIN = 77
PROBE = "errant_probe"


@pytest.fixture(scope="module")
def api_store(pipeline: Pipeline) -> str:
    return pipeline.url


def replica_query(lab: Lab, sql: str) -> list[dict[str, Any]]:
    conn = lab.connect("replica1")
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            columns = [c[0] for c in cur.description or ()]
            return [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]
    finally:
        conn.close()


def remove_errant_domain(lab: Lab) -> None:
    """Drop the probe without a binlog event, then the domain from replica1's binlog state: the
    logs holding its events are purged first, as MariaDB requires. A log is purged only once
    InnoDB has checkpointed its transactions, so the purge is retried until the domain goes."""
    conn = lab.connect("replica1")
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute(f"DROP DATABASE IF EXISTS {PROBE}")
            cur.execute("FLUSH BINARY LOGS")

        def purged_and_dropped() -> bool:
            with conn.cursor() as cur:
                cur.execute("SHOW MASTER STATUS")
                cur.execute("PURGE BINARY LOGS TO %s", (cur.fetchone()[0],))
                cur.execute(f"FLUSH BINARY LOGS DELETE_DOMAIN_ID = ({DOMAIN})")
            return True

        wait_until(
            purged_and_dropped,
            timeout_s=60,
            interval_s=0.5,
            ignore=(pymysql.err.OperationalError,),
            message=f"domain {DOMAIN} dropped from replica1's binlog state",
        )
    finally:
        conn.close()


def write_errant(lab: Lab) -> str:
    """Three transactions written on replica1 in domain 77: the GTID the last one took."""
    lab.wait_caught_up(timeout_s=60)
    conn = lab.connect("replica1")
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 1")
            cur.execute(f"SET SESSION gtid_domain_id = {DOMAIN}")
            cur.execute(f"CREATE DATABASE {PROBE}")
            cur.execute(f"CREATE TABLE {PROBE}.t (id INT PRIMARY KEY) ENGINE=InnoDB")
            cur.execute(f"INSERT INTO {PROBE}.t VALUES (1)")
            cur.execute("SELECT @@session.last_gtid")
            return str(cur.fetchone()[0])
    finally:
        conn.close()


@pytest.fixture
def errant_writes(lab: Lab) -> Iterator[str]:
    try:
        yield write_errant(lab)
    finally:
        remove_errant_domain(lab)
    # Replication itself never noticed: the source's domain 0 goes on as before.
    lab.wait_caught_up(timeout_s=60)


def replica1(api: ApiServer, cluster_id: int) -> dict[str, Any]:
    with api.client() as c:
        response = c.get(f"/api/v1/clusters/{cluster_id}/status")
    assert response.status_code == 200, response.text
    (channel,) = [ch for ch in response.json()["channels"] if ch["instance"] == "replica1"]
    found: dict[str, Any] = channel
    return found


def replica1_counting(api: ApiServer, cluster_id: int, count: int) -> dict[str, Any] | None:
    found = replica1(api, cluster_id)
    return found if found["errant_trx"] == count else None


def errant_gauges(api: ApiServer) -> dict[str, float]:
    with api.client() as c:
        response = c.get("/metrics")
    assert response.status_code == 200, response.text
    return {
        sample.labels["server"]: sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
        if sample.name == "lagscope_errant_trx"
    }


def errant_gauges_counting(api: ApiServer, count: int) -> dict[str, float] | None:
    found = errant_gauges(api)
    return found if found.get("replica1") == count else None


def firing(api: ApiServer, rule_id: int) -> list[dict[str, Any]]:
    with api.client() as c:
        response = c.get("/api/v1/alerts/firing")
    assert response.status_code == 200, response.text
    return [f for f in response.json() if f["rule_id"] == rule_id and f["phase"] == "firing"]


@pytest.mark.timeout(300)
def test_a_write_on_a_replica_is_an_errant_transaction_everywhere_until_removed(
    lab: Lab, pipeline: Pipeline, api: ApiServer, errant_writes: str
) -> None:
    before = replica_query(lab, "SELECT @@global.gtid_slave_pos AS applied")[0]["applied"]
    assert f"{DOMAIN}-" not in before  # the writes are not replicated ones
    server_id = replica_query(lab, "SELECT @@server_id AS id")[0]["id"]
    assert errant_writes == f"{DOMAIN}-{server_id}-3"

    channel = wait_until(
        lambda: replica1_counting(api, pipeline.cluster_id, 3),
        timeout_s=60,
        interval_s=0.5,
        message="the status to count replica1's three errant transactions",
    )
    assert channel is not None
    assert channel["errant_gtids"] == errant_writes
    assert channel["errant_problem"].startswith(
        f"replica1 has 3 transactions the source never wrote: up to {errant_writes}"
    )
    assert "never fail over to replica1" in channel["errant_problem"]
    # Stored: the count per poll, the set on the channel; replica2 has none.
    newest, other = pipeline.latest("replica1"), pipeline.latest("replica2")
    assert newest is not None and newest.errant_trx == 3
    assert other is not None and other.errant_trx == 0
    with pipeline.session() as s:
        stored = s.get_one(Channel, pipeline.channel_id("replica1"))
        assert stored.errant_gtids == errant_writes
    gauges = wait_until(
        lambda: errant_gauges_counting(api, 3),
        timeout_s=30,
        message="lagscope_errant_trx for replica1",
    )
    assert gauges is not None and gauges["replica2"] == 0
    with api.client() as c:
        created = c.post(
            "/api/v1/alerts/rules",
            json={"name": "errant on replica1", "metric": "errant_trx", "threshold": 0},
        )
    assert created.status_code == 201, created.text
    rule_id = created.json()["id"]

    wait_until(
        lambda: firing(api, rule_id), timeout_s=60, interval_s=0.5, message="errant_trx firing"
    )

    remove_errant_domain(lab)
    cleared = wait_until(
        lambda: replica1_counting(api, pipeline.cluster_id, 0),
        timeout_s=60,
        interval_s=0.5,
        message="the errant transactions gone once their domain was removed",
    )
    assert cleared is not None
    assert cleared["errant_gtids"] == "" and cleared["errant_problem"] is None
    wait_until(lambda: not firing(api, rule_id), timeout_s=60, interval_s=0.5, message="resolved")
