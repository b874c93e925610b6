"""Test data builders: a migrated store, a cluster with its instances, the secret box.

For tests that need rows, not a running pipeline: the instances are registered on loopback
addresses nobody polls, so their credentials are sealed with a box whose key and salt are
fixed here (nothing ever decrypts them). A test that *does* decrypt (key rotation, the
worker's reads) builds its box from the store's own salt instead (``store_box``).

    with sqlite_store(tmp_path) as sessions, sessions() as session, session.begin():
        cluster, named = make_cluster(session, "c", [("src", 3306, "source"), ("r1", 3307)])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from sqlalchemy import create_engine
from sqlalchemy.orm import Session, sessionmaker

from lagscope.db import make_engine, make_session_factory
from lagscope.inventory import instances as inventory
from lagscope.models import Base, Cluster, Instance
from lagscope.security.secret_box import SecretBox
from lagscope.store_setup import upgrade

# Any 16+ bytes: the box only seals credentials of instances that are never polled.
UNPOLLED_SALT = b"unpolled-salt"


def secret_box(key: str = "k") -> SecretBox:
    """A box for the credentials of instances no test polls (fixed salt, any key)."""
    return SecretBox(key, UNPOLLED_SALT)


@contextmanager
def sqlite_store(directory: Path) -> Iterator[sessionmaker[Session]]:
    """A SQLite store in ``directory/store.db`` migrated by Alembic (not ``create_all``, so
    the migrations are what the test runs on); its engine is disposed on the way out."""
    url = f"sqlite:///{directory / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    try:
        yield make_session_factory(engine)
    finally:
        engine.dispose()


@contextmanager
def sqlite_file(path: Path) -> Iterator[sessionmaker[Session]]:
    """A SQLite store at ``path``, its tables made by ``create_all`` (no migrations: quick
    enough for the unit suite), engine as the services make it (WAL, foreign keys on): a file,
    unlike ``sqlite://``, gives each session its own connection, as two workers have."""
    engine = make_engine(f"sqlite:///{path}")
    Base.metadata.create_all(engine)
    try:
        yield make_session_factory(engine)
    finally:
        engine.dispose()


def memory_session() -> Iterator[Session]:
    """A session on a new in-memory store, tables by ``create_all``; for a fixture to yield
    from (the engine is disposed when the generator closes)."""
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        yield session
    engine.dispose()


class InstanceSpec(NamedTuple):
    """One instance to register: ``(name, port)``, optionally with role and region."""

    name: str
    port: int
    role: str = "replica"
    region: str = ""


def make_cluster(
    session: Session,
    name: str,
    instances: Iterable[tuple[Any, ...]] = (),
    *,
    box: SecretBox | None = None,
    host: str = "127.0.0.1",
    user: str = "m",
    password: str = "p",
    **cluster_options: Any,
) -> tuple[Cluster, dict[str, Instance]]:
    """A cluster (``inventory.create_cluster`` with ``cluster_options``) and its instances,
    added in the order given (so their ids follow that order); the instances by name."""
    box = box or secret_box()
    cluster = inventory.create_cluster(session, name, **cluster_options)
    named: dict[str, Instance] = {}
    for given in instances:
        name_, port, role, region = InstanceSpec(*given)
        named[name_] = inventory.add_instance(
            session, box, cluster, name_, host, port, user, password, role, region
        )
    return cluster, named
