"""``lagscope probe``: one poll of one server from the command line, printed as JSON, to check a
login, its privileges and what Lagscope reads before the server is added to a cluster.
"""

from __future__ import annotations

import json

import click

from lagscope.cli.root import _fail, _heartbeat_table, main
from lagscope.collectors.connection import (
    TLS_MODES,
    ConnectionSpec,
    TlsMode,
    check_public_key_setting,
    check_tls_setting,
)
from lagscope.collectors.executor import PyMySQLExecutor
from lagscope.collectors.export import snapshot_to_dict
from lagscope.collectors.poller import InstancePoller
from lagscope.errors import LagscopeError


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
