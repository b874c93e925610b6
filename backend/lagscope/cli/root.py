"""The ``lagscope`` group itself: every command runs under it, and the changes a command makes go
to the audit trail as the OS user's (the servers and jobs, which write bookkeeping, excepted);
with the small helpers the command groups share (an ISO time read as epoch ms, a heartbeat table
named on the command line, a Lagscope error turned into an exit).
"""

from __future__ import annotations

import json
import sys

import click

from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.errors import CollectorError, LagscopeError


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
