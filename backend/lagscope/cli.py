"""The ``lagscope`` command line: ``probe``, ``lab …`` (more subcommands join as they are built)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from lagscope.analysis.readiness import COMPONENTS, PROCESS_KINDS
from lagscope.collectors.connection import (
    TLS_MODES,
    ConnectionSpec,
    TlsMode,
    check_public_key_setting,
    check_tls_setting,
)
from lagscope.collectors.executor import PyMySQLExecutor
from lagscope.collectors.export import snapshot_to_dict
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.poller import InstancePoller
from lagscope.errors import CollectorError, LagscopeError, NotFound


@click.group()
@click.version_option(package_name="lagscope")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Lagscope: why a MySQL/MariaDB replica is behind, and which tuning change fixed it."""
    if ctx.invoked_subcommand is not None and ctx.invoked_subcommand not in _NOT_AUDITED:
        _act_as_cli(ctx)


# Servers and jobs write bookkeeping, not an operator's change; `annotate` goes through the API,
# which records it; `migrate` changes the schema, not what is configured.
_NOT_AUDITED = frozenset(
    {"worker", "beat", "heartbeat", "api", "demo", "scenario", "health", "probe", "annotate",
     "migrate", "lab"}
)  # fmt: skip


def _act_as_cli(ctx: click.Context) -> None:
    """The changes this command makes go to the audit trail as the OS user's, from this host,
    named by the command's words only (never its arguments: one may be a password)."""
    import getpass
    import socket

    from lagscope.models.auditing import Who, act_as

    words, command = ["lagscope"], ctx.command
    for arg in sys.argv[1:]:
        found = command.commands.get(arg) if isinstance(command, click.Group) else None
        if found is None:
            break
        words.append(arg)
        command = found
    if len(words) == 1 and ctx.invoked_subcommand:  # run from code, not a shell
        words.append(ctx.invoked_subcommand)
    try:
        os_user = getpass.getuser()
    except (OSError, KeyError):  # a container's uid with no name
        os_user = "unknown"
    act_as(Who(f"cli:{os_user}", f"cli@{socket.gethostname()}", " ".join(words)))
    ctx.call_on_close(lambda: act_as(None))  # one command's, not the process's for good


def _epoch_ms(value: str | None, name: str) -> int | None:
    if value is None:
        return None
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"not an ISO 8601 time: {value!r}", param_hint=name) from None
    if moment.tzinfo is None:
        raise click.BadParameter("give a UTC offset, e.g. 2026-11-25T14:00:00Z", param_hint=name)
    return round(moment.timestamp() * 1000)


@main.command()
@click.argument("text")
@click.option("--cluster", required=True, help="The cluster's name (or id).")
@click.option("--instance", default=None, help="One server of the cluster, by name.")
@click.option("--tag", "tags", multiple=True, help="A tag, e.g. --tag deploy (repeatable).")
@click.option("--at", default=None, help="ISO 8601 time with offset (default: now).")
@click.option("--until", default=None, help="The end of a range (ISO 8601 with offset).")
@click.option(
    "--url",
    envvar="LAGSCOPE_URL",
    default="http://127.0.0.1:8000",
    show_default=True,
    help="Lagscope's base URL (or LAGSCOPE_URL).",
)
@click.option(
    "--token",
    envvar="LAGSCOPE_TOKEN",
    required=True,
    help="An editor's API token (or LAGSCOPE_TOKEN).",
)
def annotate(
    text: str,
    cluster: str,
    instance: str | None,
    tags: tuple[str, ...],
    at: str | None,
    until: str | None,
    url: str,
    token: str,
) -> None:
    """Put a note on a cluster's timeline (a deploy, a tuning step) through the API.

    It posts Grafana's annotation body to /api/v1/annotations/grafana, the endpoint deploy
    tools that post to Grafana can use as they are. Prints the API's answer as JSON."""
    import httpx

    body: dict[str, object] = {
        "text": text,
        "tags": [*tags, *([f"instance:{instance}"] if instance else [])],
    }
    if (start := _epoch_ms(at, "--at")) is not None:
        body["time"] = start
    if (end := _epoch_ms(until, "--until")) is not None:
        body["timeEnd"] = end
    try:
        response = httpx.post(
            f"{url.rstrip('/')}/api/v1/annotations/grafana",
            params={"cluster": cluster},
            json=body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=10.0,
        )
    except httpx.HTTPError as exc:
        raise click.ClickException(f"cannot reach Lagscope at {url}: {exc}") from exc
    if response.status_code >= 400:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        raise click.ClickException(f"refused ({response.status_code}): {detail}")
    click.echo(json.dumps(response.json()))


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
@click.option(
    "--tls",
    type=click.Choice(TLS_MODES),
    default="preferred",
    show_default=True,
    help="preferred: TLS if offered, unverified; required: TLS, unverified; verify_ca: the "
    "chain must lead to --tls-ca (or the system CAs); verify_identity: and name the host.",
)
@click.option(
    "--tls-ca",
    "tls_ca_path",
    default=None,
    type=click.Path(dir_okay=False, resolve_path=True),
    help="CA bundle (PEM) for verify_*.",
)
@click.option(
    "--server-public-key",
    "server_public_key_path",
    default=None,
    type=click.Path(dir_okay=False, resolve_path=True),
    help="The server's RSA public key (PEM) for a sha256_password / caching_sha2_password "
    "login without TLS (tls preferred); none: such a login needs verified TLS.",
)
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
    tls: TlsMode,
    tls_ca_path: str | None,
    server_public_key_path: str | None,
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
        tls=tls,
        tls_ca_path=tls_ca_path,
        server_public_key_path=server_public_key_path,
    )
    try:
        check_tls_setting(tls, tls_ca_path)
        check_public_key_setting(tls, server_public_key_path)
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


