"""Discovery's "same login as the source", over real HTTP against the real lab source: the
source's login goes only to a host:port the operator confirmed, and only at a port the source
itself reports.

Anyone with a replication account can make a source report a replica anywhere: the test does
what such a replica does (``COM_REGISTER_SLAVE`` with ``report_host`` / ``report_port``),
pointing at a fake MySQL server on loopback that keeps every byte it receives
(tests/unit/fakes/fake_mysql.py) — where the monitor user and a scramble of the source's password
would arrive."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest
from sqlalchemy import select

from lagscope.collectors.executor import PyMySQLExecutor
from lagscope.inventory import instances as inventory
from lagscope.models import Instance
from lagscope.security.secret_box import store_box
from tests.unit.fakes.fake_mysql import FakeMySQL

from .api_stack import ApiServer
from .lab_accounts import discovery_account

pytestmark = pytest.mark.integration

COM_REGISTER_SLAVE = 0x15
ROGUE_SERVER_ID = 4_242_424


@pytest.fixture(scope="module")
def api_settings() -> dict[str, Any]:
    return {"probe_per_minute": 100}


@pytest.fixture
def fake() -> Iterator[FakeMySQL]:
    with FakeMySQL(switch_to=None) as server:
        yield server


@pytest.fixture
def registered_at(lab, fake: FakeMySQL) -> Iterator[tuple[str, int]]:
    """A replica registered with the lab's source that reports the fake server's address."""
    user, password = lab.credentials.repl
    conn = pymysql.connect(host=lab.source.host, port=lab.source.port, user=user, password=password)
    host = b"127.0.0.1"
    payload = (
        struct.pack("<I", ROGUE_SERVER_ID)
        + bytes([len(host)])
        + host
        + b"\x00\x00"  # report_user, report_password
        + struct.pack("<H", fake.port)
        + struct.pack("<I", 0)  # replication rank
        + struct.pack("<I", 0)  # source id: the source fills it in
    )
    try:
        conn._execute_command(COM_REGISTER_SLAVE, payload)  # type: ignore[attr-defined]
        conn._read_ok_packet()  # type: ignore[attr-defined]
        yield "127.0.0.1", fake.port
    finally:
        conn.close()


def make_cluster(api: ApiServer, lab, name: str, login: tuple[str, str]) -> int:
    with api.client() as c:
        cluster = c.post("/api/v1/clusters", json={"name": name})
        cluster.raise_for_status()
        c.post(
            "/api/v1/instances",
            json={
                "cluster_id": cluster.json()["id"],
                "name": "source",
                "host": lab.source.host,
                "port": lab.source.port,
                "user": login[0],
                "password": login[1],
                "role": "source",
            },
        ).raise_for_status()
        return int(cluster.json()["id"])


def instances_at(api: ApiServer, port: int) -> list[Instance]:
    with api.sessions() as session:
        return list(session.scalars(select(Instance).where(Instance.port == port)))


def test_the_source_login_goes_only_to_a_confirmed_address(
    api: ApiServer, lab, fake: FakeMySQL, registered_at: tuple[str, int]
):
    login = discovery_account(lab)
    cluster_id = make_cluster(api, lab, "rogue-reported", login)
    host, port = registered_at
    with api.client() as c:
        found = c.post(f"/api/v1/clusters/{cluster_id}/discover")
        assert found.status_code == 200, found.text
        rogue = next(p for p in found.json()["proposals"] if p["server_id"] == ROGUE_SERVER_ID)
        assert (rogue["host"], rogue["port"]) == (host, port)  # the source vouches for it
        near = lab.server("replica1")
        unconfirmed: list[dict[str, Any]] = [
            {},  # the request as it was before confirmation existed
            {"confirmed": []},
            {"confirmed": [{"host": near.host, "port": near.port}]},
            {"confirmed": [{"host": host, "port": 1}]},
        ]
        for extra in unconfirmed:
            refused = c.post(
                f"/api/v1/clusters/{cluster_id}/discovered-replicas",
                json={"name": "rogue", "host": host, "port": port, **extra},
            )
            assert refused.status_code == 422, refused.text
            detail = refused.json()["detail"]
            assert f"{host}:{port} is not among those confirmed" in detail
            assert "the source's login" in detail
    assert instances_at(api, port) == []  # no worker will ever log in there
    assert fake.auth_answers == [] and fake.received == b""

    # Confirmed, it is added — and the fake does receive the login when the instance is
    # contacted as the pollers do (so its silence above meant something).
    with api.client() as c:
        added = c.post(
            f"/api/v1/clusters/{cluster_id}/discovered-replicas",
            json={
                "name": "rogue",
                "host": host,
                "port": port,
                "confirmed": [{"host": host, "port": port}],
            },
        )
    assert added.status_code == 201, added.text
    (instance,) = instances_at(api, port)
    spec = inventory.connection_spec(
        store_box(api.sessions, api.settings.secret_key), instance, 5.0, 5.0
    )
    executor = PyMySQLExecutor(spec)
    try:
        executor.connect()
    finally:
        executor.close()
    assert login[0].encode() + b"\x00" in bytes(fake.received)
    assert len(fake.auth_answers[0]) == 20  # a scramble of the source's password


def test_a_port_the_source_does_not_report_is_never_guessed(api: ApiServer, lab, fake: FakeMySQL):
    """The lab's monitor may not run SHOW SLAVE HOSTS: the replicas are seen only as binlog
    dump sessions from 127.0.0.1, their ports unknown. The operator's port, confirmed or not,
    does not make the source's login go there."""
    cluster_id = make_cluster(api, lab, "no-port", lab.credentials.monitor)
    with api.client() as c:
        found = c.post(f"/api/v1/clusters/{cluster_id}/discover")
        assert found.status_code == 200, found.text
        (proposal,) = found.json()["proposals"]
        assert (proposal["host"], proposal["port"]) == ("127.0.0.1", None)
        for port in (22, fake.port):
            refused = c.post(
                f"/api/v1/clusters/{cluster_id}/discovered-replicas",
                json={
                    "name": f"guessed-{port}",
                    "host": "127.0.0.1",
                    "port": port,
                    "confirmed": [{"host": "127.0.0.1", "port": port}],
                },
            )
            assert refused.status_code == 422, refused.text
            assert "does not report the port of 127.0.0.1" in refused.json()["detail"]
            assert instances_at(api, port) == []
    assert fake.received == b""
