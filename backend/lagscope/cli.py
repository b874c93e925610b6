"""The ``lagscope`` command line: ``probe``, ``lab …`` (more subcommands join as they are built)."""

from __future__ import annotations

import json
import sys

import click

from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.export import snapshot_to_dict
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.poller import InstancePoller
from lagscope.errors import CollectorError, LagscopeError


@click.group()
@click.version_option(package_name="lagscope")
def main() -> None:
    """Lagscope: why a MySQL/MariaDB replica is behind, and which tuning change fixed it."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=3306, show_default=True, type=click.IntRange(1, 65535))
@click.option("--user", default="lagscope", show_default=True)
@click.option(
    "--password",
    envvar="MYSQL_PWD",
    default="",
    help="Password (or set MYSQL_PWD, which keeps it out of the process list).",
)
@click.option("--socket", "unix_socket", default=None, help="Unix socket instead of TCP.")
@click.option("--timeout", default=2.0, show_default=True, type=click.FloatRange(0.1, 60))
@click.option(
    "--heartbeat",
    type=click.Choice(["none", "lagscope", "pt-heartbeat"]),
    default="none",
    show_default=True,
)
@click.option(
    "--heartbeat-table", default=None, help="schema.table (pt-heartbeat: heartbeat.heartbeat)"
)
@click.option("--param", "extra_params", multiple=True, help="Extra variable to read (repeatable).")
def probe(
    host: str,
    port: int,
    user: str,
    password: str,
    unix_socket: str | None,
    timeout: float,
    heartbeat: str,
    heartbeat_table: str | None,
    extra_params: tuple[str, ...],
) -> None:
    """Print one normalized snapshot of a server as JSON, or a clear error naming the cause."""
    spec = ConnectionSpec(
        host=host,
        port=port,
        user=user,
        password=password,
        unix_socket=unix_socket,
        connect_timeout_s=timeout,
        read_timeout_s=timeout,
    )
    try:
        table = _heartbeat_table(heartbeat, heartbeat_table)
        poller = InstancePoller(PyMySQLExecutor(spec), heartbeat=table, extra_params=extra_params)
        try:
            snapshot = poller.poll()
        finally:
            poller.close()
    except LagscopeError as exc:
        _fail(exc)
    click.echo(json.dumps(snapshot_to_dict(snapshot), indent=2, sort_keys=False))


def _heartbeat_table(kind: str, qualified: str | None) -> HeartbeatTable | None:
    if kind == "none":
        return None
    default_schema = "lagscope" if kind == "lagscope" else "heartbeat"
    schema, _, table = (qualified or f"{default_schema}.heartbeat").partition(".")
    return HeartbeatTable(
        kind="lagscope" if kind == "lagscope" else "pt-heartbeat",
        schema=schema,
        table=table or "heartbeat",
    )


def _fail(exc: LagscopeError) -> None:
    error: dict[str, object] = {"error": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, CollectorError):
        error.update(server=exc.server, detail=exc.detail, code=exc.code)
    click.echo(json.dumps(error), err=True)
    sys.exit(2)


@main.command()
@click.option("--url", default=None, help="Database URL (default: LAGSCOPE_DATABASE_URL).")
def migrate(url: str | None) -> None:
    """Upgrade the store schema to the newest migration."""
    from lagscope.store_setup import upgrade

    upgrade(url)


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.option("--concurrency", default=2, show_default=True, type=click.IntRange(1, 64))
@click.pass_context
def worker(ctx: click.Context, concurrency: int) -> None:
    """Run a Celery worker that polls clusters (extra arguments go to Celery)."""
    from lagscope.tasks.app import app

    app.worker_main(["worker", "--loglevel=INFO", f"--concurrency={concurrency}", *ctx.args])


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
def beat(ctx: click.Context) -> None:
    """Run Celery beat: the poll dispatcher, rollups and retention (run exactly one)."""
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
    from lagscope.services.heartbeat import HeartbeatService
    from lagscope.services.secrets import SecretBox

    settings = get_settings()
    service = HeartbeatService(
        make_session_factory(make_engine(settings.database_url)),
        SecretBox(settings.secret_key),
        refresh_s=refresh,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    service.run(stop)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
def api(host: str, port: int) -> None:
    """Serve the HTTP API (and, once built, the UI) with uvicorn."""
    import uvicorn

    from lagscope.api.app import create_app

    # No "server: uvicorn" header: it tells an attacker what to look up.
    uvicorn.run(create_app(), host=host, port=port, log_level="info", server_header=False)


@main.group()
def user() -> None:
    """Manage API users."""


@user.command("create")
@click.option("--username", required=True)
@click.option(
    "--role", type=click.Choice(["viewer", "editor", "admin"]), default="viewer", show_default=True
)
@click.option(
    "--password",
    envvar="LAGSCOPE_NEW_USER_PASSWORD",
    prompt=True,
    hide_input=True,
    confirmation_prompt=True,
    help="Prompted when not given (or set LAGSCOPE_NEW_USER_PASSWORD).",
)
def create_user_command(username: str, role: str, password: str) -> None:
    """Create a user (the first admin, typically)."""
    from lagscope.config import get_settings
    from lagscope.db import make_engine, make_session_factory
    from lagscope.services.users import create_user

    sessions = make_session_factory(make_engine(get_settings().database_url))
    try:
        with sessions() as session, session.begin():
            created = create_user(session, username, password, role)
            click.echo(
                json.dumps({"id": created.id, "username": created.username, "role": created.role})
            )
    except LagscopeError as exc:
        _fail(exc)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--dir", "workdir", default=".demo", show_default=True, help="Store, logs and Redis files."
)
@click.option("--duration", default=None, type=float, help="Stop after this many seconds.")
def demo(host: str, port: int, workdir: str, duration: float | None) -> None:
    """Run everything locally: a replication lab under load, polling, the API on one URL."""
    from pathlib import Path

    from lagscope.demo.run import run_demo

    run_demo(Path(workdir).resolve(), host, port, duration)


def _mount_lab() -> None:
    try:
        from lagscope.lab.cli import lab
    except ImportError:  # the lab package is optional at import time during development
        return
    main.add_command(lab)


_mount_lab()