@main.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Print what would change; write nothing.")
def import_command(file: Path, dry_run: bool) -> None:
    """Make the store's clusters and instances match FILE (YAML or JSON), in one transaction.

    Idempotent: only differences are written, and a second run says "0 created, 0 changed".
    Nothing is deleted. The whole file is validated first (errors name the path and line);
    any refusal writes nothing. Works on the store (LAGSCOPE_DATABASE_URL) with
    LAGSCOPE_SECRET_KEY and LAGSCOPE_ALLOWED_TARGETS, like the API (docs/operations.md)."""
    from lagscope.api.schemas.import_file import plans_from
    from lagscope.config import get_settings
    from lagscope.inventory import import_document
    from lagscope.inventory.import_file import apply_plans
    from lagscope.security.secret_box import SecretBox, ensure_salt

    try:
        settings = get_settings()
        plans = plans_from(import_document.load(file), settings.password_file_dir)
        with _user_sessions()() as session:
            box = SecretBox(settings.secret_key, lambda: ensure_salt(session), settings.old_keys())
            try:
                report = apply_plans(
                    session, box, plans, settings.allow_list(), settings.tls_ca_dir
                )
            finally:
                if dry_run:
                    session.rollback()
            session.commit()  # after a dry run's rollback: nothing left to write
    except LagscopeError as exc:
        click.echo(f"lagscope import: {exc}", err=True)
        sys.exit(2)
    for change in report.changes:
        click.echo(change.line())
    click.echo(report.summary() + (" (dry run: nothing written)" if dry_run else ""))


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
    from lagscope.security.users import create_user

    sessions = make_session_factory(make_engine(get_settings().database_url))
    try:
        with sessions() as session, session.begin():
            created = create_user(session, username, password, role)
            click.echo(
                json.dumps({"id": created.id, "username": created.username, "role": created.role})
            )
    except LagscopeError as exc:
        _fail(exc)


def _user_sessions() -> Any:
    from lagscope.config import get_settings
    from lagscope.db import make_engine, make_session_factory

    return make_session_factory(make_engine(get_settings().database_url))


def _user_id(session: Any, username: str) -> int:
    from lagscope.security.users import find_user

    found = find_user(session, username)
    if found is None:
        raise NotFound(f"no user {username!r}")
    return found.id


def _user_change(username: str, change: Callable[[Any, int], object]) -> None:
    try:
        with _user_sessions()() as session, session.begin():
            user = change(session, _user_id(session, username))
            if user is not None:
                click.echo(json.dumps(_user_json(user)))
    except LagscopeError as exc:
        _fail(exc)


def _user_json(user: Any) -> dict[str, object]:
    return {"id": user.id, "username": user.username, "role": user.role, "disabled": user.disabled}


