"""The tuning scenario on servers that are not the demo's own lab: the docker-compose ``lab``.

``lagscope scenario --source source=mysql-source:3306 --replica replica1=mysql-replica1:3306@near
--replica replica2=mysql-replica2:3306@far`` waits until the servers answer, registers them as a
cluster in the store (once: a cluster of that name is reused as it is), then runs the write
load and the tuning plan against them as ``lagscope demo`` does against its lab, until SIGTERM.
Replicas are addressed directly (a far replica's delay is on its replication link, not here).
The flavor (MySQL or MariaDB) is read from the first replica and names the variables.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pymysql
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.collectors.connection import ConnectionSpec, open_connection
from lagscope.demo.load import WriteLoad
from lagscope.demo.scenario import Flavor, Phase
from lagscope.demo.scenario_runner import ScenarioRunner, store_annotator, store_figures
from lagscope.errors import InvalidInput, LagscopeError
from lagscope.inventory import instances as inventory
from lagscope.models import Cluster
from lagscope.security.secret_box import SecretBox

_SERVER = re.compile(
    r"(?P<name>[A-Za-z0-9_.-]{1,64})=(?P<host>[^:@\s]+):(?P<port>\d{1,5})(@(?P<region>\S{1,64}))?"
)


@dataclass(frozen=True, slots=True)
class Server:
    name: str
    host: str
    port: int
    region: str = ""


def parse_server(text: str) -> Server:
    """``name=host:port`` or ``name=host:port@region``."""
    match = _SERVER.fullmatch(text.strip())
    if match is None or not 1 <= int(match["port"]) <= 65535:
        raise InvalidInput(f"a server is name=host:port[@region], not {text!r}")
    return Server(match["name"], match["host"], int(match["port"]), match["region"] or "")


@dataclass(frozen=True, slots=True)
class Login:
    user: str
    password: str = ""


def connector(server: Server, login: Login) -> Callable[[], pymysql.connections.Connection[Any]]:
    """New autocommit connections to ``server``; no read timeout (the load blocks on purpose)."""
    spec = ConnectionSpec(
        host=server.host,
        port=server.port,
        user=login.user,
        password=login.password,
        connect_timeout_s=5.0,
        read_timeout_s=None,
    )
    return lambda: open_connection(spec, autocommit=True)


def flavor_of(conn: pymysql.connections.Connection[Any]) -> Flavor:
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@version")
            row = cur.fetchone()
    finally:
        conn.close()
    return "mariadb" if row is not None and "mariadb" in str(row[0]).lower() else "mysql"


def wait_for_servers(
    connects: Sequence[tuple[str, Callable[[], pymysql.connections.Connection[Any]]]],
    timeout_s: float,
    emit: Callable[[str], None] = print,
    stopped: Callable[[], bool] = lambda: False,
) -> None:
    """Until every server answers ``SELECT 1`` (a container may still be initialising)."""
    deadline = time.monotonic() + timeout_s
    for name, connect in connects:
        while True:
            try:
                conn = connect()
                conn.close()
                break
            except pymysql.err.MySQLError as exc:
                if stopped() or time.monotonic() > deadline:
                    raise LagscopeError(
                        f"{name} did not answer within {timeout_s:g} s: {exc}"
                    ) from exc
                emit(f"scenario: waiting for {name}: {exc}")
                time.sleep(2)


def ensure_cluster(
    sessions: sessionmaker[Session],
    box: SecretBox,
    name: str,
    source: Server,
    replicas: Sequence[Server],
    monitor: Login,
    heartbeat: Login | None,
) -> int:
    """The cluster called ``name``: made with the servers if missing, else left as it is."""
    with sessions() as session, session.begin():
        found = session.scalar(select(Cluster).where(Cluster.name == name))
        if found is not None:
            return found.id
        mode = "lagscope" if heartbeat is not None else "off"
        cluster = inventory.create_cluster(session, name, heartbeat_mode=mode)
        if heartbeat is not None:
            inventory.set_heartbeat_writer(
                session, box, cluster, heartbeat.user, heartbeat.password
            )
        for server, role in [(source, "source"), *((r, "replica") for r in replicas)]:
            inventory.add_instance(
                session,
                box,
                cluster,
                server.name,
                server.host,
                server.port,
                monitor.user,
                monitor.password,
                role,
                server.region,
            )
        return cluster.id


@dataclass(frozen=True, slots=True)
class ExternalScenario:
    cluster: str
    source: Server
    replicas: tuple[Server, ...]
    admin: Login
    monitor: Login
    heartbeat: Login | None
    plan: tuple[Phase, ...]
    load_tps: float
    load_threads: int
    loop: bool = False
    wait_s: float = 600.0


def run_external(
    scenario: ExternalScenario,
    sessions: sessionmaker[Session],
    box: SecretBox,
    stopped: Callable[[], bool],
    emit: Callable[[str], None] = print,
) -> None:
    """Register, then load and tune until ``stopped()``; stops what it started either way."""
    servers = [scenario.source, *scenario.replicas]
    connects = {s.name: connector(s, scenario.admin) for s in servers}
    wait_for_servers(list(connects.items()), scenario.wait_s, emit, stopped)
    cluster_id = ensure_cluster(
        sessions,
        box,
        scenario.cluster,
        scenario.source,
        scenario.replicas,
        scenario.monitor,
        scenario.heartbeat,
    )
    flavor = flavor_of(connects[scenario.replicas[0].name]()) if scenario.replicas else "mysql"
    emit(f"scenario: cluster {scenario.cluster!r} (id {cluster_id}), {flavor} replicas")
    load = WriteLoad(
        connects[scenario.source.name],
        threads=scenario.load_threads,
        target_tps=scenario.load_tps,
    )
    runner = ScenarioRunner(
        scenario.plan,
        [r.name for r in scenario.replicas],
        lambda name: connects[name](),
        store_annotator(sessions, cluster_id),
        store_figures(sessions, cluster_id),
        emit=emit,
        loop=scenario.loop,
        flavor=flavor,
    )
    try:
        load.start()
        runner.start()
        while not stopped():
            time.sleep(0.2)
    finally:
        runner.stop()
        load.stop()
