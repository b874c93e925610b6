"""``lagscope demo``: the whole product on one machine and one URL.

A MariaDB lab (source, a near replica, a far replica behind a 50 ms proxy), a steady write load,
its own Redis, an embedded SQLite store, a Celery worker, beat and the heartbeat writer, and the
API in demo mode (no login) on one port. Everything it starts stops on Ctrl-C (or after
``duration_s``); the store file is kept for a look afterwards.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import uvicorn

from lagscope.api.app import create_app
from lagscope.config import PLACEHOLDER_SECRET, Settings, require_loopback_or_allowed
from lagscope.db import make_engine, make_session_factory
from lagscope.demo.load import WriteLoad
from lagscope.demo.processes import ManagedProcess, RedisServer, lagscope_command
from lagscope.lab import Lab, LabConfig
from lagscope.services import inventory
from lagscope.services.secrets import SecretBox
from lagscope.store_setup import upgrade

FAR_DELAY_S = 0.05
LOAD_TPS = 200.0


def run_demo(
    workdir: Path, host: str = "127.0.0.1", port: int = 8000, duration_s: float | None = None
) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    store = workdir / "lagscope-demo.db"
    for leftover in workdir.glob("lagscope-demo.db*"):
        leftover.unlink()  # a fresh history each run
    url = f"sqlite:///{store}"
    # Demo mode refuses a real key (it would mark a real store): the lab's throwaway
    # credentials are encrypted under the placeholder.
    secret = PLACEHOLDER_SECRET
    require_loopback_or_allowed(host)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    lab = Lab.start(LabConfig(replicas=2, proxied=("replica2",), proxy_delay_s=FAR_DELAY_S))
    processes: list[ManagedProcess] = []
    redis: RedisServer | None = None
    load: WriteLoad | None = None
    try:
        redis = RedisServer(workdir)
        upgrade(url)
        _register(url, secret, lab)
        env = {
            **os.environ,
            "LAGSCOPE_DATABASE_URL": url,
            "LAGSCOPE_BROKER_URL": redis.url,
            "LAGSCOPE_SECRET_KEY": secret,
            "LAGSCOPE_DEMO": "1",
        }
        worker = ManagedProcess(
            "worker", lagscope_command("worker", "--concurrency", "2"), workdir, env
        )
        processes.append(worker)
        worker.wait_for_log("ready.")
        processes.append(
            ManagedProcess(
                "beat", lagscope_command("beat", "-s", str(workdir / "beat")), workdir, env
            )
        )
        processes.append(ManagedProcess("heartbeat", lagscope_command("heartbeat"), workdir, env))
        load = WriteLoad(lambda: lab.connect("source"), threads=2, target_tps=LOAD_TPS).start()
        settings = Settings(database_url=url, secret_key=secret, demo=True, broker_url=redis.url)
        _serve(settings, host, port, stop, duration_s)
    finally:
        if load is not None:
            load.stop()
        for process in reversed(processes):
            process.stop()
        if redis is not None:
            redis.stop()
        lab.stop()


def _register(url: str, secret: str, lab: Lab) -> None:
    box = SecretBox(secret)
    sessions = make_session_factory(make_engine(url))
    user, password = lab.credentials.monitor
    with sessions() as session, session.begin():
        cluster = inventory.create_cluster(session, "demo", heartbeat_mode="lagscope")
        inventory.set_heartbeat_writer(session, box, cluster, *lab.credentials.heartbeat)
        for name, role, region in (
            ("source", "source", "near"),
            ("replica1", "replica", "near"),
            ("replica2", "replica", "far"),
        ):
            server = lab.server(name)
            inventory.add_instance(
                session, box, cluster, name, server.host, server.port, user, password, role, region
            )


def _serve(
    settings: Settings, host: str, port: int, stop: threading.Event, duration_s: float | None
) -> None:
    app = create_app(settings, make_session_factory(make_engine(settings.database_url)))
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="warning",
            lifespan="off",
            server_header=False,
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    print(
        f"Lagscope demo: http://{host}:{port}/api/v1/docs (API in demo mode: no login)", flush=True
    )
    deadline = time.monotonic() + duration_s if duration_s else None
    while not stop.is_set() and thread.is_alive():
        if deadline is not None and time.monotonic() >= deadline:
            break
        stop.wait(0.5)
    server.should_exit = True
    thread.join(timeout=10)
