"""`lagscope user …`: the same cut-offs as the API, from a shell on the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lagscope.security import users
from lagscope.store_setup import upgrade

pytestmark = pytest.mark.integration


def run(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LAGSCOPE_DATABASE_URL": url, "LAGSCOPE_DEMO": "1"}
    return subprocess.run(
        [sys.executable, "-m", "lagscope", "user", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_user_subcommands(tmp_path):
    from lagscope.db import make_engine, make_session_factory

    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    sessions = make_session_factory(make_engine(url))
    with sessions() as session, session.begin():
        users.create_user(session, "root", "a-long-password", "admin")
        pat = users.create_user(session, "pat", "a-long-password", "editor")
        token = users.issue_token(session, pat, "cron")

    def auth_ok() -> bool:
        with sessions() as session, session.begin():
            try:
                users.authenticate(session, token)
                return True
            except Exception:
                return False

    assert run(url, "disable", "PAT").returncode == 0
    assert not auth_ok()
    # Disabling revoked the token: enabling again does not revive it.
    assert run(url, "enable", "pat").returncode == 0 and not auth_ok()
    assert run(url, "tokens", "pat").stdout == ""
    with sessions() as session, session.begin():
        found = users.find_user(session, "pat")
        assert found is not None
        token = users.issue_token(session, found, "cron")
    assert auth_ok()
    listed = [json.loads(line) for line in run(url, "tokens", "pat").stdout.splitlines()]
    assert [t["name"] for t in listed] == ["cron"]
    assert run(url, "revoke-token", str(listed[0]["id"])).returncode == 0
    assert not auth_ok()
    assert json.loads(run(url, "set-role", "pat", "viewer").stdout)["role"] == "viewer"
    refused = run(url, "disable", "root")
    assert refused.returncode == 2 and "last enabled admin" in refused.stderr
    assert run(url, "delete", "pat").returncode == 0
    names = [json.loads(line)["username"] for line in run(url, "list").stdout.splitlines()]
    assert names == ["root"]
    missing = run(url, "disable", "nobody")
    assert missing.returncode == 2 and "NotFound" in missing.stderr
