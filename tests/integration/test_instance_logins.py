"""An instance whose login polling gave up on stays given up until someone
acts: retry-login, a new password, or disabling and enabling it. Nothing else clears it."""

from __future__ import annotations

import pytest

from lagscope.models import Instance

from .api_stack import ApiServer

pytestmark = pytest.mark.integration


def given_up(api: ApiServer, iid: int) -> None:
    with api.sessions() as session, session.begin():
        row = session.get(Instance, iid)
        assert row is not None
        row.login_state, row.login_failures, row.next_attempt_at = "access_denied", 10, None


def state(api: ApiServer, iid: int) -> tuple[str | None, int]:
    with api.sessions() as session:
        row = session.get(Instance, iid)
        assert row is not None
        return row.login_state, row.login_failures


def test_only_someone_acting_clears_a_given_up_login(api: ApiServer) -> None:
    with api.client() as c:
        cid = c.post("/api/v1/clusters", json={"name": "denied"}).json()["id"]
        iid = c.post(
            "/api/v1/instances",
            json={"cluster_id": cid, "name": "r1", "host": "10.0.0.7", "user": "mon"},
        ).json()["id"]
        given_up(api, iid)
        # Other edits leave it given up: the password that was refused is the same.
        assert c.patch(f"/api/v1/instances/{iid}", json={"region": "eu"}).status_code == 200
        assert c.patch(f"/api/v1/instances/{iid}", json={"enabled": True}).status_code == 200
        assert state(api, iid) == ("access_denied", 10)
        retried = c.post(f"/api/v1/instances/{iid}/retry-login")
        assert retried.status_code == 200, retried.text
        assert state(api, iid) == (None, 0)
        given_up(api, iid)
        c.patch(f"/api/v1/instances/{iid}", json={"enabled": False})
        assert state(api, iid) == ("access_denied", 10)
        c.patch(f"/api/v1/instances/{iid}", json={"enabled": True})
        assert state(api, iid) == (None, 0)
        given_up(api, iid)
        c.patch(f"/api/v1/instances/{iid}", json={"password": "new-pw-1"})
        assert state(api, iid) == (None, 0)
        assert c.post("/api/v1/instances/999999/retry-login").status_code == 404
