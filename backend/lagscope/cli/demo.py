"""``lagscope demo`` and ``lagscope scenario``: the demo (a lab, the processes and a story of lag
and its fix) and the scenario alone against a running lab, for recordings and screenshots.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from lagscope.cli.root import _fail, main
from lagscope.errors import LagscopeError

if TYPE_CHECKING:
    from lagscope.demo.external import ExternalScenario


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--dir", "workdir", default=".demo", show_default=True, help="Store, logs and Redis files."
)
@click.option("--duration", default=None, type=float, help="Stop after this many seconds.")
@click.option(
    "--scenario",
    type=click.Choice(["tuning", "incidents", "steady"]),
    default="tuning",
    show_default=True,
    help="tuning: a blocked applier, then lag builds under strict flush and falls as the "
    "replicas are tuned in phases A, B, C; incidents: one cause of lag after another (a "
    "blocking session, a large transaction, a long ALTER, a keyless update, a squeezed link), "
    "each noted on the timeline; steady: a light load on the lab's defaults.",
)
@click.option(
    "--phase-seconds",
    default="60,90,150",
    show_default=True,
    help="Length of the tuning phases A,B,C (or one number for all).",
)
@click.option(
    "--load-tps",
    default=None,
    type=click.FloatRange(1, 100_000),
    help="Write load on the source, transactions/s [tuning: 2000, incidents and steady: 200].",
)
@click.option("--loop", is_flag=True, help="Tell the tuning story again after phase C.")
def demo(
    host: str,
    port: int,
    workdir: str,
    duration: float | None,
    scenario: str,
    phase_seconds: str,
    load_tps: float | None,
    loop: bool,
) -> None:
    """Run everything locally: a replication lab under load, polling, the API on one URL."""

    from lagscope.demo.run import DemoOptions, run_demo
    from lagscope.demo.scenario import parse_phase_seconds

    try:
        phases = parse_phase_seconds(phase_seconds)
    except LagscopeError as exc:
        raise click.BadParameter(str(exc), param_hint="--phase-seconds") from exc
    options = DemoOptions(host, port, duration, scenario, phases, load_tps, loop)
    run_demo(Path(workdir).resolve(), options)


@main.command()
@click.option(
    "--source", required=True, help="The source: name=host:port[@region]  (e.g. source=db1:3306)."
)
@click.option(
    "--replica", "replicas", multiple=True, required=True, help="A replica (repeatable), same form."
)
@click.option("--cluster", default="lab", show_default=True, help="Cluster name in the store.")
@click.option("--admin-user", default="root", show_default=True, help="Sets variables, writes.")
@click.option("--monitor-user", default="lagscope_monitor", show_default=True)
@click.option(
    "--heartbeat-user", default="lagscope_heartbeat", show_default=True, help="'' for none."
)
@click.option("--scenario", "kind", type=click.Choice(["tuning", "steady"]), default="tuning")
@click.option("--phase-seconds", default="60,90,150", show_default=True)
@click.option("--load-tps", default=None, type=click.FloatRange(1, 100_000))
@click.option("--loop", is_flag=True, help="Tell the tuning story again after phase C.")
def scenario(
    source: str,
    replicas: tuple[str, ...],
    cluster: str,
    admin_user: str,
    monitor_user: str,
    heartbeat_user: str,
    kind: str,
    phase_seconds: str,
    load_tps: float | None,
    loop: bool,
) -> None:
    """Run the demo's load and tuning story on servers of your own (the docker-compose lab).

    Passwords come from LAGSCOPE_SCENARIO_ADMIN_PASSWORD, LAGSCOPE_SCENARIO_MONITOR_PASSWORD
    and LAGSCOPE_SCENARIO_HEARTBEAT_PASSWORD; the store and key from LAGSCOPE_DATABASE_URL and
    LAGSCOPE_SECRET_KEY. Runs until SIGTERM or Ctrl-C."""
    import signal

    from lagscope.config import get_settings
    from lagscope.db import make_engine, make_session_factory
    from lagscope.demo import external
    from lagscope.security.secret_box import store_box

    try:
        setup = _external_setup(
            source,
            replicas,
            cluster,
            (admin_user, monitor_user, heartbeat_user),
            kind,
            phase_seconds,
            load_tps,
            loop,
        )
        settings = get_settings()
        sessions = make_session_factory(make_engine(settings.database_url))
        # The handler only records: it runs between two bytecodes of the main thread, which
        # may hold any lock at that moment (see lagscope.demo.stopping.StopSignals).
        stop: list[int] = []
        signal.signal(signal.SIGTERM, lambda signum, _: stop.append(signum))
        signal.signal(signal.SIGINT, lambda signum, _: stop.append(signum))
        external.run_external(
            setup,
            sessions,
            store_box(sessions, settings.secret_key, settings.old_keys()),
            lambda: bool(stop),
            emit=lambda line: print(line, flush=True),  # a container's stdout is a pipe
        )
    except LagscopeError as exc:
        _fail(exc)


def _external_setup(
    source: str,
    replicas: tuple[str, ...],
    cluster: str,
    users: tuple[str, str, str],
    kind: str,
    phase_seconds: str,
    load_tps: float | None,
    loop: bool,
) -> ExternalScenario:
    """The scenario's servers, logins (passwords from LAGSCOPE_SCENARIO_<ACCOUNT>_PASSWORD) and
    plan, as ``lagscope scenario`` was given them."""
    import os

    from lagscope.demo import external
    from lagscope.demo.run import TUNING_LOAD_THREADS, TUNING_LOAD_TPS
    from lagscope.demo.scenario import parse_phase_seconds, plan_for

    def password(account: str) -> str:
        return os.environ.get(f"LAGSCOPE_SCENARIO_{account}_PASSWORD", "")

    admin_user, monitor_user, heartbeat_user = users
    return external.ExternalScenario(
        cluster=cluster,
        source=external.parse_server(source),
        replicas=tuple(external.parse_server(r) for r in replicas),
        admin=external.Login(admin_user, password("ADMIN")),
        monitor=external.Login(monitor_user, password("MONITOR")),
        heartbeat=external.Login(heartbeat_user, password("HEARTBEAT")) if heartbeat_user else None,
        plan=plan_for(kind, parse_phase_seconds(phase_seconds)),
        load_tps=load_tps or (TUNING_LOAD_TPS if kind == "tuning" else 200.0),
        load_threads=TUNING_LOAD_THREADS if kind == "tuning" else 2,
        loop=loop,
    )
