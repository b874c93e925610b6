"""The demo's store and cluster: a fresh SQLite store marked as the demo's (demo mode runs only
on one), the lab's three servers registered with the monitor's and heartbeat writer's logins,
and the alert rule that sends to the API's own inbox.
"""

from __future__ import annotations

from collections.abc import Mapping

from lagscope.db import make_engine, make_session_factory
from lagscope.demo.alerting import seed_alerting
from lagscope.inventory import instances as inventory
from lagscope.lab import Lab
from lagscope.security.demo_store import mark_demo_store
from lagscope.security.secret_box import store_box

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


def mark_store(url: str) -> None:
    engine = make_engine(url)
    try:
        with make_session_factory(engine)() as session, session.begin():
            mark_demo_store(session)
    finally:
        engine.dispose()


def register_lab(url: str, secret: str, lab: Lab, inbox: str, allow: str) -> int:
    servers = {name: (lab.server(name).host, lab.server(name).port) for name, _, _ in TOPOLOGY}
    return register_demo(
        url, secret, servers, lab.credentials.monitor, lab.credentials.heartbeat, inbox, allow
    )
