"""`make demo` stays true: `lagscope demo` serves live polling data on one URL and cleans up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from lagscope.api.webui import has_build
from lagscope.demo.alerting import INBOX_TARGET, LAG_RULE

from .stack import free_port
from .waiting import wait_until

pytestmark = pytest.mark.integration


def test_demo_runs_the_product_and_stops_cleanly(tmp_path):
    port = free_port()
    log = (tmp_path / "demo.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lagscope",
            "demo",
            "--port",
            str(port),
            "--dir",
            str(tmp_path / "demo"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"

    def polled_instances() -> int:
        assert proc.poll() is None, (tmp_path / "demo.log").read_text()
        try:
            clusters = httpx.get(f"{url}/api/v1/clusters", timeout=2).json()
        except httpx.HTTPError:
            return 0
        return sum(1 for i in clusters[0]["instances"] if i["last_ok_at"]) if clusters else 0

    try:
        wait_until(
            lambda: polled_instances() == 3, timeout_s=60, message="demo polls its 3 servers"
        )
        assert httpx.get(f"{url}/healthz", timeout=2).json() == {"status": "ok"}
        # Alerts without setting anything up: the lag rule sends to the API's own inbox.
        rules = httpx.get(f"{url}/api/v1/alerts/rules", timeout=5).json()
        targets = httpx.get(f"{url}/api/v1/alerts/webhooks", timeout=5).json()
        assert [r["name"] for r in rules] == [LAG_RULE]
        assert rules[0]["target_ids"] == [t["id"] for t in targets if t["name"] == INBOX_TARGET]
        assert httpx.get(f"{url}/api/v1/demo/inbox", timeout=5).json()["capacity"] == 200
        if has_build():  # `make test` builds the UI first: the one URL printed is the dashboard
            assert f"{url}/ (the dashboard" in (tmp_path / "demo.log").read_text()
            assert 'id="root"' in httpx.get(f"{url}/", timeout=5).text
        assert len(processes_working_in(tmp_path)) >= 4  # what must be gone afterwards is there now
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            raise
        finally:
            log.close()
    assert proc.returncode == 0, (tmp_path / "demo.log").read_text()
    assert processes_working_in(tmp_path) == [], "redis/worker/beat/heartbeat left behind"


def processes_working_in(directory: Path) -> list[str]:
    """The demo's children (Redis, worker, beat, heartbeat) run with their cwd in its dir."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if cwd.startswith(str(directory)):
                found.append(f"{entry.name}: {(entry / 'cmdline').read_bytes()[:80]!r}")
    return found
