"""Replica discovery on the real lab, over real HTTP: the source (MariaDB) reports its two
replicas — replica2's replication link goes through the latency proxy, and it reports the
address users connect to (``report_host``/``report_port``, lab/topology/config.py), not the proxy's;
one click adds one with the source's login; the processlist fallback when SHOW SLAVE HOSTS is
refused; a clear error naming the grants when nothing is visible."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from sqlalchemy import select

from lagscope.models import Instance

from .api_stack import ApiServer
from .lab_accounts import discovery_account

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api_settings() -> dict[str, Any]:
    return {"probe_per_minute": 100}


def make_cluster(api: ApiServer, lab, name: str, login: tuple[str, str]) -> int:
    source = lab.server("source")
    with api.client() as c:
        cluster = c.post("/api/v1/clusters", json={"name": name})
        cluster.raise_for_status()
        made = c.post(
            "/api/v1/instances",
            json={
                "cluster_id": cluster.json()["id"],
                "name": "source",
                "host": source.host,
                "port": source.port,
                "user": login[0],
                "password": login[1],
                "role": "source",
            },
        )
        made.raise_for_status()
        return int(cluster.json()["id"])


def discover(api: ApiServer, cluster_id: int) -> Any:
    with api.client() as c:
        return c.post(f"/api/v1/clusters/{cluster_id}/discover")


def test_the_source_proposes_both_replicas_and_one_click_adds_one(api: ApiServer, lab):
    login = discovery_account(lab)
    cluster_id = make_cluster(api, lab, "discovered", login)
    found = discover(api, cluster_id)
    assert found.status_code == 200, found.text
    body = found.json()
    replicas = {r.name: r for r in lab.replicas}
    assert body["source_server_id"] == lab.source.server_id and body["problems"] == []
    assert sorted((p["host"], p["port"], p["server_id"]) for p in body["proposals"]) == sorted(
        (r.host, r.port, r.server_id) for r in replicas.values()
    )  # replica2's own port, not its proxy's
    assert all(
        p["seen_as"] == "registered" and p["port"] is not None and p["monitored_as"] is None
        for p in body["proposals"]
    )

    near = next(p for p in body["proposals"] if p["port"] == replicas["replica1"].port)
    with api.client() as c:
        added = c.post(
            f"/api/v1/clusters/{cluster_id}/discovered-replicas",
            json={
                "name": near["suggested_name"],
                "host": near["host"],
                "port": near["port"],
                "confirmed": [{"host": near["host"], "port": near["port"]}],
            },
        )
    assert added.status_code == 201, added.text
    assert added.json()["user"] == login[0] and added.json()["has_password"] is True
    assert login[1] not in added.text
    with api.sessions() as session:
        rows = {
            i.name: i
            for i in session.scalars(select(Instance).where(Instance.cluster_id == cluster_id))
        }
    assert rows[near["suggested_name"]].password_enc == rows["source"].password_enc  # copied as is

    again = discover(api, cluster_id).json()["proposals"]
    assert {p["port"]: p["monitored_as"] for p in again} == {
        replicas["replica1"].port: near["suggested_name"],
        replicas["replica2"].port: None,
    }
    with api.client() as c:
        twice = c.post(
            f"/api/v1/clusters/{cluster_id}/discovered-replicas",
            json={
                "name": "dup",
                "host": near["host"],
                "port": near["port"],
                "confirmed": [{"host": near["host"], "port": near["port"]}],
            },
        )
        assert twice.status_code == 409, twice.text


def test_the_source_login_goes_only_to_a_replica_the_source_reports(api: ApiServer, lab):
    login = discovery_account(lab)
    cluster_id = make_cluster(api, lab, "not-reported", login)
    with api.client() as c:
        elsewhere = c.post(
            f"/api/v1/clusters/{cluster_id}/discovered-replicas",
            json={
                "name": "mine",
                "host": "127.0.0.1",
                "port": lab.source.port,
                "confirmed": [{"host": "127.0.0.1", "port": lab.source.port}],
            },
        )
    assert elsewhere.status_code == 422, elsewhere.text
    assert "not a replica the source reports" in elsewhere.json()["detail"]
    with api.sessions() as session:
        assert session.scalar(select(Instance).where(Instance.name == "mine")) is None


def test_without_the_grant_the_dump_sessions_are_proposed_without_a_port(api: ApiServer, lab):
    """The lab's monitor has PROCESS but not REPLICATION MASTER ADMIN: the processlist
    fallback. Both replicas connect from 127.0.0.1 (replica2 through the proxy, which is on
    loopback too), so one address is proposed, its port unknown, and the grant is named."""
    cluster_id = make_cluster(api, lab, "fallback", lab.credentials.monitor)
    found = discover(api, cluster_id)
    assert found.status_code == 200, found.text
    body = found.json()
    (problem,) = body["problems"]
    assert "GRANT REPLICATION MASTER ADMIN ON *.* TO 'monitor'@'%'" in problem
    (proposal,) = body["proposals"]
    assert (proposal["host"], proposal["port"]) == ("127.0.0.1", None)
    assert proposal["seen_as"] == "dump_session" and proposal["server_id"] is None


def test_a_user_who_may_see_nothing_gets_the_grants_named(api: ApiServer, lab):
    password = secrets.token_urlsafe(12)
    admin = lab.connect("source")
    try:
        with admin.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")  # the source's alone
            cur.execute("CREATE OR REPLACE USER 'blind'@'%%' IDENTIFIED BY %s", (password,))
            cur.execute("GRANT BINLOG MONITOR, REPLICA MONITOR ON *.* TO 'blind'@'%'")
        cluster_id = make_cluster(api, lab, "blind", ("blind", password))
        refused = discover(api, cluster_id)
    finally:
        with admin.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute("DROP USER IF EXISTS 'blind'@'%'")
        admin.close()
    assert refused.status_code == 502, refused.text
    assert refused.json()["title"] == "AccessDenied"
    detail = refused.json()["detail"]
    assert "GRANT REPLICATION MASTER ADMIN ON *.* TO 'blind'@'%'" in detail and "PROCESS" in detail


def test_a_cluster_without_a_source_and_a_viewer_are_refused(api: ApiServer):
    with api.client() as c:
        cluster_id = c.post("/api/v1/clusters", json={"name": "sourceless"}).json()["id"]
        none = c.post(f"/api/v1/clusters/{cluster_id}/discover")
        assert none.status_code == 422 and "no source" in none.json()["detail"]
        assert c.post("/api/v1/clusters/999999/discover").status_code == 404
    from lagscope.security import users

    with api.sessions() as session, session.begin():
        viewer = users.create_user(session, "discovery-viewer", "a-long-password", "viewer")
        token = users.issue_token(session, viewer, "test")
    with api.client(token) as c:
        assert c.post(f"/api/v1/clusters/{cluster_id}/discover").status_code == 403
