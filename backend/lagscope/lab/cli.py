"""``lagscope lab up|down|status|proxy|incident``: a lab that outlives the command that started it.

``up`` starts a detached lab and returns, leaving a pointer (a symlink ``current.json`` in
``$LAGSCOPE_LAB_DIR``, default ``/tmp/lagscope-lab``) to its state file; the other commands find
the lab through that pointer, or through ``--state PATH`` / ``$LAGSCOPE_LAB_STATE``. Everything
prints JSON so scripts and the demo can read ports and credentials from it.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

import click

from lagscope.errors import LagscopeError
from lagscope.lab import incidents
from lagscope.lab.topology import Lab, LabConfig

_POINTER = "current.json"


def pointer_path() -> Path:
    return Path(os.environ.get("LAGSCOPE_LAB_DIR") or "/tmp/lagscope-lab") / _POINTER


def _emit(data: dict[str, Any]) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


def _load(state: Path | None) -> Lab:
    path = state or pointer_path()
    if not path.exists():
        raise click.ClickException(f"no lab is up (nothing at {path}); start one with `lab up`")
    try:
        return Lab.load(path)
    except LagscopeError as exc:
        raise click.ClickException(str(exc)) from exc


def _point_at(lab: Lab) -> Path:
    pointer = pointer_path()
    pointer.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = pointer.with_name(f".{_POINTER}.{os.getpid()}")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(lab.state_path)
    os.replace(tmp, pointer)  # atomic: a concurrent `status` sees the old lab or the new one
    return pointer


def _clear_stale(pointer: Path) -> None:
    """Refuse if the pointed-at lab still runs; otherwise clean up whatever is left of it."""
    if not pointer.is_symlink() and not pointer.exists():
        return
    try:
        current = Lab.load(pointer)
    except LagscopeError:
        pointer.unlink(missing_ok=True)  # its state is gone: nothing of it can be found anyway
        return
    if any(current.is_running(server.name) for server in current.servers):
        raise click.ClickException(f"a lab is already up ({current.state_path}); `lab down` first")
    current.stop()  # leftovers: a proxy process, the directory
    pointer.unlink(missing_ok=True)


_state_option = click.option(
    "--state",
    type=click.Path(path_type=Path),
    envvar="LAGSCOPE_LAB_STATE",
    help="Lab state file (default: the pointer left by `lab up`).",
)


@click.group("lab")
def lab() -> None:
    """A local MariaDB GTID replication lab (source + replicas on loopback) for tests and demos."""


@lab.command()
@click.option("--replicas", default=2, show_default=True, type=click.IntRange(0, 9))
@click.option(
    "--proxied",
    multiple=True,
    help="Replica whose link goes through the latency proxy (repeatable) [default: replica2].",
)
@click.option("--no-proxy", is_flag=True, help="No proxied replica at all.")
@click.option("--delay-ms", default=50.0, show_default=True, type=click.FloatRange(0, 3_600_000))
@click.option("--dir", "base_dir", type=click.Path(path_type=Path), help="Lab directory.")
def up(
    replicas: int, proxied: tuple[str, ...], no_proxy: bool, delay_ms: float, base_dir: Path | None
) -> None:
    """Start a lab in the background and print its ports and credentials as JSON."""
    pointer = pointer_path()
    _clear_stale(pointer)
    if no_proxy:
        proxied = ()
    elif not proxied:
        proxied = ("replica2",) if replicas >= 2 else ()
    config = LabConfig(
        replicas=replicas, proxied=proxied, proxy_delay_s=delay_ms / 1000, base_dir=base_dir
    )
    try:
        started = Lab.start(config)
    except LagscopeError as exc:
        raise click.ClickException(str(exc)) from exc
    started.detach()
    _point_at(started)
    credentials = started.credentials
    _emit(
        {
            "state_path": str(started.state_path),
            "pointer": str(pointer),
            "start_seconds": round(started.start_seconds or 0.0, 3),
            "servers": {
                s.name: {"host": s.host, "port": s.port, "server_id": s.server_id, "pid": s.pid}
                for s in started.servers
            },
            "proxies": {name: started.proxy_for(name).listen_port for name in proxied},
            "credentials": {
                name: {"user": user, "password": password}
                for name, (user, password) in (
                    ("monitor", credentials.monitor),
                    ("admin", credentials.admin),
                    ("heartbeat", credentials.heartbeat),
                )
            },
        }
    )


@lab.command()
@_state_option
def down(state: Path | None) -> None:
    """Stop the lab and remove its files."""
    path = state or pointer_path()
    if not path.exists():
        click.echo(f"no lab is up (nothing at {path})", err=True)
        if path.is_symlink():  # a pointer to a lab removed by other means
            path.unlink()
        return
    running = _load(state)
    running.stop()
    pointer = pointer_path()
    if pointer.is_symlink() and not pointer.exists():
        pointer.unlink()
    _emit({"stopped": str(running.state_path)})


@lab.command()
@_state_option
def status(state: Path | None) -> None:
    """Each server's port, liveness, GTID positions and replication threads, as JSON."""
    _emit(_load(state).status())


