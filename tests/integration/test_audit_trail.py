"""The audit trail over real HTTP and from the real CLI: every change to what an operator
configures is recorded with who, when, from where and what changed, secrets never with their
values; a change that fails leaves nothing; logins and reads leave nothing; admins only."""

from __future__ import annotations

import getpass
import json
import os
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from lagscope.config import Retention
from lagscope.ingest import rollups as maintenance
from lagscope.models import AuditEvent
from lagscope.security import users

from .api_stack import ApiServer, api_server, sqlite_url

pytestmark = pytest.mark.integration

SECRETS = ("s3cret-pw", "new-pw-123", "hb-secret-1", "hook-signing-secret", "T0SECRETPATH")


def events(api: ApiServer, token: str | None = None, **params: Any) -> dict[str, Any]:
    with api.client(token) as c:
        answer = c.get("/api/v1/audit", params=params)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_changes_through_the_api_are_recorded_with_who_where_and_what(tmp_path: Path):
    with api_server(sqlite_url(tmp_path), webhook_allowed_hosts="127.0.0.1") as api:
        with api.client() as c:
            assert events(api)["events"] == []  # the admin's own login left nothing
            cluster = c.post(
                "/api/v1/clusters",
                json={"name": "shop", "heartbeat": {"mode": "lagscope", "user": "hb",
                                                    "password": "hb-secret-1"}},
            )  # fmt: skip
            assert cluster.status_code == 201, cluster.text
            cid = cluster.json()["id"]
            made = c.post(
                "/api/v1/instances",
                json={"cluster_id": cid, "name": "db1", "host": "127.0.0.1", "user": "mon",
                      "password": "s3cret-pw", "role": "source", "region": "eu"},
            )  # fmt: skip
            assert made.status_code == 201, made.text
            iid = made.json()["id"]
            patched = c.patch(
                f"/api/v1/instances/{iid}", json={"region": "us", "password": "new-pw-123"}
            )
            assert patched.status_code == 200, patched.text
            # Refused (a second source): rolled back, so not recorded.
            refused = c.post(
                "/api/v1/instances",
                json={"cluster_id": cid, "name": "db2", "host": "h", "user": "u", "role": "source"},
            )
            assert refused.status_code == 409
            hook = c.post(
                "/api/v1/alerts/webhooks",
                json={"name": "ops", "url": "http://127.0.0.1:9/services/T0SECRETPATH",
                      "secret": "hook-signing-secret"},
            )  # fmt: skip
            assert hook.status_code == 201, hook.text
            check = c.post("/api/v1/check-tokens", json={"name": "proxy", "clusters": ["shop"]})
            assert check.status_code == 201, check.text
            check_token = check.json()["token"]
            revoked = c.delete(f"/api/v1/check-tokens/{check.json()['id']}")
            assert revoked.status_code == 204, revoked.text
            user = c.post(
                "/api/v1/users",
                json={"username": "vera", "password": "a-long-password", "role": "viewer"},
            )
            assert user.status_code == 201, user.text
            role = c.patch(f"/api/v1/users/{user.json()['id']}", json={"role": "editor"})
            assert role.status_code == 200, role.text
            assert c.delete(f"/api/v1/instances/{iid}").status_code == 204
            c.get("/api/v1/clusters")  # a read: nothing recorded

        found = events(api)
        text = json.dumps(found)
        assert not [s for s in (*SECRETS, check_token) if s in text], text
        rows = found["events"]
        assert all(r["actor"] == "admin" and r["source"] == "127.0.0.1" for r in rows), rows
        seen = [(r["action"], r["kind"], r["object_name"]) for r in reversed(rows)]
        assert seen == [
            ("create", "cluster", "shop"),
            ("create", "instance", "db1"),
            ("update", "instance", "db1"),
            ("create", "webhook_target", "ops"),
            ("create", "check_token", "proxy"),
            ("create", "check_token_cluster", ""),
            ("delete", "check_token_cluster", ""),
            ("delete", "check_token", "proxy"),
            ("create", "user", "vera"),
            ("update", "user", "vera"),
            # Deleting the source clears the heartbeat password bound to it: recorded too.
            ("update", "cluster", "shop"),
            ("delete", "instance", "db1"),
        ], seen
        by = {(r["action"], r["kind"]): r for r in rows}
        assert by[("create", "cluster")]["changes"]["heartbeat_password_enc"] == "set"
        created = by[("create", "instance")]
        assert created["via"] == "POST /api/v1/instances"
        assert created["changes"]["password_enc"] == "set"
        assert created["changes"]["host"] == [None, "127.0.0.1"]
        updated = by[("update", "instance")]
        assert updated["via"] == f"PATCH /api/v1/instances/{iid}"
        assert updated["changes"] == {"region": ["eu", "us"], "password_enc": "replaced"}
        assert by[("create", "webhook_target")]["changes"]["url"] == [None, "http://127.0.0.1:9/…"]
        assert by[("create", "webhook_target")]["changes"]["secret_enc"] == "set"
        assert by[("update", "user")]["changes"] == {"role": ["viewer", "editor"]}
        assert by[("create", "check_token")]["changes"]["token_hash"] == "set"
        assert by[("create", "check_token_cluster")]["changes"]["cluster_id"] == [None, cid]
        assert "password_enc" not in by[("delete", "instance")]["changes"]
        assert by[("update", "cluster")]["changes"] == {"heartbeat_password_enc": "cleared"}

        # Filtered, and paged newest first without repeats.
        only = events(api, kind="instance", action="update")["events"]
        assert [r["id"] for r in only] == [updated["id"]]
        assert events(api, actor="nobody")["events"] == []
        first = events(api, limit=3)
        rest = events(api, before_id=first["next_before_id"], limit=100)
        assert [r["id"] for r in first["events"] + rest["events"]] == [r["id"] for r in rows]
        assert rest["next_before_id"] is None
        with api.client() as c:
            assert c.get("/api/v1/audit", params={"action": "rename"}).status_code == 422

        # Admins only.
        with api.sessions() as session, session.begin():
            editor = users.create_user(session, "edna", "a-long-password", "editor")
            editor_token = users.issue_token(session, editor, "test")
        with api.client(editor_token) as c:
            assert c.get("/api/v1/audit").status_code == 403