@user.command("list")
def list_users_command() -> None:
    """Every user, one JSON object a line."""
    from sqlalchemy import select

    from lagscope.models import User

    with _user_sessions()() as session:
        for found in session.scalars(select(User).order_by(User.id)):
            click.echo(json.dumps(_user_json(found)))


@user.command("disable")
@click.argument("username")
def disable_user_command(username: str) -> None:
    """Refuse the user's logins and revoke every token they hold, at once."""
    from lagscope.security import access

    _user_change(username, lambda s, uid: access.set_disabled(s, uid, True))


@user.command("enable")
@click.argument("username")
def enable_user_command(username: str) -> None:
    """Allow the user's logins again (the tokens revoked when disabled stay revoked)."""
    from lagscope.security import access

    _user_change(username, lambda s, uid: access.set_disabled(s, uid, False))


@user.command("delete")
@click.argument("username")
def delete_user_command(username: str) -> None:
    """Delete the user and every token they hold."""
    from lagscope.security import access

    _user_change(username, access.delete_user)


@user.command("set-role")
@click.argument("username")
@click.argument("role", type=click.Choice(["viewer", "editor", "admin"]))
def set_role_command(username: str, role: str) -> None:
    from lagscope.security import access

    _user_change(username, lambda s, uid: access.set_role(s, uid, role))


@user.command("set-password")
@click.argument("username")
@click.option(
    "--password",
    envvar="LAGSCOPE_NEW_USER_PASSWORD",
    prompt=True,
    hide_input=True,
    confirmation_prompt=True,
    help="Prompted when not given (or set LAGSCOPE_NEW_USER_PASSWORD).",
)
def set_password_command(username: str, password: str) -> None:
    """A new password; every token the user holds is revoked."""
    from lagscope.security import access

    _user_change(username, lambda s, uid: access.set_password(s, uid, password))


@user.command("tokens")
@click.argument("username")
def tokens_command(username: str) -> None:
    """The user's tokens (never the secrets), one JSON object a line."""
    from sqlalchemy import select

    from lagscope.models import ApiToken

    try:
        with _user_sessions()() as session:
            uid = _user_id(session, username)
            for token in session.scalars(select(ApiToken).where(ApiToken.user_id == uid)):
                click.echo(
                    json.dumps(
                        {
                            "id": token.id,
                            "name": token.name,
                            "kind": token.kind,
                            "expires_at": token.expires_at.isoformat()
                            if token.expires_at
                            else None,
                        }
                    )
                )
    except LagscopeError as exc:
        _fail(exc)


@user.command("revoke-token")
@click.argument("token_id", type=int)
def revoke_token_command(token_id: int) -> None:
    """Revoke one token by id (see `lagscope user tokens`)."""
    from lagscope.models import ApiToken

    with _user_sessions()() as session, session.begin():
        token = session.get(ApiToken, token_id)
        if token is None:
            _fail(NotFound(f"token {token_id} not found"))
        session.delete(token)
    click.echo(json.dumps({"revoked": token_id}))


@main.group("check-token")
def check_token_group() -> None:
    """Read-only tokens for the lag check routes (proxies, throttlers), each for some clusters."""


def _check_token_json(info: Any) -> dict[str, object]:
    return {
        "id": info.id,
        "name": info.name,
        "clusters": info.clusters,
        "created_by": info.created_by,
        "created_at": info.created_at.isoformat(),
        "last_used_at": info.last_used_at.isoformat() if info.last_used_at else None,
    }


@check_token_group.command("create")
@click.option(
    "--cluster",
    "clusters",
    multiple=True,
    required=True,
    help="A cluster the token may ask about (its name, or id); repeat for more.",
)
@click.option("--name", default="check", show_default=True, help="What the token is for.")
def create_check_token_command(clusters: tuple[str, ...], name: str) -> None:
    """Make a check token and print it, with its clusters, as JSON: it is shown only now."""
    from lagscope.api.schemas.common import printable
    from lagscope.security import check_tokens

    try:
        name = printable(name.strip())[:128] or "check"
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--name") from None
    try:
        with _user_sessions()() as session, session.begin():
            info, token = check_tokens.create_check_token(session, name, list(clusters), "cli")
            click.echo(json.dumps({**_check_token_json(info), "token": token}))
    except LagscopeError as exc:
        _fail(exc)


