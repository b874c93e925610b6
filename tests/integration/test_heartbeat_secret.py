"""The heartbeat writer's password goes only to the source it was entered for.

An editor deletes a cluster's source and adds one of their own, a fake MySQL server on loopback
that records every byte a client sends while logging in: the real API and a real
``lagscope heartbeat`` process must send it nothing, and say why, until the password is
entered again (then, and only then, the writer logs in there: the control that shows the fake
would have seen it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import ClassVar

import pytest
from sqlalchemy import select, text, update

from lagscope.collectors.executor import ConnectionSpec
from lagscope.db import make_engine, make_session_factory
from lagscope.errors import LoginRefused
from lagscope.ingest.heartbeat import HeartbeatService, writer_plans
from lagscope.inventory.server_logins import Backoff
from lagscope.models import Cluster, Instance
from lagscope.security.secret_box import store_box
from tests.unit.fakes.fake_mysql import FakeMySQL

from .api_stack import SECRET, ApiServer, api_server, sqlite_url
from .stack import ManagedProcess, free_port, lagscope_command
from .waiting import wait_until

pytestmark = pytest.mark.integration

HB_USER = "hb_writer_17"
HB_PASSWORD = "hb-Secret-entered-for-db1"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return sqlite_url(tmp_path_factory.mktemp("heartbeat-secret"))


@pytest.fixture(scope="module")
def api(store: str) -> Iterator[ApiServer]:
    with api_server(store) as server:
        yield server


@pytest.fixture()
def writer(store: str, api: ApiServer, tmp_path: Path) -> Iterator[ManagedProcess]:
    env = {
        **os.environ,
        "LAGSCOPE_DATABASE_URL": store,
        "LAGSCOPE_SECRET_KEY": SECRET,
        "PYTHONUNBUFFERED": "1",
    }
    process = ManagedProcess(
        "heartbeat", lagscope_command("heartbeat", "--refresh", "0.5"), tmp_path, env
    )
    try:
        yield process
    finally:
        process.stop()


def make_cluster(api: ApiServer, name: str) -> tuple[int, int]:
    """A cluster with a heartbeat login and a source at a closed loopback port."""
    with api.client() as c:
        made = c.post(
            "/api/v1/clusters",
            json={
                "name": name,
                "heartbeat": {"mode": "lagscope", "user": HB_USER, "password": HB_PASSWORD},
            },
        )
        assert made.status_code == 201, made.text
        cid = made.json()["id"]
        source = c.post(
            "/api/v1/instances",
            json={
                "cluster_id": cid,
                "name": "db1",
                "host": "127.0.0.1",
                "port": free_port(),
                "user": "mon",
                "password": "mon-pw-1",
                "role": "source",
            },
        )
        assert source.status_code == 201, source.text
        assert c.get(f"/api/v1/clusters/{cid}").json()["heartbeat"]["has_password"] is True
    return cid, source.json()["id"]


def test_a_replaced_source_never_receives_the_heartbeat_password(
    api: ApiServer, writer: ManagedProcess
) -> None:
    cid, source_id = make_cluster(api, "hb-replaced")
    with FakeMySQL() as rogue, api.client() as c:
        assert c.delete(f"/api/v1/instances/{source_id}").status_code == 204
        added = c.post(
            "/api/v1/instances",
            json={
                "cluster_id": cid,
                "name": "mine",
                "host": "127.0.0.1",
                "port": rogue.port,
                "user": "mon",
                "password": "anything",
                "role": "source",
            },
        )
        assert added.status_code == 201, added.text
        heartbeat = c.get(f"/api/v1/clusters/{cid}").json()["heartbeat"]
        assert heartbeat["has_password"] is False, heartbeat
        assert "no source any more" in heartbeat["problem"], heartbeat
        assert "enter it again" in heartbeat["problem"]
        # The writer (refreshing every 0.5 s) has seen the cluster and says why it skips it.
        writer.wait_for_log(f"heartbeat writer for cluster {cid} not started: the heartbeat")
        assert writer.alive()
        assert bytes(rogue.received) == b""  # not even a connection: nothing reached it
        # Control: entered again (by someone who means this source), the writer logs in there.
        entered = c.patch(f"/api/v1/clusters/{cid}", json={"heartbeat": {"password": "new-1"}})
        assert entered.status_code == 200 and entered.json()["heartbeat"]["problem"] is None
        wait_until(
            lambda: HB_USER.encode() in rogue.received,
            timeout_s=30,
            message="the writer's login at the source the password was entered for",
        )
    assert HB_PASSWORD.encode() not in rogue.received


def test_a_moved_or_weakened_source_clears_the_heartbeat_password(api: ApiServer) -> None:
    cid, source_id = make_cluster(api, "hb-moved")
    with api.client() as c:
        # Stronger TLS is followed (the password goes to the same server, better protected).
        stronger = c.patch(
            f"/api/v1/instances/{source_id}", json={"tls": "required", "region": "eu"}
        )
        assert stronger.status_code == 200, stronger.text
        assert c.get(f"/api/v1/clusters/{cid}").json()["heartbeat"]["has_password"] is True
        weaker = c.patch(
            f"/api/v1/instances/{source_id}", json={"tls": "preferred", "password": "mon-pw-2"}
        )
        assert weaker.status_code == 200, weaker.text
        heartbeat = c.get(f"/api/v1/clusters/{cid}").json()["heartbeat"]
        assert heartbeat["has_password"] is False
        assert "tls was lowered from required to preferred" in heartbeat["problem"]
        c.patch(f"/api/v1/clusters/{cid}", json={"heartbeat": {"password": HB_PASSWORD}})
        moved = c.patch(
            f"/api/v1/instances/{source_id}", json={"port": free_port(), "password": "mon-pw-3"}
        )
        assert moved.status_code == 200, moved.text
        heartbeat = c.get(f"/api/v1/clusters/{cid}").json()["heartbeat"]
        assert heartbeat["has_password"] is False and "the source moved" in heartbeat["problem"]
        # The heartbeat user goes with its password too.
        c.patch(f"/api/v1/clusters/{cid}", json={"heartbeat": {"password": HB_PASSWORD}})
        renamed = c.patch(f"/api/v1/clusters/{cid}", json={"heartbeat": {"user": "root"}})
        assert renamed.status_code == 422 and "heartbeat password again" in renamed.text


def test_the_writer_refuses_a_source_changed_behind_the_services(api: ApiServer) -> None:
    """A hand edit of the store (no service saw it) still sends nothing: the writer compares
    the source with the one the password was entered for before every start."""
    cid, source_id = make_cluster(api, "hb-by-hand")
    box = store_box(api.sessions, SECRET)
    with api.sessions() as session:
        assert [p.cluster_id for p in writer_plans(session, box) if p.cluster_id == cid] == [cid]
    with api.sessions() as session, session.begin():
        session.execute(update(Instance).where(Instance.id == source_id).values(port=1))
    skipped: dict[int, str] = {}
    with api.sessions() as session:
        plans = writer_plans(session, box, skipped=skipped)
        cluster = session.get(Cluster, cid)
        assert cluster is not None and cluster.heartbeat_password_enc is not None
    assert cid not in [p.cluster_id for p in plans]
    assert "the source moved from 127.0.0.1:" in skipped[cid]
    assert "to 127.0.0.1:1" in skipped[cid]


class RefusingSource:
    """The source as the heartbeat login sees it: every login refused, each one recorded
    (the server it was for: other tests' clusters share the store)."""

    logins: ClassVar[list[str]] = []

    def __init__(self, spec: ConnectionSpec) -> None:
        self.server = spec.server
        self.connected = False

    def run(self, statements: object) -> list[object]:
        RefusingSource.logins.append(self.server)
        raise LoginRefused(self.server, f"Access denied for user '{HB_USER}'", 1045)

    def write(self, sql: str, args: object = ()) -> int:
        raise AssertionError("never reached: the login is refused first")

    def close(self) -> None:
        pass


def test_the_writers_back_off_lives_in_the_store(api: ApiServer) -> None:
    """A refused heartbeat login is recorded on the cluster row, so a
    restarted writer process honours it; after the cap nothing is tried until the password is
    entered again."""
    cid, source_id = make_cluster(api, "hb-backoff")
    box = store_box(api.sessions, SECRET)
    backoff = Backoff(base_s=60.0, max_s=600.0, give_up_after=3)
    with api.sessions() as session:
        source = session.get(Instance, source_id)
        assert source is not None
        server = f"{source.host}:{source.port}"

    def tries() -> int:
        return RefusingSource.logins.count(server)

    def service() -> HeartbeatService:
        return HeartbeatService(
            api.sessions,
            box,
            backoff=backoff,
            executor_factory=RefusingSource,  # type: ignore[arg-type]
        )

    def row() -> Cluster:
        with api.sessions() as session:
            cluster = session.get(Cluster, cid)
            assert cluster is not None
            return cluster

    def problem() -> str | None:
        with api.client() as c:
            return c.get(f"/api/v1/clusters/{cid}").json()["heartbeat"]["problem"]

    first = service()
    try:
        first.refresh()
        wait_until(lambda: row().heartbeat_login_failures == 1, timeout_s=30, message="noted")
        assert row().heartbeat_login_state == "access_denied"
        assert row().heartbeat_next_attempt_at is not None
        first.refresh()  # within the back-off: not started again
    finally:
        first.stop_all()
    restarted = service()  # a new process: nothing in memory, the row says wait
    restarted.refresh()
    restarted.stop_all()
    assert tries() == 1
    assert "refused the heartbeat login 1 time(s) in a row; next attempt at" in (problem() or "")
    for failures in (2, 3):
        with api.sessions() as session, session.begin():  # the back-off has passed
            session.execute(
                update(Cluster)
                .where(Cluster.id == cid)
                .values(heartbeat_next_attempt_at=datetime.now(UTC) - timedelta(seconds=1))
            )
        again = service()
        try:
            again.refresh()
            wait_until(
                lambda f=failures: row().heartbeat_login_failures == f, timeout_s=30, message="f"
            )
        finally:
            again.stop_all()
    assert tries() == 3
    assert row().heartbeat_next_attempt_at is None  # gave up
    said = problem() or ""
    assert "heartbeat login refused 3 times in a row: not tried again until" in said
    assert "the heartbeat password is entered again" in said
    later = service()
    later.refresh()
    later.stop_all()
    assert tries() == 3
    with api.client() as c:  # someone acts
        c.patch(f"/api/v1/clusters/{cid}", json={"heartbeat": {"password": "fixed-1"}})
    assert problem() is None and row().heartbeat_login_failures == 0
    acted = service()
    try:
        acted.refresh()
        wait_until(lambda: tries() == 4, timeout_s=30, message="tried again")
    finally:
        acted.stop_all()


def test_the_upgrade_binds_stored_passwords_or_drops_orphans(tmp_path: Path) -> None:
    """A store from before the binding: a cluster's password is bound to its source; one on a
    cluster with no source (where an editor who deleted it would add their own) is dropped,
    saying why."""
    url = sqlite_url(tmp_path)
    root = Path(__file__).resolve().parents[2]

    def alembic(*args: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "alembic", "-x", f"url={url}", *args],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    alembic("upgrade", "13d7b0a10008")
    engine = make_engine(url)
    clusters = {
        "with-source": "gAAAA-with-source",
        "orphaned": "gAAAA-orphaned",
        "no-password": None,
    }
    with engine.begin() as conn:
        for name, token in clusters.items():
            conn.execute(
                text(
                    "INSERT INTO clusters (name, poll_interval_s, extra_params, heartbeat_mode,"
                    " heartbeat_schema, heartbeat_table, heartbeat_interval_s, heartbeat_user,"
                    " heartbeat_password_enc, enabled, created_at) VALUES (:n, 1, '[]',"
                    " 'lagscope', 'lagscope', 'heartbeat', 0.25, 'hb', :t, 1, 0)"
                ),
                {"n": name, "t": token},
            )
        conn.execute(
            text(
                "INSERT INTO instances (cluster_id, name, host, port, user, password_enc, region,"
                " role, tls, tls_ca_path, enabled, login_failures) SELECT id, 'db1', '10.0.0.5',"
                " 3307, 'mon', '', '', 'source', 'required', NULL, 1, 0 FROM clusters"
                " WHERE name = 'with-source'"
            )
        )
    alembic("upgrade", "head")
    with make_session_factory(engine)() as session:
        rows = {c.name: c for c in session.scalars(select(Cluster))}
        source = session.scalars(select(Instance)).one()
    bound = rows["with-source"]
    assert bound.heartbeat_password_enc == "gAAAA-with-source"
    assert bound.heartbeat_password_target == {
        "instance_id": source.id,
        "host": "10.0.0.5",
        "port": 3307,
        "tls": "required",
        "tls_ca_path": None,
    }
    orphan = rows["orphaned"]
    assert orphan.heartbeat_password_enc is None and orphan.heartbeat_password_target is None
    assert "had no source" in (orphan.heartbeat_password_cleared or "")
    assert rows["no-password"].heartbeat_password_cleared is None
    alembic("downgrade", "13d7b0a10008")