@lab.command()
@_state_option
@click.option("--replica", help="Which proxied replica (default: the only one).")
@click.option("--delay-ms", type=click.FloatRange(0, 3_600_000), help="Set the one-way delay.")
@click.option(
    "--bandwidth",
    type=click.FloatRange(0, 1e12),
    help="Cap each direction at this many bytes/s (0: lift the cap).",
)
@click.option("--pause", "action", flag_value="pause", help="Stall the link both ways.")
@click.option("--resume", "action", flag_value="resume", help="Deliver what queued up.")
@click.option("--cut", "action", flag_value="cut", help="Drop every open connection.")
def proxy(
    state: Path | None,
    replica: str | None,
    delay_ms: float | None,
    bandwidth: float | None,
    action: str | None,
) -> None:
    """Change a proxied link: delay, bandwidth, pause, resume or cut. Prints the proxy's status."""
    running = _load(state)
    proxied = running.config.proxied
    if replica is None:
        if len(proxied) != 1:
            raise click.UsageError(f"say which --replica; proxied: {list(proxied) or 'none'}")
        replica = proxied[0]
    try:
        control = running.proxy_for(replica)
        if delay_ms is not None:
            control.set_delay(delay_ms / 1000)
        if bandwidth is not None:
            control.set_bandwidth(bandwidth)
        if action == "pause":
            control.pause()
        elif action == "resume":
            control.resume()
        elif action == "cut":
            control.cut()
        _emit(running.status()["proxies"][replica])
    except LagscopeError as exc:
        raise click.ClickException(str(exc)) from exc


def _option_value(text: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


@lab.command()
@_state_option
@click.argument("name", type=click.Choice(sorted(incidents.INCIDENTS)))
@click.option(
    "--hold",
    default=30.0,
    show_default=True,
    type=click.FloatRange(0, 86_400),
    help="Seconds to keep the incident in force before undoing it (Ctrl-C undoes it at once).",
)
@click.option(
    "-o",
    "--option",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="An option of the incident (lab/incidents/), e.g. -o rows=500000 (repeatable).",
)
def incident(state: Path | None, name: str, hold: float, options: tuple[str, ...]) -> None:
    """Make a cause of lag happen on the lab, hold it, undo it (lab/incidents/).

    Prints what it made (the replica, table, blocking session id) as one JSON line when the
    servers show it, and ``{"undone": NAME}`` once undone and every replica has caught up."""
    settings: dict[str, object] = {}
    for item in options:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.UsageError(f"options are KEY=VALUE, not {item!r}")
        settings[key.replace("-", "_")] = _option_value(value)
    running = _load(state)
    try:
        with incidents.incident(running, name, **settings) as made:
            click.echo(json.dumps(made.to_json(), default=str))
            with contextlib.suppress(KeyboardInterrupt):
                time.sleep(hold)  # the incident's chosen duration, not a wait for a state
    except (LagscopeError, TypeError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps({"undone": name}))