@check_token_group.command("list")
def list_check_tokens_command() -> None:
    """Every check token (never the token itself), one JSON object a line."""
    from lagscope.security import check_tokens

    with _user_sessions()() as session:
        for info in check_tokens.list_check_tokens(session):
            click.echo(json.dumps(_check_token_json(info)))


@check_token_group.command("revoke")
@click.argument("token_id", type=int)
def revoke_check_token_command(token_id: int) -> None:
    """Revoke a check token by id (see `lagscope check-token list`): its next check gets 401."""
    from lagscope.security import check_tokens

    try:
        with _user_sessions()() as session, session.begin():
            check_tokens.revoke_check_token(session, token_id)
    except LagscopeError as exc:
        _fail(exc)
    click.echo(json.dumps({"revoked": token_id}))


@main.group("secrets")
def secrets_group() -> None:
    """Stored credentials and the secret key."""


@secrets_group.command("generate-key")
def generate_key_command() -> None:
    """Print a new random key for LAGSCOPE_SECRET_KEY (32 random bytes, URL-safe base64)."""
    from lagscope.config import generate_key

    click.echo(generate_key())


@secrets_group.command("rotate")
@click.option("--dry-run", is_flag=True, help="Check every value decrypts; change nothing.")
def rotate_command(dry_run: bool) -> None:
    """Re-encrypt every stored credential under LAGSCOPE_SECRET_KEY, in one transaction.

    Values are read with LAGSCOPE_SECRET_KEY or LAGSCOPE_OLD_SECRET_KEYS; if any decrypts with
    none of them, nothing is changed and each is named (exit status 2). Prints the counts.
    """
    from lagscope.config import get_settings
    from lagscope.security.key_rotation import RotationRefused, rotate_credentials
    from lagscope.security.secret_box import SecretBox, ensure_salt

    settings = get_settings()
    try:
        with _user_sessions()() as session, session.begin():
            box = SecretBox(settings.secret_key, lambda: ensure_salt(session), settings.old_keys())
            report = rotate_credentials(session, box, dry_run)
    except RotationRefused as exc:
        error = {"error": "RotationRefused", "message": str(exc), "unreadable": exc.unreadable}
        click.echo(json.dumps(error), err=True)
        sys.exit(2)
    except LagscopeError as exc:
        _fail(exc)
    click.echo(
        json.dumps(
            {
                "dry_run": report.dry_run,
                "rotated": dict(report.rotated),
                "decrypted_with": dict(report.decrypted_with),
            }
        )
    )


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
    from pathlib import Path

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
    import os
    import signal

    from lagscope.config import get_settings
    from lagscope.db import make_engine, make_session_factory
    from lagscope.demo import external
    from lagscope.demo.run import TUNING_LOAD_THREADS, TUNING_LOAD_TPS
    from lagscope.demo.scenario import parse_phase_seconds, plan_for
    from lagscope.security.secret_box import store_box

    def password(account: str) -> str:
        return os.environ.get(f"LAGSCOPE_SCENARIO_{account}_PASSWORD", "")

    try:
        setup = external.ExternalScenario(
            cluster=cluster,
            source=external.parse_server(source),
            replicas=tuple(external.parse_server(r) for r in replicas),
            admin=external.Login(admin_user, password("ADMIN")),
            monitor=external.Login(monitor_user, password("MONITOR")),
            heartbeat=external.Login(heartbeat_user, password("HEARTBEAT"))
            if heartbeat_user
            else None,
            plan=plan_for(kind, parse_phase_seconds(phase_seconds)),
            load_tps=load_tps or (TUNING_LOAD_TPS if kind == "tuning" else 200.0),
            load_threads=TUNING_LOAD_THREADS if kind == "tuning" else 2,
            loop=loop,
        )
        settings = get_settings()
        sessions = make_session_factory(make_engine(settings.database_url))
        # The handler only records: it runs between two bytecodes of the main thread, which
        # may hold any lock at that moment (see lagscope.demo.run._Signals).
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


def _mount_lab() -> None:
    try:
        from lagscope.lab.cli import lab
    except ImportError:  # the lab package is optional at import time during development
        return
    main.add_command(lab)


_mount_lab()
