"""``lagscope demo``: the whole product on one machine and one URL.

A MariaDB lab (source, a near replica, a far replica behind a 50 ms proxy), a steady write load,
its own Redis, an embedded SQLite store, a Celery worker, beat and the heartbeat writer, and the
API in demo mode (no login) on one port. Everything it starts stops on Ctrl-C (or after
``duration_s``); the store file is kept for a look afterwards.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
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


class DemoStopped(BaseException):
    """Raised in the main thread by the first SIGINT or SIGTERM. A BaseException, like
    KeyboardInterrupt, so no ``except Exception`` on the way swallows it; start-up steps (the
    lab's included) clean up what they started when it passes through them."""


class _Signals:
    """The signal handler does no locking work: it runs between two bytecodes of the main
    thread, which may hold any lock at that moment (the old handler's ``Event.set()`` met the
    main thread's ``Event.wait()`` on the Event's own lock and the demo hung forever).

    A signal raises DemoStopped wherever the main thread is (start-up or serving) and records
    the request: an exception raised inside a finalizer (``__del__``) is printed and dropped by
    Python, so the serving loop also checks ``requested``, and a later signal raises again.
    Once clean-up has begun, signals are only recorded, so a second Ctrl-C cannot cut it short.
    """

    def __init__(self) -> None:
        self.requested = False
        self.cleaning_up = False

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self._handle)
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, _frame: object) -> None:
        self.requested = True
        if not self.cleaning_up:
            raise DemoStopped(signum)


def run_demo(
    workdir: Path, host: str = "127.0.0.1", port: int = 8000, duration_s: float | None = None
) -> None:
    require_loopback_or_allowed(host)
    signals = _Signals()
    signals.install()
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    started: list[Callable[[], object]] = []  # what to stop, in start order
    try:
        _start_and_serve(workdir, host, port, duration_s, started, signals)
    except DemoStopped:
        pass
    finally:
        signals.cleaning_up = True
        _stop_all(started, workdir)


def _start_and_serve(
    workdir: Path,
    host: str,
    port: int,
    duration_s: float | None,
    started: list[Callable[[], object]],
    signals: _Signals,
) -> None:
    store = workdir / "lagscope-demo.db"
    for leftover in workdir.glob("lagscope-demo.db*"):
        leftover.unlink()  # a fresh history each run
    url = f"sqlite:///{store}"
    # Demo mode refuses a real key (it would mark a real store): the lab's throwaway
    # credentials are encrypted under the placeholder.
    secret = PLACEHOLDER_SECRET
    lab = Lab.start(LabConfig(replicas=2, proxied=("replica2",), proxy_delay_s=FAR_DELAY_S))
    started.append(lab.stop)
    redis = RedisServer(workdir)
    started.append(redis.stop)
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
    started.append(worker.stop)
    worker.wait_for_log("ready.")
    beat = ManagedProcess(
        "beat", lagscope_command("beat", "-s", str(workdir / "beat")), workdir, env
    )
    started.append(beat.stop)
    heartbeat = ManagedProcess("heartbeat", lagscope_command("heartbeat"), workdir, env)
    started.append(heartbeat.stop)
    load = WriteLoad(lambda: lab.connect("source"), threads=2, target_tps=LOAD_TPS)
    started.append(load.stop)
    load.start()
    settings = Settings(database_url=url, secret_key=secret, demo=True, broker_url=redis.url)
    _serve(settings, host, port, duration_s, signals)


def _stop_all(started: list[Callable[[], object]], workdir: Path) -> None:
    """Stop in reverse order; one failing stop never keeps the others running. Then sweep: a
    signal that landed between a child's start and its registration above must not leave it."""
    for stop in reversed(started):
        try:
            stop()
        except Exception as exc:
            print(f"lagscope demo: stopping {stop!r} failed: {exc}", file=sys.stderr, flush=True)
    for pid in children_working_in(workdir):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def children_working_in(directory: Path) -> list[int]:
    """Processes whose working directory is inside ``directory`` (Redis, worker, beat and
    heartbeat run there), this process excluded."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if cwd == str(directory) or cwd.startswith(f"{directory}/"):
                found.append(int(entry.name))
    return found


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
    settings: Settings, host: str, port: int, duration_s: float | None, signals: _Signals
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
    # uvicorn installs no signal handlers off the main thread: ours stay in charge.
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        print(
            f"Lagscope demo: http://{host}:{port}/api/v1/docs (API in demo mode: no login)",
            flush=True,
        )
        deadline = time.monotonic() + duration_s if duration_s else None
        while thread.is_alive() and not signals.requested:
            if deadline is not None and time.monotonic() >= deadline:
                break
            time.sleep(0.2)  # a signal interrupts this sleep with DemoStopped
    finally:
        server.should_exit = True
        thread.join(timeout=5)