def test_changes_from_the_cli_are_recorded_as_the_os_user_from_this_host(tmp_path: Path):
    url = sqlite_url(tmp_path)
    env = {**os.environ, "LAGSCOPE_DATABASE_URL": url, "LAGSCOPE_DEMO": "1",
           "LAGSCOPE_NEW_USER_PASSWORD": "a-long-password"}  # fmt: skip
    with api_server(url) as api:
        for args in (("create", "--username", "cli-made", "--role", "viewer"),
                     ("set-role", "cli-made", "editor")):  # fmt: skip
            done = subprocess.run(
                [sys.executable, "-m", "lagscope", "user", *args],
                env=env, capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
        rows = list(reversed(events(api)["events"]))
    assert [(r["action"], r["kind"], r["via"]) for r in rows] == [
        ("create", "user", "lagscope user create"),
        ("update", "user", "lagscope user set-role"),
    ], rows
    assert {r["actor"] for r in rows} == {f"cli:{getpass.getuser()}"}
    assert {r["source"] for r in rows} == {f"cli@{socket.gethostname()}"}
    assert rows[0]["changes"]["password_hash"] == "set"
    assert "a-long-password" not in json.dumps(rows)


def test_retention_drops_audit_entries_past_their_days(tmp_path: Path):
    with api_server(sqlite_url(tmp_path)) as api:
        now = datetime.now(UTC)
        with api.sessions() as session, session.begin():
            for age_days in (400, 10):
                session.add(
                    AuditEvent(at=now - timedelta(days=age_days), actor="a", source="s",
                               via="v", action="update", kind="user", object_name=f"{age_days}",
                               changes={})
                )  # fmt: skip
        with api.sessions() as session, session.begin():
            deleted = maintenance.enforce_retention(
                session, now.timestamp(), Retention(3, 60, 730, audit_days=365)
            )
        assert deleted["audit_events"] == 1
        with api.sessions() as session:
            kept = session.scalars(select(AuditEvent.object_name)).all()
            assert kept == ["10"]
            assert session.scalar(select(func.count()).select_from(AuditEvent)) == 1
