"""Demo mode (every caller an admin) only on a store the demo made, and only for requests
addressed to a loopback name."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from lagscope.api.app import create_app
from lagscope.api.middleware import demo_host_allowed
from lagscope.config import Settings
from lagscope.db import make_engine, make_session_factory
from lagscope.errors import Conflict, InvalidInput
from lagscope.security import users
from lagscope.security.demo_store import is_demo_store, mark_demo_store
from lagscope.store_setup import upgrade

from .api_stack import ApiServer, api_server, sqlite_url

pytestmark = pytest.mark.integration


def test_demo_mode_is_refused_on_a_store_the_demo_did_not_make(tmp_path):
    url = sqlite_url(tmp_path)
    upgrade(url)
    sessions = make_session_factory(make_engine(url))
    with sessions() as session, session.begin():
        users.create_user(session, "root", "a-long-password", "admin")  # a real deployment's
    with pytest.raises(InvalidInput, match="runs only on a store `lagscope demo` made"):
        create_app(Settings(database_url=url, demo=True), sessions)
    with sessions() as session, session.begin():
        with pytest.raises(Conflict, match="already holds users"):
            mark_demo_store(session)  # and a real store cannot be marked afterwards
        assert not is_demo_store(session)

    env = {**os.environ, "LAGSCOPE_DATABASE_URL": url, "LAGSCOPE_DEMO": "1"}
    env.pop("LAGSCOPE_SECRET_KEY", None)
    started = subprocess.run(
        [sys.executable, "-m", "lagscope", "api", "--port", "1"],  # refused before it binds
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert started.returncode == 2, started.stderr
    assert "runs only on a store `lagscope demo` made" in started.stderr


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[ApiServer]:
    store = tmp_path_factory.mktemp("demo-mode")
    with api_server(sqlite_url(store), demo=True, ui_dist=str(store / "no-ui")) as server:
        yield server


LOOPBACK = ["localhost", "LOCALHOST:8000", "127.0.0.1", "127.8.9.1:80", "[::1]", "[::1]:8000"]
FOREIGN = [
    "evil.example",
    "evil.example:8000",
    "localhost.evil.example",
    "127.0.0.1.nip.io",
    "attacker.localhost.example:1",
    "[::1].evil.example",
    "10.0.0.5:8000",
    "::1",
    "localhost:80:80",
]


@pytest.mark.parametrize("host", LOOPBACK)
def test_demo_answers_requests_for_loopback_names(demo: ApiServer, host: str):
    with httpx.Client(base_url=demo.url, headers={"Host": host}) as c:
        assert c.get("/api/v1/clusters").status_code == 200
        assert c.get("/api/v1/auth/me").json()["role"] == "admin"


@pytest.mark.parametrize("host", FOREIGN)
def test_demo_refuses_other_host_names_dns_rebinding(demo: ApiServer, host: str):
    """A page whose own name was re-pointed at 127.0.0.1 sends that name as Host."""
    with httpx.Client(base_url=demo.url, headers={"Host": host}) as c:
        for path in ("/api/v1/clusters", "/", "/healthz", "/api/v1/docs"):
            answer = c.get(path)
            assert answer.status_code == 421, (host, path, answer.status_code)
            assert answer.headers["content-type"].startswith("application/problem+json")
            assert "localhost" in answer.json()["detail"]
            assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
        created = c.post("/api/v1/users", json={"username": "mallory", "password": "x" * 12})
        assert created.status_code == 421


def test_allow_remote_accepts_addresses_but_never_names():
    assert demo_host_allowed("10.0.0.5:8000", allow_ip_literals=True)
    assert demo_host_allowed("[2001:db8::5]:8000", allow_ip_literals=True)
    assert not demo_host_allowed("10.0.0.5:8000")
    assert not demo_host_allowed("evil.example", allow_ip_literals=True)
    assert not demo_host_allowed("", allow_ip_literals=True)
