"""docker-compose.yml's healthchecks for Lagscope's own services, run for real.

Beat waits for a healthy worker and everything waits for the API's and the store's gates, so a
healthcheck that can never pass would hold a deployment back forever. The worker's, beat's, the
heartbeat writer's and the API's commands are taken from the compose file and run against the
real processes (with Redis), as Docker would run them inside the container: each fails before
its process runs and passes once it has reported (the API's in-container port is swapped for
the free port the test's API listens on).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lagscope.demo.processes import ManagedProcess, RedisServer, free_port, lagscope_command
from lagscope.store_setup import upgrade

from .waiting import wait_until

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KEY = "k7Hq2vX9pLm4Rt8Wz3Nc6Bd1Fg5Js0Ya-UeQiOoPx"


def healthcheck(service: str) -> list[str]:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    test: list[str] = services[service]["healthcheck"]["test"]
    return test


def run_check(test: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    kind, *command = test
    # Compose writes $$ for a literal $ (the container's shell expands it).
    command = [part.replace("$$", "$") for part in command]
    argv = ["sh", "-c", command[0]] if kind == "CMD-SHELL" else command
    venv_bin = str(Path(sys.executable).parent)
    env = {**env, "PATH": f"{venv_bin}:{env.get('PATH', '')}"}
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)


def test_worker_and_api_healthchecks_pass_on_the_real_services(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    redis = RedisServer(tmp_path)
    started: list[ManagedProcess] = []
    try:
        env = {
            **os.environ,
            "LAGSCOPE_DATABASE_URL": url,
            "LAGSCOPE_BROKER_URL": redis.url,
            "LAGSCOPE_SECRET_KEY": KEY,
            "HOSTNAME": socket.gethostname(),
        }
        env.pop("LAGSCOPE_DEMO", None)
        worker_check = healthcheck("worker")
        # Before a worker runs, the check must fail (and not hang): beat must wait.
        assert run_check(worker_check, env).returncode != 0
        worker = ManagedProcess(
            "worker", lagscope_command("worker", "--concurrency", "1"), tmp_path, env
        )
        started.append(worker)
        worker.wait_for_log("ready.", timeout_s=120)
        done = wait_until(
            lambda: (r := run_check(worker_check, env)).returncode == 0 and r,
            timeout_s=120,
            interval_s=2,
            message="the worker's compose healthcheck to pass",
        )
        assert '"name": "workers"' in done.stdout and '"count": 1' in done.stdout
        # Beat and the heartbeat writer: each container's own process, the same judgement.
        for name, argv in (
            ("beat", lagscope_command("beat", "-s", str(tmp_path / "beat-schedule"))),
            ("heartbeat", lagscope_command("heartbeat")),
        ):
            check = healthcheck(name)
            assert run_check(check, env).returncode != 0, f"{name}: passes before it runs"
            started.append(ManagedProcess(name, argv, tmp_path, env))
            wait_until(
                lambda check=check: run_check(check, env).returncode == 0,
                timeout_s=120,
                interval_s=2,
                message=f"the {name}'s compose healthcheck to pass",
            )

        port = free_port()
        api = ManagedProcess(
            "api",
            lagscope_command("api", "--host", "127.0.0.1", "--port", str(port)),
            tmp_path,
            env,
        )
        started.append(api)
        api_check = [part.replace(":8000/", f":{port}/") for part in healthcheck("api")]
        assert api_check != healthcheck("api")  # the port was there to swap
        wait_until(
            lambda: run_check(api_check, env).returncode == 0,
            timeout_s=120,
            interval_s=1,
            message="the API's compose healthcheck to pass",
        )
    finally:
        for process in reversed(started):
            process.stop()
        redis.stop()
