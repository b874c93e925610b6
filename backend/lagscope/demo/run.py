"""``lagscope demo``: the whole product on one machine and one URL.

A MariaDB lab (source, a near replica, a far replica behind a 50 ms proxy), a write load, its
own Redis, an embedded SQLite store, a worker (its poll owner and Celery), beat and the
heartbeat writer, and the API in demo mode (no login) on one port. The ``tuning`` scenario (the
default) then changes the replicas' settings phase by phase (:mod:`lagscope.demo.scenario`);
``steady`` keeps a light load on the lab's defaults. Everything it starts stops on Ctrl-C (or
after ``duration_s``); the store file is kept for a look afterwards.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from lagscope.api.app import create_app
from lagscope.api.serve import server_config
from lagscope.api.webui import has_build
from lagscope.config import PLACEHOLDER_SECRET, Settings, require_loopback_or_allowed
from lagscope.db import make_engine, make_session_factory
from lagscope.demo.alerting import base_url, inbox_allow, inbox_url, seed_alerting
from lagscope.demo.load import WriteLoad
from lagscope.demo.processes import (
    ManagedProcess,
    RedisServer,
    lagscope_command,
    wait_worker_ready,
)
from lagscope.demo.scenario import DEFAULT_PHASE_SECONDS, IncidentStep, demo_plan
from lagscope.demo.scenario_runner import (
    ScenarioRunner,
    store_annotator,
    store_figures,
    store_notes,
)
from lagscope.inventory import instances as inventory
from lagscope.lab import Lab, LabConfig
from lagscope.lab.incidents import incident
from lagscope.security.demo_store import mark_demo_store
from lagscope.security.secret_box import store_box
from lagscope.store_setup import upgrade

FAR_DELAY_S = 0.05
# steady: a light load the lab's default replicas follow without lag.
LOAD_TPS = 200.0
# How long the clean-up waits for graceful stops before the sweep SIGKILLs what is left.
STOP_BUDGET_S = 7.0
RUN_TAG_VAR = "LAGSCOPE_DEMO_RUN"
LOAD_THREADS = 2
# tuning: six writers so the source group-commits; 2000 trx/s is ~8x what a strict replica
# applies here (~220-280/s, fsync-bound) and ~60 % of what a relaxed serial one does
# (~3000-3600/s, CPU-bound), so lag builds in A and drains in B and C (docs/demo.md).
TUNING_LOAD_TPS = 2000.0
TUNING_LOAD_THREADS = 6
# The journal dates a param change within this; the default 5 s would stretch each step.
DEMO_PARAMS_EVERY_S = 2.0


@dataclass(frozen=True)
class DemoOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    duration_s: float | None = None
    scenario: str = "tuning"
    phase_seconds: tuple[float, float, float] = DEFAULT_PHASE_SECONDS
    load_tps: float | None = None  # None: the scenario's own
    loop: bool = False

    @property
    def tps(self) -> float:
        if self.load_tps is not None:
            return self.load_tps
        return TUNING_LOAD_TPS if self.scenario == "tuning" else LOAD_TPS


class DemoStopped(BaseException):
    """Raised in the main thread by the first SIGINT or SIGTERM. A BaseException, like
    KeyboardInterrupt, so no ``except Exception`` on the way swallows it; start-up steps (the
    lab's included) clean up what they started when it passes through them."""


class _Signals:
    """The signal handler does no locking work: it runs between two bytecodes of the main
    thread, which may hold any lock at that moment (the old handler's ``Event.set()`` met the
    main thread's ``Event.wait()`` on the Event's own lock and the demo hung forever).

    The first signal raises DemoStopped wherever the main thread is (start-up or serving) and
    records the request. A later one is only recorded: it lands while what the first one
    interrupted cleans up after itself (a lab that was starting removes its directory; a second
    Ctrl-C there once cut ``shutil.rmtree`` between two closes of one descriptor and the demo
    ended on that ``OSError``), and once the demo's own clean-up has begun nothing may cut it
    short. A first DemoStopped lost inside a finalizer (``__del__`` prints and drops an
    exception) is not lost for good: the serving loop checks ``requested``.
    """

    def __init__(self) -> None:
        self.requested = False
        self.cleaning_up = False

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self._handle)
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, _frame: object) -> None:
        first = not self.requested
        self.requested = True
        if first and not self.cleaning_up:
            raise DemoStopped(signum)


