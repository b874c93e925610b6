"""Cutting someone off over real HTTP: tokens listed and revoked, logout, users
disabled, deleted, re-roled or given a new password — each effective on the very next request
and on an open live stream."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import select

from lagscope.models import ApiToken, LoginThrottle
from lagscope.security import users

from .api_stack import ApiServer
from .waiting import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api_settings() -> dict[str, object]:
    return {"stream_recheck_s": 0.5, "api_token_max_days": 30.0}


def make_user(api: ApiServer, username: str, role: str) -> tuple[int, str]:
    with api.sessions() as session, session.begin():
        user = users.create_user(session, username, "a-long-password", role)
        return user.id, users.issue_token(session, user, "test")


def login(api: ApiServer, username: str, password: str = "a-long-password") -> httpx.Response:
    with api.client("") as anonymous:
        return anonymous.post(
            "/api/v1/auth/login", json={"username": username, "password": password}
        )


def me(api: ApiServer, token: str) -> int:
    with api.client(token) as c:
        return c.get("/api/v1/auth/me").status_code


def test_api_tokens_are_listed_and_revoked(api: ApiServer):
    make_user(api, "ed", "editor")
    editor = login(api, "ed").json()["token"]
    with api.client(editor) as c:
        created = c.post("/api/v1/auth/tokens", json={"name": "cron", "expires_in_days": 7})
        assert created.status_code == 201, created.text
        script = created.json()["token"]
        listed = c.get("/api/v1/auth/tokens").json()
        assert {t["name"] for t in listed} == {"test", "login", "cron"}
        assert all(t["username"] == "ed" for t in listed)
        assert all("token" not in t and "token_hash" not in t for t in listed)
        cron = next(t for t in listed if t["name"] == "cron")
        expires = datetime.fromisoformat(cron["expires_at"])
        assert timedelta(days=6.9) < expires - datetime.now(UTC) <= timedelta(days=7)
        too_long = c.post("/api/v1/auth/tokens", json={"name": "x", "expires_in_days": 90})
        assert too_long.status_code == 422 and "30 days" in too_long.json()["detail"]
    assert me(api, script) == 200
    with api.client(editor) as c:
        assert c.delete(f"/api/v1/auth/tokens/{cron['id']}").status_code == 204
    assert me(api, script) == 401
    assert me(api, editor) == 200  # only that token


def test_only_an_admin_sees_or_revokes_other_peoples_tokens(api: ApiServer):
    _, alice = make_user(api, "alice", "editor")
    _, bob = make_user(api, "bob", "editor")
    with api.client(alice) as c:
        mine = c.get("/api/v1/auth/tokens").json()
    with api.client(bob) as c:
        assert c.delete(f"/api/v1/auth/tokens/{mine[0]['id']}").status_code == 404
        assert all(t["username"] == "bob" for t in c.get("/api/v1/auth/tokens").json())
    assert me(api, alice) == 200
    with api.client() as admin:
        everyone = {t["username"] for t in admin.get("/api/v1/auth/tokens").json()}
        assert {"alice", "bob", "admin"} <= everyone
        assert admin.delete(f"/api/v1/auth/tokens/{mine[0]['id']}").status_code == 204
    assert me(api, alice) == 401


def test_logout_revokes_the_login_token(api: ApiServer):
    make_user(api, "lou", "viewer")
    token = login(api, "lou").json()["token"]
    assert me(api, token) == 200
    with api.client(token) as c:
        assert c.post("/api/v1/auth/logout").status_code == 204
    assert me(api, token) == 401


def test_disabling_revokes_tokens_and_enabling_does_not_revive_them(api: ApiServer):
    """A token that leaked, or that an admin meant to end by disabling its
    owner, stays dead when the owner is enabled again; the owner logs in afresh."""
    uid, token = make_user(api, "vera", "editor")
    session_token = login(api, "vera").json()["token"]
    with api.client() as admin:
        assert admin.patch(f"/api/v1/users/{uid}", json={"disabled": True}).status_code == 200
        assert admin.get(f"/api/v1/auth/tokens?user_id={uid}").json() == []
        assert admin.patch(f"/api/v1/users/{uid}", json={"disabled": False}).status_code == 200
    assert me(api, token) == 401
    assert me(api, session_token) == 401
    assert me(api, login(api, "vera").json()["token"]) == 200


def test_disable_enable_role_password_and_delete(api: ApiServer):
    uid, _ = make_user(api, "dana", "viewer")
    with api.client() as admin:
        assert admin.patch(f"/api/v1/users/{uid}", json={"disabled": True}).status_code == 200
        assert login(api, "dana").status_code == 401
        assert admin.patch(f"/api/v1/users/{uid}", json={"disabled": False}).status_code == 200
        token = login(api, "dana").json()["token"]
        promoted = admin.patch(f"/api/v1/users/{uid}", json={"role": "editor"})
        assert promoted.json()["role"] == "editor"
    with api.client(token) as c:
        assert c.get("/api/v1/auth/me").json()["role"] == "editor"
        # A user may change their own password, not their role; the change revokes every token.
        assert c.patch(f"/api/v1/users/{uid}", json={"role": "admin"}).status_code == 403
        changed = c.patch(
            f"/api/v1/users/{uid}",
            json={"password": "another-long-one", "current_password": "a-long-password"},
        )
        assert changed.status_code == 200, changed.text
    assert me(api, token) == 401
    assert login(api, "dana").status_code == 401
    fresh = login(api, "dana", "another-long-one").json()["token"]
    with api.client() as admin:
        assert admin.delete(f"/api/v1/users/{uid}").status_code == 204
    assert me(api, fresh) == 401


def test_an_api_token_cannot_mint_tokens(api: ApiServer):
    """A leaked script token must not buy a token that outlives its
    revocation; only a signed-in session (password or single sign-on) creates tokens."""
    _, script = make_user(api, "minty", "editor")
    with api.client(script) as c:
        refused = c.post("/api/v1/auth/tokens", json={"name": "more", "expires_in_days": 1})
        assert refused.status_code == 403, refused.text
        assert "sign in (password or single sign-on)" in refused.json()["detail"]
        assert {t["name"] for t in c.get("/api/v1/auth/tokens").json()} == {"test"}
    session = login(api, "minty").json()["token"]
    with api.client(session) as c:
        created = c.post("/api/v1/auth/tokens", json={"name": "cron", "expires_in_days": 1})
        assert created.status_code == 201, created.text
    with api.client(created.json()["token"]) as c:  # and the minted API token cannot either
        assert c.post("/api/v1/auth/tokens", json={"name": "x"}).status_code == 403


def test_changing_your_own_password_needs_the_current_one(api: ApiServer):
    """A token alone (a script's, a browser left open) does not take the
    account by setting a new password; an admin resetting someone else's needs none."""
    uid, script = make_user(api, "perry", "editor")
    url = f"/api/v1/users/{uid}"
    with api.client(script) as c:
        missing = c.patch(url, json={"password": "taken-over-now"})
        assert missing.status_code == 422, missing.text
        assert "current_password" in missing.json()["detail"]
        wrong = c.patch(url, json={"password": "taken-over-now", "current_password": "guess-1234"})
        assert wrong.status_code == 403, wrong.text
        assert wrong.json()["detail"] == "current_password is not your password"
    assert login(api, "perry", "taken-over-now").status_code == 401
    assert me(api, script) == 200  # nothing changed
    with api.client(script) as c:
        right = c.patch(
            url, json={"password": "a-new-long-password", "current_password": "a-long-password"}
        )
        assert right.status_code == 200, right.text
    assert me(api, script) == 401
    with api.client() as admin:
        reset = admin.patch(url, json={"password": "reset-by-the-admin"})
        assert reset.status_code == 200, reset.text
        own = next(u for u in admin.get("/api/v1/users").json() if u["username"] == "admin")
        own_reset = admin.patch(f"/api/v1/users/{own['id']}", json={"password": "x" * 12})
        assert own_reset.status_code == 422, own_reset.text
    assert login(api, "perry", "reset-by-the-admin").status_code == 200


def test_wrong_current_passwords_are_throttled_like_logins(api: ApiServer):
    uid, script = make_user(api, "tess", "editor")
    url = f"/api/v1/users/{uid}"
    with api.client(script) as c:
        for _ in range(6):  # five are free, the sixth starts a back-off
            wrong = c.patch(url, json={"password": "x" * 12, "current_password": "guess-1234"})
            assert wrong.status_code == 403, wrong.text
        with api.sessions() as session, session.begin():
            row = session.get(LoginThrottle, "user:tess|127.0.0.1")
            assert row is not None and row.failures == 6 and row.blocked_until is not None
            row.blocked_until = datetime.now(UTC) + timedelta(seconds=30)  # no race with 1 s
        blocked = c.patch(url, json={"password": "x" * 12, "current_password": "a-long-password"})
        assert blocked.status_code == 429, blocked.text
    assert login(api, "tess").status_code == 429  # the same client, the same username


def test_the_last_enabled_admin_cannot_be_removed(api: ApiServer):
    with api.client() as admin:
        own = next(u for u in admin.get("/api/v1/users").json() if u["username"] == "admin")
        for change in ({"disabled": True}, {"role": "viewer"}):
            refused = admin.patch(f"/api/v1/users/{own['id']}", json=change)
            assert refused.status_code == 409, refused.text
        assert admin.delete(f"/api/v1/users/{own['id']}").status_code == 409


def test_usernames_are_unique_case_insensitively(api: ApiServer):
    make_user(api, "carol", "viewer")
    with api.client() as admin:
        dup = admin.post("/api/v1/users", json={"username": "Carol", "password": "a-long-password"})
        assert dup.status_code == 409
    assert login(api, "CAROL").status_code == 200


def test_last_used_is_written_at_most_once_a_minute(api: ApiServer):
    _, token = make_user(api, "ursula", "viewer")

    def last_used() -> datetime | None:
        with api.sessions() as session:
            row = session.scalar(
                select(ApiToken)
                .where(ApiToken.name == "test")
                .join(ApiToken.user)
                .where(ApiToken.user.has(username="ursula"))
            )
            assert row is not None
            return row.last_used_at

    assert me(api, token) == 200
    first = last_used()
    assert first is not None
    assert me(api, token) == 200
    assert last_used() == first


def test_a_live_stream_ends_when_its_token_is_revoked(api: ApiServer):
    uid, token = make_user(api, "stella", "viewer")
    with api.client() as admin:
        cluster = admin.post("/api/v1/clusters", json={"name": "streamed"}).json()["id"]
    with (
        httpx.Client(base_url=api.url, headers={"Authorization": f"Bearer {token}"}) as c,
        c.stream("GET", f"/api/v1/stream?cluster_id={cluster}", timeout=30) as stream,
    ):
        assert stream.status_code == 200
        lines = stream.iter_lines()
        assert next(lines).startswith("retry:")
        with api.client() as admin:
            assert admin.patch(f"/api/v1/users/{uid}", json={"disabled": True}).status_code == 200
        received = wait_until(
            lambda: next((line for line in lines if line == "event: revoked"), None),
            timeout_s=20,
            message="the stream to say it was revoked",
        )
        assert received == "event: revoked"
        assert "unknown or revoked token" in next(lines)  # disabling revoked it
        assert list(lines) in ([], [""])  # and then it ends
