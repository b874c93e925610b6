"""A batch of ticks (ingest/tick_batch.py) on the lab's servers and a real store: every cluster
of the batch gets its tick from one read, and a cluster whose recording fails costs the others
nothing (the batch falls back to one transaction per cluster)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from lagscope.ingest import tick as tick_module
from lagscope.ingest.reader import ClusterReader
from lagscope.ingest.tick import TickOptions
from lagscope.ingest.tick_batch import poll_clusters
from lagscope.inventory import instances as inventory
from lagscope.models import Cluster, InstanceSample, Sample
from lagscope.security.secret_box import store_box

from .api_stack import SECRET, api_server, sqlite_url

pytestmark = pytest.mark.integration


def _clusters(api, lab, box, count: int) -> list[int]:
    user, password = lab.credentials.monitor
    ids = []
    with api.sessions() as session, session.begin():
        for n in range(count):
            cluster = inventory.create_cluster(session, f"batch-{n}")
            for name in ("source", "replica1", "replica2"):
                server = lab.server(name)
                role = "source" if name == "source" else "replica"
                inventory.add_instance(
                    session, box, cluster, name, server.host, server.port, user, password, role
                )
            ids.append(cluster.id)
    return ids


def _counts(api, ids: list[int]) -> dict[int, tuple[int, int]]:
    """Per cluster: instance samples and channel samples stored."""
    with api.sessions() as session:
        out = {}
        for cluster_id in ids:
            cluster = session.get_one(Cluster, cluster_id)
            instance_ids = [i.id for i in cluster.instances]
            channel_ids = [c.id for i in cluster.instances for c in i.channels]
            polled = session.scalar(
                select(func.count())
                .select_from(InstanceSample)
                .where(InstanceSample.instance_id.in_(instance_ids))
            )
            sampled = session.scalar(
                select(func.count()).select_from(Sample).where(Sample.channel_id.in_(channel_ids))
            )
            out[cluster_id] = (polled or 0, sampled or 0)
        return out


def test_a_batch_ticks_every_cluster_and_one_failure_costs_the_others_nothing(
    lab, tmp_path, monkeypatch
):
    with api_server(sqlite_url(tmp_path)) as api:
        box = store_box(api.sessions, SECRET)
        ids = _clusters(api, lab, box, 3)
        reader = ClusterReader(max_threads=12)

        @contextmanager
        def transaction() -> Iterator[Session]:
            with api.sessions() as session, session.begin():
                yield session

        options = TickOptions(worker="test:1")
        try:
            done = poll_clusters(transaction, box, reader, ids, options)
            assert sorted(done) == ids
            assert all(s.samples == 2 and not s.unreachable for s in done.values())
            assert _counts(api, ids) == {i: (3, 2) for i in ids}

            # The second cluster's recording fails: the batch's transaction is rolled back and
            # the others are recorded each on its own, from the same read.
            real = tick_module.record_tick

            def failing(session, cluster, readings, *args, **kwargs):
                if cluster.id == ids[1]:
                    raise RuntimeError("a bug in one cluster's recording")
                return real(session, cluster, readings, *args, **kwargs)

            monkeypatch.setattr(tick_module, "record_tick", failing)
            done = poll_clusters(transaction, box, reader, ids, options)
            assert sorted(done) == [ids[0], ids[2]]
            assert _counts(api, ids) == {ids[0]: (6, 4), ids[1]: (3, 2), ids[2]: (6, 4)}
            with api.sessions() as session:
                ticked = {c.id: c.last_tick_by for c in session.scalars(select(Cluster))}
            assert ticked == {i: "test:1" for i in ids}

            # A cluster whose tick cannot even be prepared is left out of the batch's read.
            monkeypatch.setattr(tick_module, "record_tick", real)
            real_table = tick_module.heartbeat_table

            def broken(cluster):
                if cluster.id == ids[0]:
                    raise RuntimeError("a bug preparing one cluster's tick")
                return real_table(cluster)

            monkeypatch.setattr(tick_module, "heartbeat_table", broken)
            done = poll_clusters(transaction, box, reader, ids, options)
            assert sorted(done) == [ids[1], ids[2]]
            assert _counts(api, ids) == {ids[0]: (6, 4), ids[1]: (6, 4), ids[2]: (9, 6)}
        finally:
            reader.close()