def run_demo(workdir: Path, options: DemoOptions | None = None) -> None:
    options = options or DemoOptions()
    demo_plan(options.scenario, options.phase_seconds)  # refuse a bad plan before starting
    require_loopback_or_allowed(options.host)
    # Inherited by every child (lab servers, proxies, Redis, worker, beat): the final sweep
    # finds them by it whatever a signal interrupted.
    os.environ[RUN_TAG_VAR] = uuid.uuid4().hex
    signals = _Signals()
    signals.install()
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    started: list[Callable[[], object]] = []  # what to stop, in start order
    try:
        _start_and_serve(workdir, options, started, signals)
    except DemoStopped:
        pass
    finally:
        signals.cleaning_up = True
        _stop_all(started, workdir)


def _start_and_serve(
    workdir: Path,
    options: DemoOptions,
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
    _mark(url)  # demo mode runs only on a store that carries this mark
    # The demo's alert rule sends to the API's own inbox: a loopback destination the webhook
    # allow-list must name (the API and the worker deliver, so both get it).
    allow = inbox_allow(options.host, os.environ.get("LAGSCOPE_WEBHOOK_ALLOWED_HOSTS", ""))
    base = base_url(options.host, options.port)
    cluster_id = _register(url, secret, lab, inbox_url(options.host, options.port), allow)
    env = {
        **os.environ,
        "LAGSCOPE_DATABASE_URL": url,
        "LAGSCOPE_BROKER_URL": redis.url,
        "LAGSCOPE_SECRET_KEY": secret,
        "LAGSCOPE_DEMO": "1",
        "LAGSCOPE_WEBHOOK_ALLOWED_HOSTS": allow,
        "LAGSCOPE_EXTERNAL_URL": base,
        "LAGSCOPE_PARAMS_EVERY_S": os.environ.get(
            "LAGSCOPE_PARAMS_EVERY_S", str(DEMO_PARAMS_EVERY_S)
        ),
        # A binlog window every minute: the parallel-apply prediction is there before phase C.
        "LAGSCOPE_COMMIT_SAMPLE_EVERY_S": os.environ.get("LAGSCOPE_COMMIT_SAMPLE_EVERY_S", "60"),
    }
    worker = ManagedProcess(
        "worker", lagscope_command("worker", "--concurrency", "2"), workdir, env
    )
    started.append(worker.stop)
    wait_worker_ready(worker, env)
    beat = ManagedProcess(
        "beat", lagscope_command("beat", "-s", str(workdir / "beat")), workdir, env
    )
    started.append(beat.stop)
    heartbeat = ManagedProcess("heartbeat", lagscope_command("heartbeat"), workdir, env)
    started.append(heartbeat.stop)
    threads = TUNING_LOAD_THREADS if options.scenario == "tuning" else LOAD_THREADS
    plan = demo_plan(options.scenario, options.phase_seconds)
    # An opening incident sets its own load: start at it, not at the story's.
    opening = plan[0] if plan and isinstance(plan[0], IncidentStep) else None
    first_tps = opening.load_tps if opening and opening.load_tps else options.tps
    load = WriteLoad(lambda: lab.connect("source"), threads=threads, target_tps=first_tps)
    started.append(load.stop)
    load.start()
    sessions = make_session_factory(make_engine(url))
    scenario = ScenarioRunner(
        plan,
        [replica.name for replica in lab.replicas],
        lab.connect,
        store_annotator(sessions, cluster_id),
        store_figures(sessions, cluster_id),
        emit=lambda line: print(line, flush=True),
        loop=options.loop,
        play=lambda step: incident(lab, step.incident, **dict(step.options)),
        notes=store_notes(sessions, cluster_id),
        set_load=lambda tps: load.set_rate(options.tps if tps is None else tps),
    )
    started.append(scenario.stop)
    settings = Settings(
        database_url=url,
        secret_key=secret,
        demo=True,
        broker_url=redis.url,
        webhook_allowed_hosts=allow,
        external_url=base,
        # The lab's replicas run on this machine: its cores cap the parallel-apply prediction.
        replica_cores=os.cpu_count() or 0,
    )
    _serve(settings, options, signals, then=scenario.start)


def _stop_all(started: list[Callable[[], object]], workdir: Path) -> None:
    """Stop everything at once; one failing stop never keeps the others running. Then sweep: a
    signal that landed between a child's start and its registration above must not leave it.

    The stops run side by side because each one grants its process a grace period (a Celery
    worker finishing its task, mariadbd flushing InnoDB): one after another, on a busy 2-core
    machine, those graces added up to more than the 10 s a user waits after Ctrl-C."""
    stoppers = [
        threading.Thread(target=_stop_quietly, args=(stop,), name=f"stop-{i}", daemon=True)
        for i, stop in enumerate(reversed(started))
    ]
    for stopper in stoppers:
        stopper.start()
    deadline = time.monotonic() + STOP_BUDGET_S
    for stopper in stoppers:
        stopper.join(max(0.0, deadline - time.monotonic()))
    for pid in set(children_working_in(workdir)) | set(processes_of_run(os.environ[RUN_TAG_VAR])):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _stop_quietly(stop: Callable[[], object]) -> None:
    try:
        stop()
    except Exception as exc:
        print(f"lagscope demo: stopping {stop!r} failed: {exc}", file=sys.stderr, flush=True)


def processes_of_run(tag: str) -> list[int]:
    """Every process that inherited this run's tag, this process excluded. It finds what the
    lab's own clean-up cannot: a mariadbd whose start a signal interrupted after the fork but
    before the lab recorded its pid (seen: one survived a SIGINT 2.9 s into start-up)."""
    needle = f"{RUN_TAG_VAR}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if needle in environ.split(b"\0"):
                found.append(int(entry.name))
    return found


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


def _mark(url: str) -> None:
    engine = make_engine(url)
    try:
        with make_session_factory(engine)() as session, session.begin():
            mark_demo_store(session)
    finally:
        engine.dispose()


def _register(url: str, secret: str, lab: Lab, inbox: str, allow: str) -> int:
    servers = {name: (lab.server(name).host, lab.server(name).port) for name, _, _ in TOPOLOGY}
    return register_demo(
        url, secret, servers, lab.credentials.monitor, lab.credentials.heartbeat, inbox, allow
    )


# The demo's cluster: (name, role, region).
TOPOLOGY = (
    ("source", "source", "near"),
    ("replica1", "replica", "near"),
    ("replica2", "replica", "far"),
)


def register_demo(
    url: str,
    secret: str,
    servers: Mapping[str, tuple[str, int]],
    monitor: tuple[str, str],
    heartbeat: tuple[str, str],
    inbox: str,
    allow: str,
) -> int:
    """The demo's cluster on ``servers`` (name: host, port), and its alert rule sending to the
    inbox (demo/alerting.py), in a store just made and marked."""
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    box = store_box(sessions, secret)
    user, password = monitor
    try:
        with sessions() as session, session.begin():
            cluster = inventory.create_cluster(session, "demo", heartbeat_mode="lagscope")
            inventory.set_heartbeat_writer(session, box, cluster, *heartbeat)
            for name, role, region in TOPOLOGY:
                host, port = servers[name]
                inventory.add_instance(
                    session, box, cluster, name, host, port, user, password, role, region
                )
            seed_alerting(session, box, cluster.id, inbox, allow.split(","))
            return cluster.id
    finally:
        engine.dispose()


def _serve(
    settings: Settings, options: DemoOptions, signals: _Signals, then: Callable[[], object]
) -> None:
    """Serve the API until a signal or ``duration_s``; ``then`` runs once the URL is printed."""
    host, port, duration_s = options.host, options.port, options.duration_s
    app = create_app(settings, make_session_factory(make_engine(settings.database_url)))
    server = uvicorn.Server(
        server_config(app, settings, host, port, log_level="warning", lifespan="off")
    )
    # uvicorn installs no signal handlers off the main thread: ours stay in charge.
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        base = f"http://{host}:{port}"
        if has_build(Path(settings.ui_dist) if settings.ui_dist else None):
            print(f"Lagscope demo: {base}/ (the dashboard; demo mode: no login)", flush=True)
        else:
            print(f"Lagscope demo: {base}/api/v1/docs (API in demo mode: no login)", flush=True)
        then()
        deadline = time.monotonic() + duration_s if duration_s else None
        while thread.is_alive() and not signals.requested:
            if deadline is not None and time.monotonic() >= deadline:
                break
            time.sleep(0.2)  # a signal interrupts this sleep with DemoStopped
    finally:
        server.should_exit = True
        thread.join(timeout=5)
