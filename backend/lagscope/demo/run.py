"""``lagscope demo``: the whole product on one machine and one URL.

A MariaDB lab (source, a near replica, a far replica behind a 50 ms proxy), a write load, its
own Redis, an embedded SQLite store, a worker (its poll owner and Celery), beat and the
heartbeat writer, and the API in demo mode (no login) on one port. The ``tuning`` scenario (the
default) then changes the replicas' settings phase by phase (:mod:`lagscope.demo.scenario`);
``steady`` keeps a light load on the lab's defaults. Everything it starts stops on Ctrl-C (or
after ``duration_s``); the store file is kept for a look afterwards.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from lagscope.api.app import create_app
from lagscope.api.serve import server_config
from lagscope.api.webui import has_build
from lagscope.config import PLACEHOLDER_SECRET, Settings, require_loopback_or_allowed
from lagscope.db import make_engine, make_session_factory
from lagscope.demo.alerting import base_url, inbox_allow, inbox_url
from lagscope.demo.cluster import mark_store, register_lab
from lagscope.demo.incident_plan import IncidentStep, Step, demo_plan
from lagscope.demo.load import WriteLoad
from lagscope.demo.processes import (
    ManagedProcess,
    RedisServer,
    lagscope_command,
    wait_worker_ready,
)
from lagscope.demo.scenario import DEFAULT_PHASE_SECONDS
from lagscope.demo.scenario_runner import (
    ScenarioRunner,
    store_annotator,
    store_figures,
    store_notes,
)
from lagscope.demo.stopping import RUN_TAG_VAR, DemoStopped, StopSignals, stop_all
from lagscope.lab import Lab, LabConfig
from lagscope.lab.incidents import incident
from lagscope.store_setup import upgrade

FAR_DELAY_S = 0.05
# steady: a light load the lab's default replicas follow without lag.
LOAD_TPS = 200.0
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


def run_demo(workdir: Path, options: DemoOptions | None = None) -> None:
    options = options or DemoOptions()
    demo_plan(options.scenario, options.phase_seconds)  # refuse a bad plan before starting
    require_loopback_or_allowed(options.host)
    # Inherited by every child (lab servers, proxies, Redis, worker, beat): the final sweep
    # finds them by it whatever a signal interrupted.
    os.environ[RUN_TAG_VAR] = uuid.uuid4().hex
    signals = StopSignals()
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
        stop_all(started, workdir)


def _start_and_serve(
    workdir: Path,
    options: DemoOptions,
    started: list[Callable[[], object]],
    signals: StopSignals,
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
    mark_store(url)  # demo mode runs only on a store that carries this mark
    # The demo's alert rule sends to the API's own inbox: a loopback destination the webhook
    # allow-list must name (the API and the worker deliver, so both get it).
    allow = inbox_allow(options.host, os.environ.get("LAGSCOPE_WEBHOOK_ALLOWED_HOSTS", ""))
    base = base_url(options.host, options.port)
    cluster_id = register_lab(url, secret, lab, inbox_url(options.host, options.port), allow)
    env = _child_env(url, redis.url, secret, allow, base)
    _start_processes(workdir, env, started)
    plan = demo_plan(options.scenario, options.phase_seconds)
    load = _start_load(lab, options, plan, started)
    scenario = _scenario(lab, options, plan, load, url, cluster_id)
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


def _child_env(url: str, broker: str, secret: str, allow: str, base: str) -> dict[str, str]:
    """The environment of the worker, beat and heartbeat: the demo's store, broker and key."""
    return {
        **os.environ,
        "LAGSCOPE_DATABASE_URL": url,
        "LAGSCOPE_BROKER_URL": broker,
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


def _start_processes(
    workdir: Path, env: dict[str, str], started: list[Callable[[], object]]
) -> None:
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


def _start_load(
    lab: Lab, options: DemoOptions, plan: tuple[Step, ...], started: list[Callable[[], object]]
) -> WriteLoad:
    threads = TUNING_LOAD_THREADS if options.scenario == "tuning" else LOAD_THREADS
    # An opening incident sets its own load: start at it, not at the story's.
    opening = plan[0] if plan and isinstance(plan[0], IncidentStep) else None
    first_tps = opening.load_tps if opening and opening.load_tps else options.tps
    load = WriteLoad(lambda: lab.connect("source"), threads=threads, target_tps=first_tps)
    started.append(load.stop)
    load.start()
    return load


def _scenario(
    lab: Lab,
    options: DemoOptions,
    plan: tuple[Step, ...],
    load: WriteLoad,
    url: str,
    cluster_id: int,
) -> ScenarioRunner:
    sessions = make_session_factory(make_engine(url))
    return ScenarioRunner(
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


def _serve(
    settings: Settings, options: DemoOptions, signals: StopSignals, then: Callable[[], object]
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
