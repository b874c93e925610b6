"""A poll owner's clusters kept in memory between ticks (ingest/tick_cache.py), on the live lab
and a SQLite store: ticks reuse the graph their last commit left and never bump the cluster's
revision; an edit made elsewhere (the inventory, as the API does) bumps it and the next tick
reloads and obeys it; a tick whose transaction fails leaves nothing in memory."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from lagscope.db import make_engine, make_session_factory
from lagscope.ingest.reader import ClusterReader
from lagscope.ingest.tick import TickOptions
from lagscope.ingest.tick_batch import poll_clusters
from lagscope.ingest.tick_cache import TickCache
from lagscope.inventory import instances as inventory
from lagscope.lab import Lab
from lagscope.models import Cluster, Instance, InstanceSample
from lagscope.security.secret_box import store_box
from lagscope.store_setup import upgrade

pytestmark = pytest.mark.integration

SECRET = "tick-cache-test-secret-7a2c9e4b1d6f3058-Rz"


class Refused(Exception):
    pass


def test_ticks_reuse_the_cluster_in_memory_and_reload_it_after_an_edit(
    lab: Lab, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    box = store_box(sessions, SECRET)
    user, password = lab.credentials.monitor
    with sessions() as s, s.begin():
        cluster = inventory.create_cluster(s, "cached")
        for name in ("source", "replica1", "replica2"):
            server = lab.server(name)
            role = "source" if name == "source" else "replica"
            inventory.add_instance(
                s, box, cluster, name, server.host, server.port, user, password, role
            )
        cluster_id = cluster.id

    @contextmanager
    def transaction() -> Iterator[Session]:
        with sessions() as session, session.begin():
            yield session

    def revision() -> int:
        with sessions() as s:
            found = s.scalar(select(Cluster.revision).where(Cluster.id == cluster_id))
        assert found is not None
        return found

    def polls_of(name: str) -> int:
        with sessions() as s:
            return int(
                s.scalar(
                    select(func.count())
                    .select_from(InstanceSample)
                    .join(Instance)
                    .where(Instance.name == name)
                )
                or 0
            )

    reader = ClusterReader(max_threads=8)
    cache = TickCache()
    options = TickOptions()
    try:
        at_start = revision()
        for _ in range(5):
            assert cluster_id in poll_clusters(
                transaction, box, reader, [cluster_id], options, cache
            )
        assert (cache.loads, cache.hits) == (1, 4)
        assert revision() == at_start, "a tick's own writes do not bump the revision"
        assert polls_of("replica2") == 5

        # An edit made elsewhere: replica2 disabled, as PATCH /instances/{id} does.
        with sessions() as s, s.begin():
            replica2 = s.scalar(select(Instance).where(Instance.name == "replica2"))
            assert replica2 is not None
            inventory.update_instance(s, box, replica2, {"enabled": False})
        assert revision() > at_start
        poll_clusters(transaction, box, reader, [cluster_id], options, cache)
        assert cache.loads == 2, "the edited cluster is reloaded"
        assert polls_of("replica2") == 5, "the disabled instance is no longer polled"
        assert polls_of("source") == 6

        # A tick whose transaction fails keeps nothing in memory: the next one reloads.
        @contextmanager
        def refusing() -> Iterator[Session]:
            with sessions() as session, session.begin():
                yield session
                raise Refused

        # (the batch, then the cluster on its own: both refused, nothing recorded)
        assert poll_clusters(refusing, box, reader, [cluster_id], options, cache) == {}
        assert cache.ids() == []
        assert polls_of("source") == 6
        poll_clusters(transaction, box, reader, [cluster_id], options, cache)
        assert cache.loads == 3 and polls_of("source") == 7  # taken out, so loaded again
    finally:
        reader.close()
        engine.dispose()
