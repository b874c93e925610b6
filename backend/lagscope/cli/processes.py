"""The long-running processes: ``worker`` and ``beat`` (Celery, each a child that dies with its
parent), ``heartbeat`` (the writer), ``api`` (the web server), and ``health`` (the check a
container's health probe runs).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from lagscope.analysis.readiness import COMPONENTS, PROCESS_KINDS
from lagscope.cli.root import main
from lagscope.errors import LagscopeError


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.option("--concurrency", default=2, show_default=True, type=click.IntRange(1, 64))
@click.option(
    "--queues",
    "role",
    type=click.Choice(["all", "polls", "slow", "owner"]),
    default="all",
    show_default=True,
    help="all: Celery's worker for the default queue and, in child processes, the poll owner"
    " (the owner engine, the default; none with LAGSCOPE_POLL_ENGINE=celery, whose polls are"
    " Celery tasks) and a worker for the slow jobs; polls: the same without the slow jobs'"
    " worker; slow: that worker alone; owner: the poll owner alone.",
)
# The slow jobs' worker and the poll owner started by "all": the parent reports for them
# (tasks/processes.py).
@click.option("--child", is_flag=True, hidden=True)
@click.pass_context
def worker(ctx: click.Context, concurrency: int, role: str, child: bool) -> None:
    """Run a worker that polls clusters and sends webhooks (extra arguments go to Celery)."""
    import subprocess

    from lagscope.config import get_settings
    from lagscope.tasks import processes
    from lagscope.tasks.app import app
    from lagscope.tasks.queues import worker_argv

    if role == "owner":
        from lagscope.engine.process import run_owner

        run_owner()
        return
    if role == "slow":
        if child:
            processes.report_as_worker(False)
        app.worker_main(worker_argv("slow", 1, ctx.args))
        return
    children = []
    if role == "all":
        slow = subprocess.Popen(
            [sys.executable, "-m", "lagscope", "worker", "--queues", "slow", "--child", *ctx.args],
            preexec_fn=_die_with_parent,  # only prctl runs before exec
        )
        children.append(slow)
        _end_with_child(slow, "the slow jobs' worker")
    if get_settings().poll_engine == "owner":
        owner = subprocess.Popen(
            [sys.executable, "-m", "lagscope", "worker", "--queues", "owner", "--child"],
            preexec_fn=_die_with_parent,
        )
        children.append(owner)
        _end_with_child(owner, "the poll owner")
    try:
        app.worker_main(worker_argv("polls", concurrency, ctx.args))
    finally:
        for child_process in children:
            child_process.terminate()
        for child_process in children:
            try:
                child_process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child_process.kill()


def _end_with_child(slow: Any, what: str) -> None:
    """A slow jobs' worker (or a poll owner) that died alone would leave rollups, retention and
    the binlog windows (or the polls) undone behind a worker that reports itself healthy: the
    polls' worker then stops too (a warm shutdown), so its supervisor restarts them all."""
    import logging
    import os
    import signal
    import threading

    from celery.worker import state

    def watch() -> None:
        code = slow.wait()
        if state.should_stop is not None or state.should_terminate is not None:
            return  # this worker is stopping already (a group's SIGTERM reaches both)
        logging.getLogger(__name__).error(
            "%s ended (exit %s): stopping this worker too", what, code
        )
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="slow-worker-watch", daemon=True).start()


def _die_with_parent() -> None:
    """The slow jobs' worker ends with the worker that started it, however that one ends."""
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
def beat(ctx: click.Context) -> None:
    """Run Celery beat: rollups, retention, the binlog windows and, with the Celery engine, the
    poll dispatcher (run exactly one)."""
    from lagscope.tasks.app import app

    app.start(["beat", "--loglevel=INFO", *ctx.args])


@main.command()
@click.option(
    "--refresh", default=10.0, show_default=True, help="Seconds between re-reading clusters."
)
def heartbeat(refresh: float) -> None:
    """Write heartbeats on the source of every cluster with heartbeat mode 'lagscope'."""
    import signal
    import threading

    from lagscope.config import get_settings
    from lagscope.db import make_engine, make_session_factory
    from lagscope.ingest.heartbeat import HeartbeatService
    from lagscope.inventory.server_logins import Backoff
    from lagscope.security.secret_box import store_box

    settings = get_settings()
    sessions = make_session_factory(make_engine(settings.database_url))
    service = HeartbeatService(
        sessions,
        store_box(sessions, settings.secret_key, settings.old_keys()),
        refresh_s=refresh,
        allowed=settings.allow_list(),
        # The pollers' back-off, kept on the cluster row.
        backoff=Backoff(
            settings.login_backoff_base_s,
            settings.login_backoff_max_s,
            settings.login_give_up_after,
        ),
    )
    from lagscope.health.self_watch import SelfWatch

    watch = SelfWatch("heartbeat", settings, sessions)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    watch.start()
    try:
        service.run(stop)
    finally:
        watch.stop()


@main.command()
@click.option(
    "--check",
    "checks",
    multiple=True,
    type=click.Choice(COMPONENTS),
    help="The parts that decide the exit status (repeatable; default: all).",
)
@click.option(
    "--process",
    type=click.Choice(PROCESS_KINDS),
    default=None,
    help="Also require this host's process of that kind to have reported (a container's check).",
)
def health(checks: tuple[str, ...], process: str | None) -> None:
    """Lagscope's own parts as /readyz judges them, straight from the store and the broker
    (no API needed): prints JSON, exits 1 when a deciding part is down (or --process missing)."""
    import socket
    import time

    from lagscope.analysis.readiness import assess, running
    from lagscope.api.routers.health import readiness_out
    from lagscope.config import get_settings
    from lagscope.db import make_engine, make_session_factory
    from lagscope.health.facts import gather_with

    settings = get_settings()
    sessions = make_session_factory(make_engine(settings.database_url))
    facts = gather_with(sessions, settings, time.time())
    readiness = assess(facts)
    click.echo(readiness_out(readiness).model_dump_json(indent=2))
    failing = readiness.failing(frozenset(checks) if checks else None)
    if process is not None:
        host = socket.gethostname()
        mine = [p for p in running(facts) if p.kind == process and p.name.rsplit(":", 1)[0] == host]
        if not mine:
            click.echo(f"lagscope health: no {process} on {host} has reported lately", err=True)
            sys.exit(1)
    if failing:
        names = ", ".join(c.name for c in failing)
        click.echo(f"lagscope health: down: {names}", err=True)
        sys.exit(1)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
def api(host: str, port: int) -> None:
    """Serve the HTTP API (and, once built, the UI) with uvicorn."""
    from lagscope.config import get_settings, require_loopback_or_allowed

    settings = get_settings()
    if settings.demo:
        try:
            require_loopback_or_allowed(host, settings)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from exc

    import uvicorn

    from lagscope.api.app import create_app
    from lagscope.api.serve import server_config

    try:
        app = create_app(settings)
    except LagscopeError as exc:
        raise click.UsageError(str(exc)) from exc
    uvicorn.Server(server_config(app, settings, host, port, log_level="info")).run()
