"""``lagscope api`` as an operator starts it: which client address it believes.

uvicorn's default believes ``X-Forwarded-For`` from 127.0.0.1; Lagscope believes it only from
``LAGSCOPE_TRUSTED_PROXIES``. The access log shows the client address the API went by.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from lagscope.demo.processes import ManagedProcess, free_port, lagscope_command
from lagscope.store_setup import upgrade

from .waiting import wait_until

pytestmark = pytest.mark.integration

KEY = "k7Hq2vX9pLm4Rt8Wz3Nc6Bd1Fg5Js0Ya-UeQiOoPx"
FORGED = "198.51.100.23"  # only ever written into a header: nothing connects to it


@contextmanager
def lagscope_api(tmp_path: Path, **env: str) -> Iterator[tuple[str, ManagedProcess]]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    environ = {**os.environ, "LAGSCOPE_DATABASE_URL": url, "LAGSCOPE_SECRET_KEY": KEY, **env}
    environ.pop("LAGSCOPE_DEMO", None)
    environ.pop("FORWARDED_ALLOW_IPS", None)
    port = free_port()
    api = ManagedProcess(
        "api",
        lagscope_command("api", "--host", "127.0.0.1", "--port", str(port)),
        tmp_path,
        environ,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: httpx.get(f"{base}/healthz").status_code == 200,
            timeout_s=60,
            ignore=(httpx.TransportError,),
            message=f"lagscope api to answer:\n{api.log_tail()}",
        )
        yield base, api
    finally:
        api.stop()


def _client_of_forged_request(base: str, api: ManagedProcess) -> str:
    marker = f"/healthz?probe={os.urandom(4).hex()}"
    assert httpx.get(base + marker, headers={"X-Forwarded-For": FORGED}).status_code == 200
    line = wait_until(
        lambda: next((ln for ln in api.log_text().splitlines() if marker in ln), None),
        timeout_s=10,
        message="the access log line",
    )
    return line.split(" - ", 1)[0].split()[-1].rsplit(":", 1)[0]


def test_forwarded_headers_are_ignored_by_default(tmp_path):
    with lagscope_api(tmp_path) as (base, api):
        assert _client_of_forged_request(base, api) == "127.0.0.1"


def test_forwarded_headers_are_believed_from_trusted_proxies_only(tmp_path):
    with lagscope_api(tmp_path, LAGSCOPE_TRUSTED_PROXIES="127.0.0.0/8") as (base, api):
        assert _client_of_forged_request(base, api) == FORGED
