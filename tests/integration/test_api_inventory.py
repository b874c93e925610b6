"""Auth, users, clusters and instances over real HTTP, and the connection test on the real lab."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from lagscope.models import Instance
from lagscope.security import users

from .api_stack import ApiServer

pytestmark = pytest.mark.integration


def token_for(api: ApiServer, username: str, role: str) -> str:
    with api.sessions() as session, session.begin():
        user = users.create_user(session, username, "a-long-password", role)
        return users.issue_token(session, user, "test")


def test_everything_but_healthz_needs_a_token(api: ApiServer):
    with api.client("") as anonymous:
        assert anonymous.get("/healthz").json() == {"status": "ok"}
        for path in ("/api/v1/clusters", "/api/v1/instances", "/api/v1/auth/me", "/api/v1/users"):
            response = anonymous.get(path)
            assert response.status_code == 401, path
            assert response.headers["content-type"].startswith("application/problem+json")
            assert response.headers["www-authenticate"] == "Bearer"
    with api.client("lgs_not-a-real-token") as forged:
        assert forged.get("/api/v1/clusters").status_code == 401


def test_login_tokens_and_roles(api: ApiServer):
    with api.client("") as anonymous:
        wrong = anonymous.post(
            "/api/v1/auth/login", json={"username": "admin", "password": "nope-nope-nope"}
        )
        assert wrong.status_code == 401 and wrong.json()["title"] == "NotAuthenticated"
    viewer = token_for(api, "vera", "viewer")
    with api.client(viewer) as c:
        me = c.get("/api/v1/auth/me").json()
        assert me == {"user_id": me["user_id"], "username": "vera", "role": "viewer", "demo": False}
        assert c.get("/api/v1/clusters").status_code == 200
        denied = c.post("/api/v1/clusters", json={"name": "nope"})
        assert denied.status_code == 403 and "editor" in denied.json()["detail"]
        assert c.get("/api/v1/users").status_code == 403
        # Viewers read; only editors and admins hold API tokens for scripts.
        assert c.post("/api/v1/auth/tokens", json={"name": "cron"}).status_code == 403
    token_for(api, "edna", "editor")
    with api.client("") as anonymous:  # a password login mints tokens, an API token does not
        signed_in = anonymous.post(
            "/api/v1/auth/login", json={"username": "edna", "password": "a-long-password"}
        ).json()["token"]
    with api.client(signed_in) as c:
        script_token = c.post("/api/v1/auth/tokens", json={"name": "cron"}).json()["token"]
    with api.client(script_token) as script:
        assert script.get("/api/v1/auth/me").json()["username"] == "edna"
    with api.client() as admin:
        created = admin.post(
            "/api/v1/users",
            json={"username": "eddie", "password": "ten-chars-pw", "role": "editor"},
        )
        assert created.status_code == 201 and "password" not in created.text
        dup = admin.post("/api/v1/users", json={"username": "eddie", "password": "ten-chars-pw"})
        assert dup.status_code == 409


def test_clusters_and_instances_crud_never_return_credentials(api: ApiServer):
    with api.client() as c:
        cluster = c.post(
            "/api/v1/clusters",
            json={
                "name": "shop",
                "extra_params": ["max_connections"],
                "heartbeat": {"mode": "lagscope", "user": "hb", "password": "hb-secret-1"},
            },
        )
        assert cluster.status_code == 201, cluster.text
        body = cluster.json()
        assert body["heartbeat"]["has_password"] is True and "hb-secret-1" not in cluster.text
        cid = body["id"]
        instance = c.post(
            "/api/v1/instances",
            json={
                "cluster_id": cid,
                "name": "db1",
                "host": "10.0.0.5",
                "user": "mon",
                "password": "s3cret-pw",
                "role": "source",
                "region": "eu",
            },
        )
        assert instance.status_code == 201, instance.text
        assert "s3cret-pw" not in instance.text and "password" not in instance.json()
        iid = instance.json()["id"]
        patched = c.patch(
            f"/api/v1/instances/{iid}", json={"region": "us", "password": "new-pw-123"}
        )
        assert patched.json()["region"] == "us" and "new-pw-123" not in patched.text
        listing = c.get("/api/v1/clusters").text + c.get(f"/api/v1/instances/{iid}").text
        assert "s3cret-pw" not in listing and "new-pw-123" not in listing
        with api.sessions() as session:
            stored = session.scalar(select(Instance).where(Instance.id == iid))
            assert (
                stored is not None
                and stored.password_enc
                and "new-pw-123" not in stored.password_enc
            )
        second_source = c.post(
            "/api/v1/instances",
            json={"cluster_id": cid, "name": "db2", "host": "h", "user": "u", "role": "source"},
        )
        assert second_source.status_code == 409
        assert c.delete(f"/api/v1/clusters/{cid}").status_code == 204
        assert c.get(f"/api/v1/clusters/{cid}").status_code == 404
        assert c.get(f"/api/v1/instances/{iid}").status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "poll_interval_s": 0}, "poll_interval_s"),
        ({"name": "x", "extra_params": ["bad name; DROP"]}, "extra_params.0"),
        ({"name": "x", "heartbeat": {"mode": "sometimes"}}, "heartbeat.mode"),
        ({"name": "x", "heartbeat": {"table": "hb`; --"}}, "heartbeat.table"),
        ({"name": "x", "surprise": 1}, "surprise"),
        ({}, "name"),
    ],
)
def test_malformed_input_is_a_422_naming_the_field(api: ApiServer, body: dict, field: str):
    with api.client() as c:
        response = c.post("/api/v1/clusters", json=body)
    assert response.status_code == 422
    assert field in [e["field"] for e in response.json()["errors"]], response.json()


def test_connection_test_reports_flavor_privileges_and_channels(lab, api: ApiServer):
    user, password = lab.credentials.monitor
    replica = lab.server("replica1")
    with api.client() as c:
        ok = c.post(
            "/api/v1/instances/test",
            json={"host": replica.host, "port": replica.port, "user": user, "password": password},
        )
        assert ok.status_code == 200, ok.text
        report = ok.json()
        assert report["flavor"] == "mariadb" and report["version"].startswith("10.")
        assert report["privileges_missing"] == []
        assert set(report["privileges_found"]) == {"REPLICA MONITOR", "BINLOG MONITOR", "PROCESS"}
        assert report["privileges_excessive"] == []
        assert [ch["channel"] for ch in report["channels"]] == [""]
        assert report["channels"][0]["io_state"] == "yes"
        admin_user, admin_password = lab.credentials.admin
        loud = c.post(
            "/api/v1/instances/test",
            json={
                "host": replica.host,
                "port": replica.port,
                "user": admin_user,
                "password": admin_password,
            },
        ).json()
        assert "ALL PRIVILEGES" in loud["privileges_excessive"]
        denied = c.post(
            "/api/v1/instances/test",
            json={"host": replica.host, "port": replica.port, "user": user, "password": "wrong"},
        )
        assert denied.status_code == 502
        # A refused login is its own kind (it counts towards lock-out, so polls back off).
        assert denied.json()["title"] == "LoginRefused" and denied.json()["code"] == 1045
        with_socket_closed = c.post(
            "/api/v1/instances/test",
            json={"host": "127.0.0.1", "port": 9, "user": user, "timeout_s": 1},
        )
        assert with_socket_closed.status_code == 502
        assert with_socket_closed.json()["title"] == "ServerUnreachable"


def test_moving_an_instance_needs_the_password_again(api: ApiServer):
    """An editor must not harvest a stored password by pointing the instance elsewhere."""
    with api.client() as c:
        cid = c.post(
            "/api/v1/clusters",
            json={
                "name": "moving",
                "heartbeat": {"mode": "lagscope", "user": "hb", "password": "hb-secret-1"},
            },
        ).json()["id"]
        source = c.post(
            "/api/v1/instances",
            json={
                "cluster_id": cid,
                "name": "db1",
                "host": "10.0.0.5",
                "user": "mon",
                "password": "s3cret-pw",
                "role": "source",
            },
        ).json()
        for change in ({"host": "198.51.100.7"}, {"port": 3307}, {"user": "other"}):
            refused = c.patch(f"/api/v1/instances/{source['id']}", json=change)
            assert refused.status_code == 422, refused.text
            assert "needs the password again" in refused.json()["detail"]
        with api.sessions() as session:
            stored = session.get(Instance, source["id"])
            assert stored is not None and stored.host == "10.0.0.5" and stored.port == 3306
            kept_password = stored.password_enc
        # Unchanged values and other fields need no password.
        same = c.patch(
            f"/api/v1/instances/{source['id']}", json={"host": "10.0.0.5", "region": "x"}
        )
        assert same.status_code == 200, same.text
        moved = c.patch(
            f"/api/v1/instances/{source['id']}",
            json={"host": "198.51.100.7", "password": "new-pw-1"},
        )
        assert moved.status_code == 200 and moved.json()["host"] == "198.51.100.7"
        with api.sessions() as session:
            stored = session.get(Instance, source["id"])
            assert stored is not None and stored.password_enc not in ("", kept_password)
        # The source moved: the heartbeat login (which goes to the source) must be re-entered.
        cluster = c.get(f"/api/v1/clusters/{cid}").json()
        assert cluster["heartbeat"]["has_password"] is False
        # An explicit empty password moves it with no password at all.
        emptied = c.patch(f"/api/v1/instances/{source['id']}", json={"port": 3310, "password": ""})
        assert emptied.status_code == 200 and emptied.json()["has_password"] is False
